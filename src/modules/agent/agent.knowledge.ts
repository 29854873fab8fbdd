import type { RankedPassage } from '../../db/dialect.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import {
  COMMON_ONLY_RANKED,
  COMMON_WORD_PASSAGES,
  passagesOfArtifact,
  questionTerms,
  termsByFrequency,
} from './agent.passages.js';
import * as q from './agent.queries.js';

/**
 * The agent's knowledge, kept in step with the writes that change it: each function runs in the
 * caller's transaction (topics, versions), so what was written is found, and what was deleted is
 * gone, from the very next question (docs/agent.md, Retrieval).
 */

/** A topic entry's passage (scope: the tenant), labelled with its topic's title. */
export async function indexTopicEntry(
  tx: TenantScope,
  entry: { id: string; content: string },
  topicTitle: string,
): Promise<void> {
  const body = entry.content.trim();
  await q.replacePassages(
    tx,
    { id: entry.id, scopeKey: tx.tenantId },
    body === '' ? [] : [{ kind: 'topic_entry', label: topicTitle, body }],
  );
}

/** Forgets the passages of topic entries (deleted entries, a deleted topic's entries). */
export async function forgetTopicEntries(tx: TenantScope, entryIds: string[]): Promise<void> {
  await q.deletePassagesOf(tx, entryIds);
}

/** A topic's new title becomes its entries' source label. */
export async function relabelTopicEntries(tx: TenantScope, entryIds: string[], topicTitle: string): Promise<void> {
  await q.relabelPassagesOf(tx, entryIds, topicTitle);
}

/** A version's page (its brief and sections) as passages (scope: the version), once its artifact is written. */
export async function indexVersionPage(
  tx: TenantScope,
  versionId: string,
  artifactContent: Record<string, unknown>,
): Promise<void> {
  await q.replacePassages(tx, { id: versionId, scopeKey: versionId }, passagesOfArtifact(artifactContent));
}

/** How many passages a question retrieves. */
const PASSAGES_PER_QUESTION = 4;

/**
 * The passages that best answer `question` on a version's page: the tenant's topic entries and
 * that version's brief and sections, best first. Never another tenant's or another version's.
 *
 * The ranking rule (docs/agent.md, Retrieval): the passages holding any of the question's
 * distinctive words, ranked by all its words; when fewer than `limit` do, then those holding every
 * common word, then any, of which only the first COMMON_ONLY_RANKED are ranked. So the work
 * follows the passages with the question's rarer words, not the tenant's size.
 */
export async function retrieve(
  scope: TenantScope,
  versionId: string,
  question: string,
  options: {
    limit?: number;
    /** The rule's numbers (tests use small ones). */
    commonWordPassages?: number;
    commonOnlyRanked?: number;
  } = {},
): Promise<{ terms: string[]; passages: RankedPassage[] }> {
  const {
    limit = PASSAGES_PER_QUESTION,
    commonWordPassages = COMMON_WORD_PASSAGES,
    commonOnlyRanked = COMMON_ONLY_RANKED,
  } = options;
  const terms = questionTerms(question);
  if (terms.length === 0) return { terms, passages: [] };
  const scopeKeys = [scope.tenantId, versionId];
  const counts = await q.countPassagesPerTerm(scope, scopeKeys, terms, commonWordPassages);
  const { distinctive, common } = termsByFrequency(terms, counts, commonWordPassages);
  const passages =
    distinctive.length === 0
      ? []
      : await q.searchPassages(
          scope,
          scopeKeys,
          { match: { terms: distinctive, all: false }, rankBy: [...distinctive, ...common] },
          limit,
        );
  for (const all of common.length > 1 ? [true, false] : [true]) {
    if (passages.length >= limit || common.length === 0) break;
    const more = await q.searchPassages(
      scope,
      scopeKeys,
      { match: { terms: common, all }, rankBy: common, firstOf: commonOnlyRanked },
      limit + passages.length,
    );
    for (const passage of more) {
      if (passages.length < limit && !passages.some((p) => p.id === passage.id)) passages.push(passage);
    }
  }
  return { terms, passages };
}
