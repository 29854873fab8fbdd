import fc from 'fast-check';
import { sql } from 'kysely';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { useTestApp } from '../../../test/harness.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { claimJobIn, done, retry } from '../../workers/leased-jobs.js';
import { archiveAudience } from './audiences.service.js';
import { versionGenerationKind } from './audiences.generation.js';
import { versionGeneration } from './audiences.generation-worker.js';
import type { VersionGenerator } from './audiences.generator.js';
import { builtinWriter } from './audiences.builtin-writer.js';
import { publishPageDrafts } from './audiences.versions.js';
import { isRunnable } from './audiences.version-lifecycle.js';

const t = useTestApp({ tenants: ['Property'] });
const [tenant] = t.tenants;

/**
 * Random sequences of everything that can happen to an audience (new versions with or without
 * an operationKey, worker runs that succeed, fail or crash, time passing, archive and restore,
 * publishing the page) must keep the lifecycle's invariants after every step.
 */

const MAX_ATTEMPTS = 2;
const broken: VersionGenerator = { name: 'broken', generate: () => Promise.reject(new Error('boom')) };
const settings = { maxAttempts: MAX_ATTEMPTS };
const generation = (generator: VersionGenerator = builtinWriter) =>
  versionGeneration(
    { database: t.database, clock: t.clock, logger: pino({ level: 'silent' }) },
    { generator, settings },
  );
/** One step of the worker: at most one version; false when nothing was runnable. */
const worker = async (generator: VersionGenerator) => (await generation(generator).runDue(1)).length > 0;
/** A worker's claim of a runnable version, inside `tx`, without running it. */
const claimIn = (tx: TenantScope, versionId: string) =>
  claimJobIn(versionGenerationKind(t.clock, { settings }), t.clock, tx, versionId);

type Op =
  | { kind: 'create'; key: string | null }
  | { kind: 'work'; ok: boolean }
  | { kind: 'crash' }
  | { kind: 'raceClaim'; ok: boolean }
  | { kind: 'advance'; ms: number }
  | { kind: 'archive' }
  | { kind: 'restore' }
  | { kind: 'publishPage' }
  /** POST …/versions/{id}/publish on one of the audience's versions: a draft, a rollback, or a refusal. */
  | { kind: 'publishVersion'; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('create' as const), key: fc.constantFrom(null, 'a', 'b') }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('work' as const), ok: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'crash' as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('raceClaim' as const), ok: fc.boolean() }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 90_000 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'archive' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restore' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'publishPage' as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('publishVersion' as const), pick: fc.nat(20) }) },
);

async function apply(o: Op, pageId: string, audienceId: string, archived: boolean) {
  const url = `/v0/pages/${pageId}/audiences/${audienceId}`;
  switch (o.kind) {
    case 'create': {
      const res = await t.request(tenant, {
        method: 'POST',
        url: `${url}/versions`,
        payload: o.key === null ? {} : { operationKey: o.key },
      });
      if (archived) expect([200, 409]).toContain(res.statusCode);
      else expect([200, 201]).toContain(res.statusCode);
      return;
    }
    case 'work':
      await worker(o.ok ? builtinWriter : broken);
      return;
    case 'crash':
      await tenant.scope.transaction(async (scope) => {
        const runnable = await scope
          .selectFrom('audience_versions')
          .select('id')
          .where('status', 'in', ['queued', 'pending'])
          .where('available_at', '<=', t.clock.now().toISOString())
          .executeTakeFirst();
        if (runnable) await claimIn(scope, runnable.id);
      });
      return;
    case 'raceClaim':
      await raceClaimWithCreate(o.ok, url, audienceId, archived);
      return;
    case 'advance':
      t.clock.advance(o.ms);
      return;
    case 'archive':
      await archiveAudience(tenant.scope, t.clock, audienceId);
      return;
    case 'restore': {
      const res = await t.request(tenant, { method: 'POST', url: `${url}/restore`, payload: {} });
      expect(res.statusCode).toBe(200);
      expect(res.json().archivedAt).toBeNull();
      return;
    }
    case 'publishPage':
      await publishPageDrafts(tenant.scope, t.clock, pageId);
      return;
    case 'publishVersion': {
      const versions = await tenant.scope
        .selectFrom('audience_versions')
        .select(['id', 'status', 'artifact'])
        .where('audience_id', '=', audienceId)
        .orderBy('version_number')
        .execute();
      const version = versions[o.pick % versions.length]!;
      const res = await t.request(tenant, {
        method: 'POST',
        url: `${url}/versions/${version.id}/publish`,
        payload: {},
      });
      const expected =
        version.status === 'published'
          ? 200
          : archived
            ? 409
            : version.status === 'draft'
              ? 200
              : version.status === 'archived' && version.artifact !== null
                ? 201
                : 409;
      expect(res.statusCode).toBe(expected);
      if (res.statusCode === 409 && !archived) expect(res.json().code).toBe('version_not_publishable');
      if (res.statusCode < 300) expect(res.json().status).toBe('published');
      return;
    }
  }
}

/**
 * A worker claims the audience's runnable version while a client creates a new version: on
 * PostgreSQL the claim's transaction is held open until the create is seen waiting on it (so the
 * create read the version before the claim committed), then the worker generates and completes
 * its claim as it would. On SQLite the single writer makes the two run one after the other.
 */
async function raceClaimWithCreate(ok: boolean, url: string, audienceId: string, archived: boolean) {
  const { kysely, engine } = t.database;
  let claimedReady!: (claim: { pid: number | null } | null) => void;
  const ready = new Promise<{ pid: number | null } | null>((resolve) => (claimedReady = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const claiming = tenant.scope.transaction(async (scope) => {
    const runnable = await scope
      .selectFrom('audience_versions')
      .select('id')
      .where('audience_id', '=', audienceId)
      .where('status', 'in', ['queued', 'pending'])
      .where('available_at', '<=', t.clock.now().toISOString())
      .executeTakeFirst();
    const job = runnable ? await claimIn(scope, runnable.id) : null;
    if (job === null) {
      claimedReady(null);
      return null;
    }
    if (engine === 'postgres') {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(scope.unscopedDb());
      claimedReady({ pid: rows[0]!.pid });
      await released;
    } else claimedReady({ pid: null });
    return job;
  });
  const claim = await ready;
  const create = t.request(tenant, { method: 'POST', url: `${url}/versions`, payload: {} });
  if (claim?.pid != null) {
    // Wait (bounded) until the create blocks on the claim's locks, then let the claim commit.
    for (let i = 0; i < 200; i++) {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity where ${claim.pid} = any(pg_blocking_pids(pid))`.execute(
        kysely,
      );
      if (rows[0]!.n > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  release();
  const [claimed, created] = await Promise.all([claiming, create]);
  expect([200, 201, 409]).toContain(created.statusCode);
  if (!archived) expect(created.statusCode).toBe(201);
  if (claimed === null) return;
  // The worker's late result: only recorded if its version is still the one to run.
  await generation().finish(
    claimed,
    ok
      ? done({ generator: 'late', artifact: { contentType: 'application/json', content: { late: true } } })
      : retry({ reason: 'boom' }),
  );
}

async function checkInvariants(pageId: string, audienceId: string) {
  const versions = await tenant.scope
    .selectFrom('audience_versions')
    .selectAll()
    .where('audience_id', '=', audienceId)
    .orderBy('version_number')
    .execute();
  // numbers 1..n, in creation order
  expect(versions.map((v) => Number(v.version_number))).toEqual(versions.map((_, i) => i + 1));
  for (let i = 1; i < versions.length; i++) expect(versions[i]!.created_at >= versions[i - 1]!.created_at).toBe(true);
  // exactly one published version
  const published = versions.filter((v) => v.status === 'published');
  expect(published).toHaveLength(1);
  // at most one draft, newer than the published one; at most one runnable, and it is the latest
  const drafts = versions.filter((v) => v.status === 'draft');
  expect(drafts.length).toBeLessThanOrEqual(1);
  if (drafts[0]) expect(drafts[0].version_number > published[0]!.version_number).toBe(true);
  // no version goes live after a newer one did
  const everLive = versions.filter((v) => v.published_at !== null).map((v) => v.published_at!);
  expect(everLive).toEqual([...everLive].sort());
  const runnable = versions.filter((v) => isRunnable(v.status));
  expect(runnable.length).toBeLessThanOrEqual(1);
  if (runnable[0]) expect(runnable[0]).toBe(versions[versions.length - 1]);
  for (const v of versions) {
    const set = (x: string | number | null) => x !== null;
    expect(set(v.queued_at)).toBe(true);
    expect(set(v.available_at)).toBe(isRunnable(v.status));
    if (!isRunnable(v.status)) expect(v.lease_token).toBeNull();
    expect(set(v.queue_duration_ms)).toBe(v.attempts > 0);
    expect(set(v.became_draft_at)).toBe(['draft', 'published'].includes(v.status) || v.status === 'archived');
    expect(set(v.published_at)).toBe(v.status === 'published' || set(v.obsolete_at));
    expect(set(v.cancelled_at)).toBe(v.status === 'cancelled');
    expect(set(v.archived_at)).toBe(v.status === 'archived');
    if (set(v.obsolete_at)) expect(v.status).toBe('archived');
    if (v.status === 'processing') expect(v.lease_token).not.toBeNull();
    const order = [v.queued_at, v.became_draft_at, v.published_at, v.archived_at].filter((x) => x !== null);
    expect([...order].sort()).toEqual(order);
  }
  // the API: status follows the latest version unless archived; the published version is real
  const res = await t.request(tenant, { method: 'GET', url: `/v0/pages/${pageId}/audiences` });
  const audience = res.json().items.find((a: { audienceId: string }) => a.audienceId === audienceId);
  const latest = versions[versions.length - 1]!;
  expect(audience.latestVersion.versionId).toBe(latest.id);
  expect(audience.publishedVersion.versionId).toBe(published[0]!.id);
  expect(audience.status).toBe(audience.archivedAt === null ? latest.status : 'archived');
  // one page.version.created event per version
  const created = await tenant.scope
    .selectFrom('events')
    .select('data')
    .where('type', '=', 'page.version.created')
    .execute();
  expect(created.filter((e) => (e.data as { audienceId: string }).audienceId === audienceId)).toHaveLength(
    versions.length,
  );
}

describe('the version lifecycle under random operations', () => {
  it('keeps its invariants after every step', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.boolean(),
        fc.boolean(),
        fc.array(op, { minLength: 1, maxLength: 14 }),
        async (pagePublished, reviewBeforePublish, ops) => {
          // finish what earlier runs left in the queue, so each run starts clean
          for (let i = 0; i < 50 && (await worker(builtinWriter)); i++);
          t.clock.advance(3_600_000);
          for (let i = 0; i < 50 && (await worker(builtinWriter)); i++);
          const pageId = await makePage(tenant.scope, t.clock, {
            status: pagePublished ? 'published' : 'draft',
            reviewBeforePublish,
          });
          const { audienceId } = await makeAudience(tenant.scope, t.clock, { pageId });
          let archived = false;
          for (const o of ops) {
            await apply(o, pageId, audienceId, archived);
            if (o.kind === 'archive') archived = true;
            if (o.kind === 'restore') archived = false;
            await checkInvariants(pageId, audienceId);
          }
          const page = await tenant.scope
            .selectFrom('pages')
            .select('audiences_count')
            .where('id', '=', pageId)
            .executeTakeFirstOrThrow();
          expect(page.audiences_count).toBe(1);
        },
      ),
      { numRuns: 30 },
    );
    // 30 runs of up to 14 API steps each: ~16 s on PostgreSQL on an idle machine, more when shared.
  }, 120_000);
});
