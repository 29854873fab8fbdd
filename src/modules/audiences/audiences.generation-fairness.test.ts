import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { FakeOpenAI } from '../../../test/fakes/openai-server.js';
import { useTestApp } from '../../../test/harness.js';
import { versionGeneration } from './audiences.generation-worker.js';
import { modelWriterSettings } from './audiences.generation.js';
import { modelWriter } from './audiences.model-writer.js';
import { createVersion } from './audiences.versions.js';

/**
 * Provider calls under load: the concurrency limit holds across processes (two workers here,
 * each allowed the whole limit), and a tenant with a large backlog never makes another tenant's
 * single version wait for it: tenants take turns for every slot that frees.
 */
const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;
let fake: FakeOpenAI;

const LIMIT = 2;
const CALL_MS = 250;
const copy = {
  hero: { eyebrow: '', headline: 'A page', subheadline: 'For you.' },
  sections: [],
  actions: [],
  seo: { title: 'A page', description: 'For you.' },
};

beforeAll(async () => {
  fake = await FakeOpenAI.start();
  fake.otherwise = { content: copy, delayMs: CALL_MS };
});
afterAll(() => fake.close());

/**
 * A worker process: its own client and worker, allowed the whole limit by itself (strictly: no
 * claims beyond the calls, unless `settings` says otherwise).
 */
function workerProcess(settings = modelWriterSettings(LIMIT, 0)) {
  const client = fake.client(LIMIT);
  return versionGeneration(
    { database: t.database, clock: t.clock, logger: pino({ level: 'silent' }) },
    {
      generator: modelWriter(client),
      settings: { ...settings, pollMs: 20 },
    },
  ).worker();
}

const runnable = async () =>
  Number(
    (
      await t.database.kysely
        .selectFrom('audience_versions')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', 'in', ['queued', 'pending', 'processing'])
        .executeTakeFirstOrThrow()
    ).n,
  );

async function until(condition: () => Promise<boolean> | boolean, timeoutMs = 100_000) {
  const end = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

it("keeps to the limit across processes, and one tenant's backlog never holds up another tenant's version", async () => {
  const backlog = 12;
  const alicePage = await makePage(alice.scope, t.clock, { pageContext: 'ALICE-BRIEF' });
  for (let i = 0; i < backlog; i++) {
    const { audienceId } = await makeAudience(alice.scope, t.clock, { pageId: alicePage, personRouteKey: `a-${i}` });
    await createVersion(alice.scope, t.clock, alicePage, audienceId, {});
  }
  const bobPage = await makePage(bob.scope, t.clock, { pageContext: 'BOB-BRIEF' });
  const { audienceId: bobAudience } = await makeAudience(bob.scope, t.clock, { pageId: bobPage });

  const workers = [workerProcess(), workerProcess()];
  for (const worker of workers) worker.start();
  try {
    // Alice's import is under way, the limit in use, when Bob edits his page
    await until(() => fake.requests.length >= 3);
    const startedBefore = fake.requests.length;
    await createVersion(bob.scope, t.clock, bobPage, bobAudience, {});
    await until(async () => (await runnable()) === 0);

    const order = fake.requests.map((r) => (JSON.stringify(r.body.messages).includes('BOB-BRIEF') ? 'bob' : 'alice'));
    expect(order.filter((who) => who === 'alice')).toHaveLength(backlog);
    // Bob's call is the next to start once a slot frees (aside from a claim each process may have had under way)
    expect(order.indexOf('bob')).toBeLessThanOrEqual(startedBefore + 2);
    expect(fake.maxInFlight).toBe(LIMIT);
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
  }
}, 120_000); // real workers and a real server: minutes on a loaded machine

it('claims LLM_CLAIM_AHEAD versions beyond the calls, their inputs read, and still never makes more calls than LLM_CONCURRENCY', async () => {
  const versions = 8;
  const ahead = 1;
  const page = await makePage(alice.scope, t.clock, { pageContext: 'AHEAD-BRIEF' });
  for (let i = 0; i < versions; i++) {
    const { audienceId } = await makeAudience(alice.scope, t.clock, { pageId: page, personRouteKey: `ahead-${i}` });
    await createVersion(alice.scope, t.clock, page, audienceId, {});
  }
  const processing = async () =>
    Number(
      (
        await t.database.kysely
          .selectFrom('audience_versions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('status', '=', 'processing')
          .executeTakeFirstOrThrow()
      ).n,
    );
  const callsBefore = fake.requests.length;
  fake.maxInFlight = 0;
  const worker = workerProcess(modelWriterSettings(LIMIT, ahead));
  let mostProcessing = 0;
  worker.start();
  try {
    await until(async () => {
      mostProcessing = Math.max(mostProcessing, await processing());
      return (await runnable()) === 0;
    });
  } finally {
    await worker.stop();
  }
  expect(fake.requests.length - callsBefore).toBe(versions);
  expect(fake.maxInFlight).toBe(LIMIT);
  expect(mostProcessing).toBe(LIMIT + ahead);
  // unset: a tenth of the calls, rounded up; 0: the claims are the calls
  expect(modelWriterSettings(50, null).maxRunning).toBe(55);
  expect(modelWriterSettings(4, null).maxRunning).toBe(5);
  expect(modelWriterSettings(4, 0).maxRunning).toBe(4);
}, 120_000);
