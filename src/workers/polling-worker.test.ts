import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { pollingWorker } from './polling-worker.js';

/** A worker whose one tick throws `error`; resolves with the log lines of that tick. */
async function logOfFailingTick(error: unknown): Promise<{ level: number; msg: string; worker: string }[]> {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  let ticked!: () => void;
  const done = new Promise<void>((resolve) => (ticked = resolve));
  const worker = pollingWorker({
    name: 'test-worker',
    intervalMs: 60_000,
    logger,
    tick: () => {
      setImmediate(ticked);
      return Promise.reject(error);
    },
  });
  worker.start();
  await done;
  await worker.stop();
  return lines.map((line) => JSON.parse(line) as { level: number; msg: string; worker: string });
}

/** The error better-sqlite3 throws when another connection holds the write lock past the busy timeout. */
function realBusyError(): unknown {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-busy-'));
  const file = path.join(dir, 'busy.sqlite');
  const holder = new BetterSqlite3(file);
  holder.pragma('journal_mode = WAL');
  const waiter = new BetterSqlite3(file);
  waiter.pragma('busy_timeout = 0');
  holder.exec('begin immediate');
  try {
    waiter.exec('begin immediate');
    return null;
  } catch (err) {
    return err;
  } finally {
    holder.exec('rollback');
    holder.close();
    waiter.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('a polling worker whose tick fails', () => {
  it('warns when the database was busy with another writer, and logs any other failure as an error', async () => {
    const busy = realBusyError();
    expect(busy).toMatchObject({ code: 'SQLITE_BUSY' });
    const [warning] = await logOfFailingTick(busy);
    expect(warning).toMatchObject({ level: 40, worker: 'test-worker' });
    expect(warning!.msg).toMatch(/busy/);

    const [error] = await logOfFailingTick(new Error('the provider answered 500'));
    expect(error).toMatchObject({ level: 50, worker: 'test-worker', msg: 'worker tick failed' });
  });
});
