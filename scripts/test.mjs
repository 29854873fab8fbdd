#!/usr/bin/env node
// Runs the whole suite on SQLite, then again on PostgreSQL when TEST_DATABASE_URL is set.
// Extra arguments go to vitest (e.g. `npm test -- src/modules/pages`).
import { spawnSync } from 'node:child_process';

const extra = process.argv.slice(2);
const engines = ['sqlite', ...(process.env.TEST_DATABASE_URL ? ['postgres'] : [])];
const results = [];
for (const engine of engines) {
  console.log(`\n=== test suite on ${engine}, Node ${process.version} ===\n`);
  const run = spawnSync('npx', ['vitest', 'run', ...extra], {
    stdio: 'inherit',
    env: { ...process.env, TEST_ENGINE: engine },
  });
  results.push({ engine, ok: run.status === 0 });
}
if (!process.env.TEST_DATABASE_URL) console.log('\n(TEST_DATABASE_URL is not set: PostgreSQL was skipped.)');
const failed = results.filter((r) => !r.ok);
console.log(
  `\nNode ${process.version}: ${results.map((r) => `${r.engine}: ${r.ok ? 'passed' : 'FAILED'}`).join(', ')}`,
);
process.exit(failed.length === 0 ? 0 : 1);
