import { describe, expect, it } from 'vitest';
import { drainGeneration, makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { problem, rowCounts, useTestApp } from '../../../test/harness.js';
import { audiencesCommands } from './audiences.cli.js';
import { archiveAudience } from './audiences.service.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

const regenerate = (pageId: string, payload: object = {}, tenant = alice) =>
  t.request(tenant, { method: 'POST', url: `/v0/pages/${pageId}/regenerate`, payload });

const versionsOf = (audienceId: string) =>
  alice.scope
    .selectFrom('audience_versions')
    .select(['id', 'status', 'version_number', 'operation_key'])
    .where('audience_id', '=', audienceId)
    .orderBy('version_number')
    .execute();

/** A page with three audiences, one of them archived. */
async function pageWithAudiences() {
  const pageId = await makePage(alice.scope, t.clock, { status: 'published' });
  const a = await makeAudience(alice.scope, t.clock, { pageId, personRouteKey: 'a' });
  const b = await makeAudience(alice.scope, t.clock, { pageId, personRouteKey: 'b' });
  const archived = await makeAudience(alice.scope, t.clock, { pageId, personRouteKey: 'c' });
  await archiveAudience(alice.scope, t.clock, archived.audienceId);
  return { pageId, live: [a.audienceId, b.audienceId].sort(), archived: archived.audienceId };
}

describe('POST /v0/pages/{page_id}/regenerate', () => {
  it('queues a version for every live audience of the page, superseding one still waiting', async () => {
    const { pageId, live, archived } = await pageWithAudiences();
    const waiting = await t.request(alice, {
      method: 'POST',
      url: `/v0/pages/${pageId}/audiences/${live[0]}/versions`,
      payload: {},
    });
    t.notified.length = 0;
    const res = await regenerate(pageId);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toEqual({ pageId, queuedCount: 2, versionIds: [expect.any(String), expect.any(String)] });
    expect(t.notified).toEqual(expect.arrayContaining(['audience-versions']));
    const [first, second] = await Promise.all(live.map(versionsOf));
    expect(first!.map((v) => v.status)).toEqual(['published', 'cancelled', 'queued']);
    expect([first!.at(-1)!.id, second!.at(-1)!.id].sort()).toEqual([...body.versionIds].sort());
    expect((await versionsOf(archived)).map((v) => v.status)).toEqual(['published']);
    expect(waiting.json().status).toBe('queued');

    await drainGeneration(t.database, t.clock);
    expect((await versionsOf(live[1]!)).map((v) => v.status)).toEqual(['archived', 'published']);
  });

  it('answers a repeated operationKey with the versions it queued, and queues nothing more', async () => {
    const { pageId, live } = await pageWithAudiences();
    const first = await regenerate(pageId, { operationKey: 'brief-edit-7' });
    expect(first.statusCode).toBe(201);
    const before = await rowCounts(alice, ['audience_versions', 'events']);
    const again = await regenerate(pageId, { operationKey: 'brief-edit-7' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ pageId, queuedCount: 0, versionIds: first.json().versionIds });
    expect(await rowCounts(alice, ['audience_versions', 'events'])).toEqual(before);
    // concurrent first requests with one key: one of them queues, the other answers what it queued
    const [x, y] = await Promise.all([
      regenerate(pageId, { operationKey: 'race' }),
      regenerate(pageId, { operationKey: 'race' }),
    ]);
    expect([x.statusCode, y.statusCode].sort()).toEqual([200, 201]);
    expect(x.json().versionIds).toEqual(y.json().versionIds);
    for (const audienceId of live) {
      expect((await versionsOf(audienceId)).filter((v) => v.operation_key === 'race')).toHaveLength(1);
    }
  });

  it('refuses an archived page (409), an unknown or another tenant’s page (404) and a bad body (422)', async () => {
    const { pageId } = await pageWithAudiences();
    await alice.scope.updateTable('pages').set({ status: 'archived' }).where('id', '=', pageId).execute();
    const before = await rowCounts(alice, ['audience_versions']);
    expect(problem(await regenerate(pageId)).code).toBe('page_archived');
    expect((await regenerate(pageId, {}, bob)).statusCode).toBe(404);
    expect((await regenerate('page_00000000000000000000000000')).statusCode).toBe(404);
    const bad = problem(await regenerate(pageId, { operationKey: '' }));
    expect(bad.errors[0]!.path).toBe('/body/operationKey');
    expect(await rowCounts(alice, ['audience_versions'])).toEqual(before);
  });
});

describe('audience-pages version show (operator CLI)', () => {
  const show = audiencesCommands.find((c) => c.path.join(' ') === 'version show')!;
  it('prints the version with its generator, model, tokens, duration, attempts and last failure', async () => {
    const { versionId } = await makeAudience(alice.scope, t.clock);
    const result = await show.run(
      { database: t.database, db: t.database.kysely, config: t.app.ctx.config, clock: t.clock, migrations: {} },
      { values: { tenant: alice.tenantId }, positionals: [versionId] },
    );
    expect(result).toMatchObject({
      versionId,
      status: 'published',
      generation: {
        generator: 'builtin-writer-v1',
        model: null,
        inputTokens: null,
        outputTokens: null,
        durationMs: null,
        attempts: 1,
        lastFailureReason: null,
      },
    });
    await expect(
      show.run(
        { database: t.database, db: t.database.kysely, config: t.app.ctx.config, clock: t.clock, migrations: {} },
        { values: { tenant: bob.tenantId }, positionals: [versionId] },
      ),
    ).rejects.toThrow(/not found|No audience version/i);
  });
});
