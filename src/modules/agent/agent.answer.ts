import type { RankedPassage } from '../../db/dialect.js';
import type { AgentMessageSource } from '../../db/schema.js';

/**
 * The extractive answer (docs/agent.md, Answers): no model, the tenant's own words. From the best
 * passages (at most two), the sentences that contain most of the question's words, quoted, each
 * passage named as a source. When nothing matched, it says so plainly and points to the page's
 * primary action instead of guessing.
 */

export interface Answer {
  /** Plain text (never markup); the widget and the answer page escape it. */
  text: string;
  sources: AgentMessageSource[];
  /** False when nothing known answered the question (the text says so and offers the action). */
  answered: boolean;
}

const PASSAGES_QUOTED = 2;
const SENTENCES_PER_PASSAGE = 2;

/** Words compared loosely: "trials" meets "trial", "pricing" meets "price" (the index stems too). */
function stemOf(word: string): string {
  return word.replace(/(ing|ies|es|ed|s|e)$/u, '').slice(0, 8) || word;
}

function sentencesOf(body: string): string[] {
  return body
    .split(/(?<=[.!?])\s+|\n+/u)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function bestSentences(body: string, terms: string[]): string[] {
  const stems = terms.map(stemOf);
  const sentences = sentencesOf(body);
  const scored = sentences.map((sentence, index) => {
    const words = new Set((sentence.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map(stemOf));
    return { index, score: stems.filter((s) => words.has(s)).length };
  });
  const best = scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, SENTENCES_PER_PASSAGE)
    .sort((a, b) => a.index - b.index)
    .map((s) => sentences[s.index]!);
  return best.length > 0 ? best : sentences.slice(0, 1);
}

function nothingKnown(action: { title: string } | null): Answer {
  const offer = action === null ? '' : ` You can ${action.title.replace(/[.!]+$/u, '')} instead.`;
  return {
    text: `I don't know the answer to that from what this page knows.${offer}`,
    sources: [],
    answered: false,
  };
}

/** Cuts text to `max` characters at a word boundary, with an ellipsis. */
export function capped(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

export function extractiveAnswer(
  terms: string[],
  passages: RankedPassage[],
  action: { title: string } | null,
  maxChars: number,
): Answer {
  const quoted = passages.slice(0, PASSAGES_QUOTED);
  if (quoted.length === 0) return nothingKnown(action);
  const text = quoted.map((p) => `“${bestSentences(p.body, terms).join(' ')}”`).join('\n\n');
  const sources: AgentMessageSource[] = [];
  for (const p of quoted) {
    if (!sources.some((s) => s.kind === p.source_kind && s.label === p.label)) {
      sources.push({ kind: p.source_kind, label: p.label });
    }
  }
  return { text: capped(text, maxChars), sources, answered: true };
}
