import { passageCountsPerTerm, rankedPassages, type RankedPassage } from '../../db/dialect.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { PASSAGE_MAX_CHARS, scopeToken, type PassageInput } from './agent.passages.js';

/**
 * Replaces the passages of one source (a topic entry, or a version's page) with `passages`, in the
 * caller's transaction: the full-text index follows in the same transaction (triggers on SQLite,
 * the generated tsvector on PostgreSQL).
 */
export async function replacePassages(
  scope: TenantScope,
  source: { id: string; scopeKey: string },
  passages: PassageInput[],
) {
  await deletePassagesOf(scope, [source.id]);
  if (passages.length === 0) return;
  await scope
    .insertInto(
      'agent_passages',
      passages.map((p, i) => ({
        id: `${source.id}:${i}`,
        scope_key: source.scopeKey,
        scope_token: scopeToken(source.scopeKey),
        source_kind: p.kind,
        source_id: source.id,
        label: p.label,
        body: p.body.slice(0, PASSAGE_MAX_CHARS),
      })),
    )
    .execute();
}

export async function deletePassagesOf(scope: TenantScope, sourceIds: string[]) {
  if (sourceIds.length === 0) return;
  await scope.deleteFrom('agent_passages').where('agent_passages.source_id', 'in', sourceIds).execute();
}

export async function relabelPassagesOf(scope: TenantScope, sourceIds: string[], label: string) {
  if (sourceIds.length === 0) return;
  await scope.updateTable('agent_passages').set({ label }).where('agent_passages.source_id', 'in', sourceIds).execute();
}

const scopesOf = (scopeKeys: string[]) => scopeKeys.map((key) => ({ key, token: scopeToken(key) }));

/** For each term, how many of the tenant's passages in the given scopes contain it, counted up to `cap`. */
export async function countPassagesPerTerm(
  scope: TenantScope,
  scopeKeys: string[],
  terms: string[],
  cap: number,
): Promise<number[]> {
  return passageCountsPerTerm(scope.engine, scope.unscopedDb(), {
    tenantId: scope.tenantId,
    scopes: scopesOf(scopeKeys),
    terms,
    cap,
  });
}

/**
 * The tenant's passages in the given scopes (tenant id, version id) that contain any (or every)
 * word of `match`, ranked by the words of `rankBy`, best first (only the first `firstOf` matches
 * are ranked, when given).
 */
export async function searchPassages(
  scope: TenantScope,
  scopeKeys: string[],
  search: { match: { terms: string[]; all: boolean }; rankBy: string[]; firstOf?: number },
  limit: number,
): Promise<RankedPassage[]> {
  return rankedPassages(scope.engine, scope.unscopedDb(), {
    tenantId: scope.tenantId,
    scopes: scopesOf(scopeKeys),
    ...search,
    limit,
  });
}
