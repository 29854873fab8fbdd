#!/usr/bin/env node
// How long a write of the request thread waits for SQLite's write lock while another thread of the
// process commits transactions one after the other (docs/performance.md, "the ingest on a thread
// of its own"): the thread writes `ROWS` rows per transaction (argument, default 50) with one
// event-loop turn between them; the main thread makes ~75 autocommit upserts a second (DailyCap's
// blocks under a start flood). Both connections use the service's pragmas (WAL,
// synchronous=FULL, busy_timeout=5000): better-sqlite3 waits for the lock synchronously, in
// SQLite's busy handler.
//   node bench/sqlite-two-writers.mjs [ROWS]
import fs from 'node:fs';
import os from 'node:os';
import { setImmediate } from 'node:timers';
import path from 'node:path';
import { isMainThread, Worker, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const open = (file) => {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  return db;
};

if (isMainThread) {
  const rows = Number(process.argv[2] ?? 50);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-two-writers-'));
  const file = path.join(dir, 'bench.sqlite');
  const db = open(file);
  db.exec('create table t (id integer primary key, v text); create table c (k text primary key, n integer)');
  const thread = new Worker(new URL(import.meta.url), { workerData: { file, rows } });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const upsert = db.prepare("insert into c values ('a', 1) on conflict (k) do update set n = n + 1");
  const waits = [];
  for (const end = Date.now() + 4000; Date.now() < end;) {
    const began = performance.now();
    upsert.run();
    waits.push(performance.now() - began);
    await new Promise((resolve) => setTimeout(resolve, 13));
  }
  await thread.terminate();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  waits.sort((a, b) => a - b);
  const at = (p) => waits[Math.floor(p * (waits.length - 1))].toFixed(2);
  console.log(
    `${rows} rows per transaction on the other thread: ${waits.length} writes of the main thread, ` +
      `wait p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`,
  );
} else {
  const db = open(workerData.file);
  const insert = db.prepare('insert into t (v) values (?)');
  const transaction = db.transaction((n) => {
    for (let i = 0; i < n; i++) insert.run('x'.repeat(300));
  });
  const loop = () => {
    transaction(workerData.rows);
    setImmediate(loop);
  };
  loop();
}
