#!/usr/bin/env node
// Runs the whole suite on SQLite, then again on PostgreSQL when TEST_DATABASE_URL is set.
// Extra arguments go to vitest (e.g. `npm test -- src/modules/pages`).
// At the end it repeats what failed on each engine, so a long log (CI keeps only its tail) still
// names the failing tests.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const extra = process.argv.slice(2);
const engines = ['sqlite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];
const results = [];
for (const engine of engines) {
  console.log(`\n=== test suite on ${engine}, Node ${process.version} ===\n`);
  const report = path.join(os.tmpdir(), `vitest-${engine}-${process.pid}.json`);
  const run = spawnSync(
    'npx',
    ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...extra],
    { stdio: 'inherit', env: { ...process.env, TEST_ENGINE: engine } },
  );
  results.push({ engine, ok: run.status === 0, failures: failuresIn(report) });
  fs.rmSync(report, { force: true });
}
if (!process.env.TEST_DATABASE_URL) console.log('\n(TEST_DATABASE_URL is not set: PostgreSQL was skipped.)');
for (const { engine, ok, failures } of results) {
  if (ok) continue;
  console.log(`\nFailed on ${engine}:`);
  for (const line of failures.length > 0
    ? failures
    : ['(no test failed: see the run above for an error outside a test)']) {
    console.log(`  - ${line}`);
  }
}
console.log(
  `\nNode ${process.version}: ${results.map((r) => `${r.engine}: ${r.ok ? 'passed' : 'FAILED'}`).join(', ')}`,
);
process.exit(results.every((r) => r.ok) ? 0 : 1);

/** "file > test: first line of the error", for each failed test (or file that failed to run). */
function failuresIn(report) {
  let json;
  try {
    json = JSON.parse(fs.readFileSync(report, 'utf8'));
  } catch {
    return [];
  }
  const firstLine = (text) =>
    String(text ?? '')
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.slice(0, 300) ?? '';
  const lines = [];
  for (const file of json.testResults ?? []) {
    const name = path.relative(process.cwd(), file.name);
    const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const t of failed) lines.push(`${name} > ${t.fullName}: ${firstLine(t.failureMessages?.[0])}`);
    if (failed.length === 0 && file.status === 'failed') lines.push(`${name}: ${firstLine(file.message)}`);
  }
  return lines;
}
