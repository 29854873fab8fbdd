#!/usr/bin/env node
// Summarizes a V8 CPU profile (node --cpu-prof) of the service under load: self time grouped by
// where the code lives, and the top functions, in µs per request when the request count is given.
//   node bench/profile-summary.mjs PROFILE.cpuprofile [REQUESTS] [TOP] [WINDOW_SECONDS]
// With WINDOW_SECONDS, only the busiest window of that length counts (the load, not start-up).
import fs from 'node:fs';

const [file, requestsArg, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/profile-summary.mjs PROFILE.cpuprofile [REQUESTS] [TOP]');
  process.exit(2);
}
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const requests = Number(requestsArg ?? 0);
const top = Number(topArg ?? 25);
const windowUs = Number(process.argv[5] ?? 0) * 1e6;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
let from = 0;
let to = profile.samples.length;
if (windowUs > 0) {
  // The window of WINDOW_SECONDS with the most non-idle time: the load, without start-up.
  const at = [];
  let t = 0;
  for (let i = 0; i < dt.length; i++) at.push((t += dt[i]));
  let best = -1;
  let busyIn = 0;
  for (let lo = 0, hi = 0; hi < at.length; hi++) {
    if (!idleIds.has(profile.samples[hi])) busyIn += dt[hi];
    while (at[hi] - at[lo] > windowUs) {
      if (!idleIds.has(profile.samples[lo])) busyIn -= dt[lo];
      lo++;
    }
    if (busyIn > best) [best, from, to] = [busyIn, lo, hi + 1];
  }
}
for (let i = from; i < to; i++) {
  const id = profile.samples[i];
  self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);

function category(node) {
  const { functionName, url } = node.callFrame;
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'gc';
  if (functionName === '(program)') return 'program (native, outside JS)';
  if (/better-sqlite3/.test(url)) return 'better-sqlite3 (JS side)';
  if (url === '' && /^(all|run|get|iterate|prepare|exec)$/.test(functionName)) return 'sqlite (native call)';
  const m = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (m) return m[1];
  if (/\/dist\/|\/src\//.test(url)) {
    const p = url.match(/\/(?:dist|src)\/(.*)$/)[1];
    return `app: ${p
      .split('/')
      .slice(0, p.startsWith('modules/') ? 2 : 1)
      .join('/')}`;
  }
  if (url.startsWith('node:')) return `node: ${url.slice(5).split('/')[0]}`;
  if (url === '') return `native: ${functionName || '(anonymous)'}`;
  return url;
}

const groups = new Map();
const functions = new Map();
for (const [id, us] of self) {
  const node = byId.get(id);
  const cat = category(node);
  groups.set(cat, (groups.get(cat) ?? 0) + us);
  const { functionName, url, lineNumber } = node.callFrame;
  const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${lineNumber + 1}`;
  functions.set(key, (functions.get(key) ?? 0) + us);
}
const fmt = (us) =>
  `${(us / 1000).toFixed(0).padStart(7)} ms ${((us / total) * 100).toFixed(1).padStart(5)}%${
    requests ? ` ${(us / requests).toFixed(1).padStart(7)} µs/req` : ''
  }`;
const busy = total - (groups.get('idle') ?? 0);
console.log(
  `profile: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy${requests ? `, ${requests} requests: ${(busy / requests).toFixed(1)} µs busy/req` : ''}`,
);
console.log('\nself time by place:');
for (const [cat, us] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${fmt(us)}  ${cat}`);
console.log(`\ntop ${top} functions (self time):`);
for (const [fn, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${fmt(us)}  ${fn}`);
