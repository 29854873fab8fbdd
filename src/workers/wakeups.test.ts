import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, ENGINE, type TestDatabase } from '../../test/harness.js';
import { CrossProcessWakeups } from './wakeups.js';

describe.runIf(ENGINE === 'postgres')('wake-ups across processes (LISTEN/NOTIFY)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.cleanup());

  it('wakes the workers of the other processes at once, not the publisher', async () => {
    const logger = pino({ level: 'silent' });
    const publisher = new CrossProcessWakeups(db, logger, 'a');
    const other = new CrossProcessWakeups(db, logger, 'b');
    const heardByPublisher: string[] = [];
    const heardByOther: string[] = [];
    await publisher.start((channel) => heardByPublisher.push(channel));
    await other.start((channel) => heardByOther.push(channel));
    try {
      publisher.publish('events');
      publisher.publish('events'); // coalesced within one turn
      publisher.publish('audience-versions');
      const deadline = Date.now() + 5_000;
      while (heardByOther.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(heardByOther.sort()).toEqual(['audience-versions', 'events']);
      expect(heardByPublisher).toEqual([]);
    } finally {
      await publisher.stop();
      await other.stop();
    }
  });

  it('publishes without listening (the CLI), and sends what is still waiting when it stops', async () => {
    const logger = pino({ level: 'silent' });
    const cli = new CrossProcessWakeups(db, logger, 'cli');
    const server = new CrossProcessWakeups(db, logger, 'server');
    const heard: string[] = [];
    await server.start((channel) => heard.push(channel));
    await cli.start();
    try {
      cli.publish('audience-versions');
      await cli.stop(); // the CLI exits right after its command
      const deadline = Date.now() + 5_000;
      while (heard.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(heard).toEqual(['audience-versions']);
    } finally {
      await server.stop();
    }
  });
});
