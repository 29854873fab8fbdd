import type { RankedPassage } from '../../db/dialect.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { passagesOfArtifact, questionTerms } from './agent.passages.js';
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
 */
export async function retrieve(
  scope: TenantScope,
  versionId: string,
  question: string,
  limit = PASSAGES_PER_QUESTION,
): Promise<{ terms: string[]; passages: RankedPassage[] }> {
  const terms = questionTerms(question);
  const passages = await q.searchPassages(scope, [scope.tenantId, versionId], terms, limit);
  return { terms, passages };
}
