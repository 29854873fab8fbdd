import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { drainGeneration } from '../../../test/factories/audiences.js';
import { useTestApp } from '../../../test/harness.js';

const t = useTestApp({ tenants: ['Property'] });
const [tenant] = t.tenants;

/**
 * Random sequences of what can happen to pages over the API (create with or without an
 * idempotency key, patch, publish, archive, restore, delete, an audience added, a version asked
 * for, the generation worker running) never make a move outside the page status table
 * (docs/api.md, The life of a page), and every response is valid against the OpenAPI document
 * (the harness checks each one). After every step: the API shows each page as the model says,
 * lists and counts hold exactly the pages not deleted, a published page has no waiting draft,
 * and every audience has exactly one live version.
 */

type Status = 'draft' | 'published' | 'archived';
interface Model {
  pageId: string;
  status: Status;
  before: Status | null;
  deleted: boolean;
  audiences: string[];
}

type Op =
  | { kind: 'create'; key: string | null }
  | { kind: 'patch' | 'publish' | 'archive' | 'restore' | 'delete' | 'audience' | 'version'; page: number }
  | { kind: 'work' };

const onPage = (kind: Exclude<Op['kind'], 'create' | 'work'>) =>
  fc.record({ kind: fc.constant(kind), page: fc.nat({ max: 3 }) });
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('create' as const), key: fc.constantFrom(null, 'k1', 'k2') }),
  },
  { weight: 2, arbitrary: onPage('patch') },
  { weight: 3, arbitrary: onPage('publish') },
  { weight: 3, arbitrary: onPage('archive') },
  { weight: 3, arbitrary: onPage('restore') },
  { weight: 1, arbitrary: onPage('delete') },
  { weight: 2, arbitrary: onPage('audience') },
  { weight: 2, arbitrary: onPage('version') },
  { weight: 2, arbitrary: fc.constant({ kind: 'work' as const }) },
);

/** The table: the status code and code a move gets from a page in `m`'s state, and the state after it. */
function expected(kind: 'publish' | 'archive' | 'restore' | 'delete' | 'patch', m: Model) {
  if (m.deleted) return { status: 404, code: 'not_found' };
  switch (kind) {
    case 'publish':
      if (m.status === 'archived') return { status: 409, code: 'page_archived' };
      if (m.status === 'published') return { status: 409, code: 'page_already_published' };
      return { status: 200, next: { status: 'published' as Status, before: null } };
    case 'archive':
      if (m.status === 'archived') return { status: 409, code: 'page_archived' };
      return { status: 200, next: { status: 'archived' as Status, before: m.status } };
    case 'restore':
      if (m.status !== 'archived') return { status: 409, code: 'page_not_archived' };
      return { status: 200, next: { status: m.before ?? ('draft' as Status), before: null } };
    case 'delete':
      return { status: 204, deleted: true };
    case 'patch':
      if (m.status === 'archived') return { status: 409, code: 'page_archived' };
      return { status: 200 };
  }
}

describe('the page status table under random operations', () => {
  it('never makes a move outside the table, and every answer is valid', async () => {
    // Keys are the tenant's for 48 hours: each run uses its own, so runs do not replay each other.
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 16 }), async (ops) => {
        run += 1;
        await drainGeneration(t.database, t.clock);
        const before = await visibleIds();
        const pages: Model[] = [];
        const keys = new Map<string, string>();
        for (const o of ops) {
          await apply(o, pages, keys, run);
          await checkInvariants(pages, before);
        }
      }),
      {
        numRuns: 25,
        // Always tried: a published page archived while its audience's version is generated, then restored.
        examples: [
          [
            [
              { kind: 'create', key: null },
              { kind: 'publish', page: 0 },
              { kind: 'audience', page: 0 },
              { kind: 'archive', page: 0 },
              { kind: 'work' },
              { kind: 'restore', page: 0 },
              { kind: 'delete', page: 0 },
              { kind: 'restore', page: 0 },
            ],
          ],
        ],
      },
    );
  });
});

async function apply(o: Op, pages: Model[], keys: Map<string, string>, run: number) {
  if (o.kind === 'work') {
    await drainGeneration(t.database, t.clock);
    return;
  }
  if (o.kind === 'create') {
    const body = { name: `Page ${pages.length}`, pageContext: 'Brief.', pageType: 'custom' };
    const res = await t.request(tenant, {
      method: 'POST',
      url: '/v0/pages',
      payload: o.key === null ? body : { ...body, name: `Keyed ${o.key}`, idempotencyKey: `${run}-${o.key}` },
    });
    expect(res.statusCode).toBe(201);
    const page = res.json();
    if (o.key !== null && keys.has(o.key)) {
      expect(res.headers['idempotent-replayed']).toBe('true');
      expect(page.pageId).toBe(keys.get(o.key));
      return;
    }
    expect(page).toMatchObject({ status: 'draft', archivedAt: null, deletedAt: null });
    if (o.key !== null) keys.set(o.key, page.pageId);
    pages.push({ pageId: page.pageId, status: 'draft', before: null, deleted: false, audiences: [] });
    return;
  }
  const m = pages[o.page % Math.max(pages.length, 1)];
  if (m === undefined) return;
  const url = `/v0/pages/${m.pageId}`;

  if (o.kind === 'audience' || o.kind === 'version') {
    const audienceId = m.audiences[m.audiences.length - 1];
    if (o.kind === 'version' && audienceId === undefined) return;
    const res = await t.request(tenant, {
      method: 'POST',
      url: o.kind === 'audience' ? `${url}/audiences` : `${url}/audiences/${audienceId}/versions`,
      payload: o.kind === 'audience' ? { customName: 'Segment' } : {},
    });
    const want = m.deleted ? 404 : m.status === 'archived' ? 409 : 201;
    expect(res.statusCode, res.body).toBe(want);
    if (want === 201 && o.kind === 'audience') m.audiences.push(res.json().audienceId);
    return;
  }

  const want = expected(o.kind, m);
  const res =
    o.kind === 'delete'
      ? await t.request(tenant, { method: 'DELETE', url })
      : o.kind === 'patch'
        ? await t.request(tenant, { method: 'PATCH', url, payload: { name: `Renamed ${Date.now()}` } })
        : await t.request(tenant, { method: 'POST', url: `${url}/${o.kind}`, payload: {} });
  expect(res.statusCode, `${o.kind} on ${JSON.stringify(m)}: ${res.body}`).toBe(want.status);
  if ('code' in want) expect(res.json().code).toBe(want.code);
  if ('next' in want && want.next) {
    expect(res.json().status).toBe(want.next.status);
    m.status = want.next.status;
    m.before = want.next.before;
  }
  if ('deleted' in want) m.deleted = true;
}

async function visibleIds(): Promise<Set<string>> {
  const rows = await tenant.scope.selectFrom('pages').select('id').where('deleted_at', 'is', null).execute();
  return new Set(rows.map((r) => r.id));
}

async function checkInvariants(pages: Model[], before: Set<string>) {
  for (const m of pages) {
    const res = await t.request(tenant, { method: 'GET', url: `/v0/pages/${m.pageId}` });
    if (m.deleted) {
      expect(res.statusCode).toBe(404);
      continue;
    }
    const page = res.json();
    expect(page.status).toBe(m.status);
    expect(page.archivedAt === null).toBe(m.status !== 'archived');
    expect(page.deletedAt).toBeNull();
    expect(page.audiencesCount).toBe(m.audiences.length);

    for (const audienceId of m.audiences) {
      const versions = await tenant.scope
        .selectFrom('audience_versions')
        .select('status')
        .where('audience_id', '=', audienceId)
        .execute();
      expect(versions.filter((v) => v.status === 'published')).toHaveLength(1);
      // A published page leaves nothing generated waiting: publish and restore publish drafts.
      if (m.status === 'published') expect(versions.filter((v) => v.status === 'draft')).toHaveLength(0);
    }
  }
  const alive = pages.filter((m) => !m.deleted).length;
  const list = await t.request(tenant, { method: 'GET', url: '/v0/pages?limit=1' });
  expect(list.json().totalCount).toBe(before.size + alive);
}
