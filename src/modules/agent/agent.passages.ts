/**
 * What the on-page agent retrieves from and how a question becomes a search (docs/agent.md,
 * Retrieval). Pure functions: the passages of a version's page, the words of a question, the
 * token that names a scope in the full-text index.
 */

/** The longest passage body stored (a topic entry may hold 100,000 characters; the rest is cut). */
export const PASSAGE_MAX_CHARS = 20_000;
/** At most this many words of a question are searched for. */
const MAX_TERMS = 16;

export interface PassageInput {
  kind: 'brief' | 'section' | 'topic_entry';
  label: string;
  body: string;
}

/** A scope (the tenant id, or a version id) as one token of the full-text index. */
export function scopeToken(key: string): string {
  return `k${key.replace(/[^0-9a-z]/gi, '').toLowerCase()}z`;
}

/**
 * Common English words that carry no meaning for retrieval ("what is the price" searches "price").
 * Other languages keep all their words (docs/agent.md, Languages).
 */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can could do does did for from had has have how i if in into is it its me my ' +
    'no not of on or our so than that the their them then there these they this to us was we were what when ' +
    'where which who whom why will with would you your yours about any some tell please hi hello there'
  ).split(' '),
);

/** The words of a question worth searching for: letters and digits, lower-cased, no stop words. */
export function questionTerms(question: string): string[] {
  const words = question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const terms: string[] = [];
  for (const word of words) {
    if (word.length < 2 || STOP_WORDS.has(word) || terms.includes(word)) continue;
    terms.push(word);
    if (terms.length === MAX_TERMS) break;
  }
  return terms;
}

/**
 * A word found in at least this many of the passages searched is common: it orders the passages
 * that hold a distinctive word of the question, but does not find passages by itself (docs/agent.md,
 * Retrieval).
 */
export const COMMON_WORD_PASSAGES = 500;

/** Of a question made of common words only, at most this many matching passages are ranked. */
export const COMMON_ONLY_RANKED = 100;

/**
 * The question's words by how many of the searched passages contain them (`counts`, in the order
 * of `terms`, counted up to `commonAt`): distinctive words (in fewer), common words (in at least
 * as many). Words found nowhere are neither.
 */
export function termsByFrequency(
  terms: string[],
  counts: number[],
  commonAt = COMMON_WORD_PASSAGES,
): { distinctive: string[]; common: string[] } {
  const distinctive: string[] = [];
  const common: string[] = [];
  terms.forEach((term, i) => {
    const count = counts[i] ?? 0;
    if (count >= commonAt) common.push(term);
    else if (count > 0) distinctive.push(term);
  });
  return { distinctive, common };
}

const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : '');
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const rec = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/**
 * The passages of a version's page, from its stored artifact content: the page's brief (the
 * page context and the version's supplementary context, as generated into `agent.context`), then
 * one passage per body section (its heading as the label; its text, items, questions and answers
 * as the body). Defensive: anything unexpected is left out.
 */
export function passagesOfArtifact(content: Record<string, unknown>): PassageInput[] {
  const out: PassageInput[] = [];
  const brief = str(rec(content.agent).context);
  if (brief) out.push({ kind: 'brief', label: 'About this page', body: brief.slice(0, PASSAGE_MAX_CHARS) });
  for (const raw of arr(rec(content.copy).sections)) {
    const section = rec(raw);
    const parts = [str(section.body), str(section.intro)];
    for (const item of arr(section.items).map(rec)) {
      parts.push([item.title, item.text, item.question, item.answer, item.quote].map(str).filter(Boolean).join(' '));
    }
    const body = parts.filter(Boolean).join('\n');
    if (body) {
      out.push({ kind: 'section', label: str(section.heading) || 'This page', body: body.slice(0, PASSAGE_MAX_CHARS) });
    }
  }
  return out;
}
