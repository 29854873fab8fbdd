import type { TenantScope } from '../../db/tenant-scope.js';
import { notFound } from '../../http/errors.js';
import { findAccountByDomain } from '../accounts/index.js';
import { findPage } from '../pages/index.js';
import { recentPersonLogs } from '../person-logs/index.js';
import { findPerson } from '../persons/index.js';
import { listKnowledge } from '../topics/index.js';
import type { GenerationAction, GenerationActivity, GenerationInput, GenerationTopic } from './audiences.generator.js';
import * as q from './audiences.queries.js';
import { effectiveMetadata } from './audiences.mapping.js';

/**
 * What a generation reads, and how much of it (docs/audience-versions.md#inputs). Every part has
 * its own cap, so the whole stays under ~30,000 characters of tenant text (~8,000 tokens) whatever
 * the tenant stored; within a part, what comes first is kept and the rest is cut, in the order
 * the doc states. Visitor input never gets here: entries a visitor wrote (form submissions, agent
 * questions) keep their type, source and date, not their payload.
 */
export const GENERATION_INPUT_BUDGET = {
  /** The page's brief (`pageContext`): its beginning is kept. */
  briefChars: 8_000,
  /** The audience's supplementary context: its beginning is kept. */
  supplementaryChars: 4_000,
  /** Topic entries read (default topic first, then by sortOrder). */
  knowledgeEntries: 100,
  /** All topic entries together: entries past it are left out, the one that crosses it is cut. */
  knowledgeChars: 12_000,
  /** One topic entry. */
  knowledgeEntryChars: 1_500,
  /** The person's most recent log entries. */
  activityEntries: 10,
  /** One log entry's payload, as JSON. */
  activityExcerptChars: 300,
} as const;

/** Log sources whose payload a visitor wrote (a form's fields, a question to the agent). */
const VISITOR_SOURCES = new Set(['page-form', 'page-agent']);

const EMAIL = /[^\s"'<>@,;:()[\]\\]+@([a-z0-9.-]+\.[a-z]{2,})/gi;

/** Cuts text to `max` characters at most (the ellipsis included), on a word boundary when one is near. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.8 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** Everything a generator needs of one version, read in the worker's transaction. */
export async function gatherGenerationInput(tx: TenantScope, versionId: string): Promise<GenerationInput> {
  const budget = GENERATION_INPUT_BUDGET;
  const job = await q.findVersionToGenerate(tx, versionId);
  if (job === undefined) throw notFound('audience version', versionId);
  const audience = await q.findAudienceById(tx, job.audience_id);
  if (audience === undefined) throw notFound('audience', job.audience_id);
  const page = await findPage(tx, audience.page_id);
  if (page === undefined) throw new Error(`page ${audience.page_id} of the audience is deleted`);
  const supplementary = job.supplementary_context;
  return {
    version: {
      versionId,
      versionNumber: Number(job.version_number),
      isNewPageAgent: job.is_new_page_agent,
      supplementaryContext: supplementary === null ? null : clip(supplementary, budget.supplementaryChars),
    },
    page: {
      pageId: page.id,
      name: page.name,
      title: page.title,
      pageContext: clip(page.page_context, budget.briefChars),
      pageType: page.page_type,
      brandId: page.brand_id,
      headerActionId: page.header_action_id,
      actions: page.actions as GenerationAction[],
      actionCardWidgets: page.action_card_widgets,
      footerLinks: page.footer_links,
      scripts: (page.scripts as { name: string; content: string; enabled: boolean }[])
        .filter((script) => script.enabled)
        .map(({ name, content }) => ({ name, content })),
    },
    audience: {
      audienceId: audience.id,
      effectiveName: audience.custom_name ?? audience.computed_name,
      personId: audience.person_id,
      personRouteKey: audience.person_route_key,
      actionFormIdOverride: audience.action_form_id_override,
      actionFormInstructionsOverride: audience.action_form_instructions_override,
      actionUrlOverride: audience.action_url_override,
    },
    person: audience.person_id === null ? null : await loadPerson(tx, audience.person_id),
    activity: audience.person_id === null ? [] : await loadActivity(tx, audience.person_id),
    knowledge: await loadKnowledge(tx),
    effectiveMetadata: effectiveMetadata(page.metadata, audience.metadata_override),
  };
}

/** The audience's person and their account; a person deleted since is rendered as unknown. */
async function loadPerson(tx: TenantScope, personId: string): Promise<GenerationInput['person']> {
  const person = await findPerson(tx, personId);
  if (person === undefined) return { personId, name: null, emailDomain: null, accountDomain: null, accountName: null };
  const account = person.account_domain ? await findAccountByDomain(tx, person.account_domain) : undefined;
  return {
    personId,
    name: person.name.trim() || null,
    emailDomain: person.email?.split('@').pop()?.toLowerCase() ?? null,
    accountDomain: person.account_domain,
    accountName: account?.name ?? null,
  };
}

async function loadActivity(tx: TenantScope, personId: string): Promise<GenerationActivity[]> {
  const budget = GENERATION_INPUT_BUDGET;
  const rows = await recentPersonLogs(tx, personId, budget.activityEntries);
  return rows.map((row) => ({
    type: row.type,
    source: row.source,
    createdAt: row.created_at,
    excerpt: VISITOR_SOURCES.has(row.source)
      ? null
      : clip(JSON.stringify(row.payload).replace(EMAIL, '…@$1'), budget.activityExcerptChars),
  }));
}

async function loadKnowledge(tx: TenantScope): Promise<GenerationTopic[]> {
  const budget = GENERATION_INPUT_BUDGET;
  const topics = new Map<string, GenerationTopic>();
  let left = budget.knowledgeChars;
  for (const row of await listKnowledge(tx, budget.knowledgeEntries)) {
    if (left <= 0) break;
    const content = clip(row.content, Math.min(budget.knowledgeEntryChars, left));
    left -= content.length;
    let topic = topics.get(row.topic_id);
    if (topic === undefined) {
      topic = { title: row.title, isDefault: row.is_default, entries: [] };
      topics.set(row.topic_id, topic);
    }
    topic.entries.push({ type: row.content_type, content });
  }
  return [...topics.values()];
}
