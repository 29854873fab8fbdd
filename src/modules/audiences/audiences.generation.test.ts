import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { ENGINE, useTestApp } from '../../../test/harness.js';
import { done, retryDelayMs } from '../../workers/leased-jobs.js';
import { GENERATION_SETTINGS, type GenerationOptions } from './audiences.generation.js';
import { versionGeneration } from './audiences.generation-worker.js';
import type { VersionGenerator } from './audiences.generator.js';
import { builtinWriter } from './audiences.builtin-writer.js';
import { createVersion, publishPageDrafts } from './audiences.versions.js';

const t = useTestApp({ tenants: ['Alice'] });
const [alice] = t.tenants;

const generation = (options: GenerationOptions = {}) =>
  versionGeneration({ database: t.database, clock: t.clock, logger: pino({ level: 'silent' }) }, options);

/** Runs the worker until the queue has nothing runnable now. */
const drain = (options: GenerationOptions = {}) => generation(options).drain();

const LEASE_MS = GENERATION_SETTINGS.leaseMs;

const versionRow = (id: string) =>
  alice.scope.selectFrom('audience_versions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

const eventsOf = (versionId: string) =>
  alice.scope
    .selectFrom('events')
    .select(['type', 'data'])
    .orderBy('id')
    .execute()
    .then((rows) => rows.filter((r) => (r.data as { versionId: string }).versionId === versionId));

async function newVersion(pageId: string, audienceId: string, operationKey?: string) {
  const { version } = await createVersion(alice.scope, t.clock, pageId, audienceId, { operationKey });
  return version;
}

describe('the generation worker', () => {
  it('generates a queued version into a draft on a draft page, retiring the older draft', async () => {
    await drain();
    const {
      pageId,
      audienceId,
      versionId: v1,
    } = await makeAudience(alice.scope, t.clock, {
      actionUrlOverride: 'https://example.com/for-acme',
    });
    const v2 = await newVersion(pageId, audienceId);
    t.clock.advance(3000);
    expect(await drain()).toEqual([{ key: v2.versionId, outcome: 'completed', completion: 'draft' }]);

    const row = await versionRow(v2.versionId);
    expect(row).toMatchObject({
      status: 'draft',
      became_draft_at: t.clock.now().toISOString(),
      queue_duration_ms: 3000,
      attempts: 1,
      available_at: null,
      lease_token: null,
      published_at: null,
    });
    expect(row.artifact).toMatchObject({
      generator: 'builtin-writer-v1',
      contentType: 'application/vnd.audience-page.v2+json',
    });
    const content = (row.artifact as { content: { actions: { url: string }[]; audienceName: string } }).content;
    expect(content.actions[0]!.url).toBe('https://example.com/for-acme');
    expect(content.audienceName).toBe('Acme Corp · VP Sales');
    // v1 stays published: the page is a draft
    expect((await versionRow(v1)).status).toBe('published');

    const v3 = await newVersion(pageId, audienceId);
    await drain();
    expect(await versionRow(v2.versionId)).toMatchObject({
      status: 'archived',
      archived_at: t.clock.now().toISOString(),
      obsolete_at: null,
    });
    expect((await versionRow(v3.versionId)).status).toBe('draft');
    const events = await eventsOf(v3.versionId);
    expect(events.map((e) => e.type)).toEqual(['page.version.created', 'page.version.processed']);
    expect(events[1]!.data).toMatchObject({ status: 'draft', outcome: 'draft', pageId, audienceId, versionNumber: 3 });
  });

  it('renders deterministically: the same input gives the same artifact', async () => {
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    const a = await newVersion(pageId, audienceId);
    await drain();
    const b = await newVersion(pageId, audienceId);
    await drain();
    const [ra, rb] = [await versionRow(a.versionId), await versionRow(b.versionId)];
    const strip = (x: unknown) => ({ ...(x as { content: object }).content, versionNumber: 0 });
    expect(strip(rb.artifact)).toEqual(strip(ra.artifact));
  });

  it('publishes at once on a published page and retires the live version (obsoleteAt)', async () => {
    const pageId = await makePage(alice.scope, t.clock, { status: 'published' });
    const { audienceId, versionId: v1 } = await makeAudience(alice.scope, t.clock, { pageId });
    const v2 = await newVersion(pageId, audienceId);
    t.clock.advance(1000);
    expect(await drain()).toEqual([{ key: v2.versionId, outcome: 'completed', completion: 'published' }]);
    const now = t.clock.now().toISOString();
    expect(await versionRow(v1)).toMatchObject({ status: 'archived', obsolete_at: now, archived_at: now });
    expect(await versionRow(v2.versionId)).toMatchObject({ status: 'published', published_at: now });
    const published = (await eventsOf(v2.versionId)).find((e) => e.type === 'page.version.published');
    expect(published!.data).toMatchObject({ status: 'published', previousVersionId: v1 });
    const list = await t.request(alice, { method: 'GET', url: `/v0/pages/${pageId}/audiences` });
    expect(list.json().items[0].publishedVersion.versionId).toBe(v2.versionId);
  });

  it('publishes the drafts of a page when the operator publishes it', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const { audienceId } = await makeAudience(alice.scope, t.clock, { pageId });
    const v2 = await newVersion(pageId, audienceId);
    await drain();
    expect(await publishPageDrafts(alice.scope, t.clock, pageId)).toEqual([v2.versionId]);
    expect((await versionRow(v2.versionId)).status).toBe('published');
    expect(await publishPageDrafts(alice.scope, t.clock, pageId)).toEqual([]);
  });

  it('takes over a version whose worker crashed, once its lease has run out', async () => {
    await drain();
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    const v = await newVersion(pageId, audienceId);
    // a worker claims it and dies before completing
    expect(await generation().claim(1)).toMatchObject([{ id: v.versionId }]);
    expect((await versionRow(v.versionId)).status).toBe('processing');
    t.clock.advance(LEASE_MS - 1);
    expect(await generation().runDue(1)).toEqual([]);
    t.clock.advance(1);
    expect(await drain()).toEqual([{ key: v.versionId, outcome: 'completed', completion: 'draft' }]);
    expect(await versionRow(v.versionId)).toMatchObject({ status: 'draft', attempts: 2, queue_duration_ms: 0 });
  });

  it("holds a version as long as the generator's longest run, plus slack (a model writer's calls)", async () => {
    await drain();
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    const v = await newVersion(pageId, audienceId);
    const slow: VersionGenerator = {
      name: 'slow',
      maxRunMs: 120_000,
      generate: (input) => builtinWriter.generate(input),
    };
    expect(await generation({ generator: slow }).claim(1)).toMatchObject([{ id: v.versionId }]);
    const leaseEnds = new Date(t.clock.now().getTime() + 130_000).toISOString();
    expect(await versionRow(v.versionId)).toMatchObject({ status: 'processing', available_at: leaseEnds });
    t.clock.advance(LEASE_MS);
    expect(await generation({ generator: slow }).runDue(1)).toEqual([]);
    t.clock.advance(130_000 - LEASE_MS);
    expect(await drain({ generator: slow })).toEqual([{ key: v.versionId, outcome: 'completed', completion: 'draft' }]);
  });

  it('ignores the late result of a worker whose lease was taken over', async () => {
    await drain();
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    const v = await newVersion(pageId, audienceId);
    const held: { release?: () => void } = {};
    const slow: VersionGenerator = {
      name: 'slow',
      generate: (input) =>
        new Promise((resolve) => {
          held.release = () => resolve(builtinWriter.generate(input));
        }),
    };
    const late = generation({ generator: slow }).runDue(1);
    while (held.release === undefined) await new Promise((r) => setTimeout(r, 5)); // it claimed and is generating
    t.clock.advance(LEASE_MS);
    expect(await generation().runDue(1)).toEqual([{ key: v.versionId, outcome: 'completed', completion: 'draft' }]);
    const after = await versionRow(v.versionId);
    held.release();
    expect(await late).toEqual([{ key: v.versionId, outcome: 'stale' }]);
    expect(await versionRow(v.versionId)).toEqual(after);
  });

  it('retries a failed generation later (pending), then cancels it visibly, never blocking the queue', async () => {
    await drain();
    const a = await makeAudience(alice.scope, t.clock);
    const b = await makeAudience(alice.scope, t.clock);
    const bad = await newVersion(a.pageId, a.audienceId);
    const generator: VersionGenerator = {
      name: 'picky',
      generate: (input) =>
        input.audience.audienceId === a.audienceId
          ? Promise.reject(new Error('model unavailable'))
          : builtinWriter.generate(input),
    };
    expect(await drain({ generator })).toEqual([{ key: bad.versionId, outcome: 'retried' }]);
    expect(await versionRow(bad.versionId)).toMatchObject({
      status: 'pending',
      failure_reason: 'model unavailable',
      attempts: 1,
    });
    // the queue goes on meanwhile
    const good = await newVersion(b.pageId, b.audienceId);
    expect(await drain({ generator })).toEqual([{ key: good.versionId, outcome: 'completed', completion: 'draft' }]);

    t.clock.advance(retryDelayMs(1));
    expect(await drain({ generator })).toEqual([{ key: bad.versionId, outcome: 'retried' }]);
    t.clock.advance(retryDelayMs(2));
    expect(await drain({ generator })).toEqual([{ key: bad.versionId, outcome: 'failed' }]);
    expect(await versionRow(bad.versionId)).toMatchObject({
      status: 'cancelled',
      cancelled_at: t.clock.now().toISOString(),
      failure_reason: 'model unavailable',
      attempts: 3,
      available_at: null,
    });
    const processed = (await eventsOf(bad.versionId)).find((e) => e.type === 'page.version.processed');
    expect(processed!.data).toMatchObject({
      status: 'cancelled',
      outcome: 'failed',
      failure: { reason: 'model unavailable', attempts: 3 },
    });
    const [listed] = (await t.request(alice, { method: 'GET', url: `/v0/pages/${a.pageId}/audiences` })).json().items;
    expect(listed.status).toBe('cancelled');
    expect(listed.publishedVersion.versionNumber).toBe(1);
  });

  it('cancels a version being generated when a newer one is created; its result is dropped', async () => {
    await drain();
    const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
    const v2 = await newVersion(pageId, audienceId);
    const [claimed] = await generation().claim(1);
    expect(claimed).toMatchObject({ id: v2.versionId });
    const v3 = await newVersion(pageId, audienceId);
    expect((await versionRow(v2.versionId)).status).toBe('cancelled');
    const late = await generation().finish(
      claimed!,
      done({ generator: 'x', artifact: { contentType: 'x', content: {} } }),
    );
    expect(late).toEqual({ key: v2.versionId, outcome: 'stale' });
    expect((await versionRow(v2.versionId)).status).toBe('cancelled');
    expect(await drain()).toEqual([{ key: v3.versionId, outcome: 'completed', completion: 'draft' }]);
  });

  it('never gives one version to two concurrent workers', async () => {
    await drain();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const { pageId, audienceId } = await makeAudience(alice.scope, t.clock);
      ids.push((await newVersion(pageId, audienceId)).versionId);
    }
    const seen: string[] = [];
    const recording: VersionGenerator = {
      name: 'recording',
      async generate(input) {
        seen.push(input.version.versionId);
        await new Promise((r) => setTimeout(r, 5));
        return builtinWriter.generate(input);
      },
    };
    const workers = ENGINE === 'postgres' ? 4 : 2;
    await Promise.all(Array.from({ length: workers }, () => drain({ generator: recording })));
    expect([...seen].sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await versionRow(id)).attempts).toBe(1);
  });
});
