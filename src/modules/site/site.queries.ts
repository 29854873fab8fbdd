import { sql, type Kysely } from 'kysely';
import type { Engine } from '../../db/connect.js';
import { preparedRawQuery } from '../../db/prepared.js';
import type { DB } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';

/**
 * The page runtime's queries. Resolving runs before a tenant is known (the host decides it), so
 * it is built on the raw database and every join is tied to the host's tenant by hand.
 */

function candidates(db: Kysely<DB>, v: { host: string; path: string; parent: string; key: string }) {
  const base = (kind: 'exact' | 'key', linkPath: string) =>
    db
      .selectFrom('tenant_domains as d')
      .innerJoin('page_links as l', (join) =>
        join
          .onRef('l.tenant_id', '=', 'd.tenant_id')
          .on('l.path', '=', linkPath)
          .on('l.deleted_at', 'is', null)
          .on((eb) => eb.or([eb('l.domain_key', '=', eb.ref('d.id')), eb('l.domain_key', '=', sql.lit(''))])),
      )
      .select(['d.tenant_id', sql.lit(kind).as('kind'), 'l.domain_key', 'l.id as link_id']);
  const exact = base('exact', v.path).innerJoin('audiences as a', (join) =>
    join.onRef('a.id', '=', 'l.audience_id').onRef('a.tenant_id', '=', 'd.tenant_id'),
  );
  const byKey = base('key', v.parent)
    .innerJoin('audiences as t', (join) =>
      join.onRef('t.id', '=', 'l.audience_id').onRef('t.tenant_id', '=', 'd.tenant_id'),
    )
    .innerJoin('audiences as a', (join) =>
      join
        .onRef('a.tenant_id', '=', 'd.tenant_id')
        .onRef('a.page_id', '=', 't.page_id')
        .on('a.person_route_key', '=', v.key),
    );
  const finish = (q: typeof exact) =>
    q
      .innerJoin('pages as p', (join) => join.onRef('p.id', '=', 'a.page_id').onRef('p.tenant_id', '=', 'd.tenant_id'))
      // By the audience alone (its id is the tenant's) and a literal status, so that SQLite uses
      // the partial index of published versions, one row per audience.
      .leftJoin('audience_versions as v', (join) =>
        join.onRef('v.audience_id', '=', 'a.id').on('v.status', '=', sql.lit('published')),
      )
      .select([
        'a.id as audience_id',
        'a.page_id',
        'a.archived_at as audience_archived_at',
        'a.person_id',
        'a.person_route_key',
        'p.status as page_status',
        'p.deleted_at as page_deleted_at',
        'v.id as version_id',
      ])
      .where('d.hostname', '=', v.host)
      // Only a proven domain serves (a literal, so SQLite uses the partial index of verified names).
      .where('d.status', '=', sql.lit('verified'))
      .where('d.deleted_at', 'is', null);
  return { exact: finish(exact), byKey: finish(byKey as unknown as typeof exact) };
}

type Values = { host: string; path: string; parent: string; key: string };
const exactQuery = preparedRawQuery((db, v: Values) => candidates(db, v).exact);
const keyQuery = preparedRawQuery((db, v: Values) => candidates(db, v).byKey);

export type Candidate = Awaited<ReturnType<typeof exactQuery>>[number];

/**
 * The links that could answer `path` on `host`, on the host's domain or on no domain: the links
 * at the path itself (kind `exact`); when there are none, the links at its parent whose page has
 * an audience with route key `key` (kind `key`). Every miss runs both statements, so a wrong key
 * costs what a wrong path costs.
 */
export async function findCandidates(db: Kysely<DB>, engine: Engine, values: Values): Promise<Candidate[]> {
  const exact = await exactQuery(db, engine, values);
  if (exact.length > 0) return exact;
  return keyQuery(db, engine, values);
}

/** The stored artifact of a version of the tenant. */
export async function findArtifact(scope: TenantScope, versionId: string) {
  const row = await scope
    .selectFrom('audience_versions')
    .select('audience_versions.artifact')
    .where('audience_versions.id', '=', versionId)
    .executeTakeFirst();
  return row?.artifact ?? null;
}

/**
 * The published version of an audience that is served (the audience and its page neither archived
 * nor deleted), with what the agent needs: whether it shows the agent, and whose page it is.
 */
export async function findServedVersion(scope: TenantScope, audienceId: string) {
  return scope
    .selectFrom('audiences')
    .innerJoin('pages', (join) =>
      join.onRef('pages.id', '=', 'audiences.page_id').onRef('pages.tenant_id', '=', 'audiences.tenant_id'),
    )
    .innerJoin('audience_versions', (join) =>
      join
        .onRef('audience_versions.audience_id', '=', 'audiences.id')
        .onRef('audience_versions.tenant_id', '=', 'audiences.tenant_id')
        .on('audience_versions.status', '=', sql.lit('published')),
    )
    .select([
      'audience_versions.id as version_id',
      'audience_versions.is_new_page_agent',
      'audience_versions.artifact',
      'audiences.page_id',
      'audiences.person_id',
    ])
    .where('audiences.id', '=', audienceId)
    .where('audiences.archived_at', 'is', null)
    .where('pages.deleted_at', 'is', null)
    .where('pages.status', '!=', 'archived')
    .executeTakeFirst();
}

/**
 * A version of the tenant to preview, whatever its status, with its artifact: only while its
 * audience's page is not deleted (a deleted page disappears everywhere).
 */
export async function findPreviewVersion(scope: TenantScope, versionId: string) {
  return scope
    .selectFrom('audience_versions')
    .innerJoin('audiences', (join) =>
      join
        .onRef('audiences.id', '=', 'audience_versions.audience_id')
        .onRef('audiences.tenant_id', '=', 'audience_versions.tenant_id'),
    )
    .innerJoin('pages', (join) =>
      join.onRef('pages.id', '=', 'audiences.page_id').onRef('pages.tenant_id', '=', 'audiences.tenant_id'),
    )
    .select([
      'audience_versions.artifact',
      'audience_versions.version_number',
      'audience_versions.status',
      'audience_versions.audience_id',
    ])
    .where('audience_versions.id', '=', versionId)
    .where('pages.deleted_at', 'is', null)
    .executeTakeFirst();
}
