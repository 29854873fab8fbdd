// Bytes of a sampling heap profile (bench/heap-sampler.mjs) by the function that allocated them,
// and by the last six frames of the stack: `node bench/heap-summary.mjs FILE [TOP]`.
import fs from 'node:fs';

const [file, top = '25'] = process.argv.slice(2);
const { head } = JSON.parse(fs.readFileSync(file, 'utf8'));
const byFunction = new Map();
const byStack = new Map();
let total = 0;

function frameName({ functionName, url, lineNumber }) {
  const where = url.replace(/.*node_modules\//, '').replace(/.*\/dist\//, 'dist/');
  return `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
}

function walk(node, stack) {
  const path = [...stack, frameName(node.callFrame)];
  if (node.selfSize > 0) {
    const name = path[path.length - 1];
    byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
    const key = path.slice(-6).reverse().join(' < ');
    byStack.set(key, (byStack.get(key) ?? 0) + node.selfSize);
    total += node.selfSize;
  }
  for (const child of node.children) walk(child, path);
}
walk(head, []);

const mb = (bytes) => `${(bytes / 1e6).toFixed(2).padStart(8)} MB`;
const largest = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(top));
console.log(`${mb(total)} sampled`);
for (const [name, bytes] of largest(byFunction))
  console.log(`${mb(bytes)} ${((100 * bytes) / total).toFixed(1).padStart(5)} %  ${name}`);
console.log('\nby stack (innermost first):');
for (const [stack, bytes] of largest(byStack)) console.log(`${mb(bytes)}  ${stack}`);
