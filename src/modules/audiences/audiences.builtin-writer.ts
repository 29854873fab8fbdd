import MarkdownIt from 'markdown-it';
import { clip } from './audiences.generation-input.js';
import type { GenerationInput, GenerationTopic, VersionGenerator } from './audiences.generator.js';
import {
  checkPageCopy,
  companyOf,
  fillPlaceholders,
  pageArtifact,
  type PageCopy,
  type PageSection,
} from './audiences.page-copy.js';

/**
 * The built-in writer: the default when no model is configured. No network, deterministic (the
 * same input gives the same bytes). It writes a complete v2 page from the tenant's own words
 * (docs/audience-versions.md#the-built-in-writer): the hero from the page's title and the brief's
 * first paragraph, for the audience's person and company; a section per heading of the brief (a
 * bullet list becomes value points, a numbered list steps); the audience's supplementary context;
 * proof points and quotes, and questions with their answers, from the tenant's topics.
 */
export const builtinWriter: VersionGenerator = {
  name: 'builtin-writer-v1',
  async generate(input) {
    const copy = writeCopy(input);
    const checked = checkPageCopy(copy);
    if (!checked.ok) throw new Error(`the built-in writer wrote an invalid page: ${checked.problems.join('; ')}`);
    return pageArtifact(input, checked.copy);
  },
};

const MAX_SECTIONS = 8;
const MAX_ITEMS = 6;

type Block = { kind: 'paragraph'; text: string } | { kind: 'list'; ordered: boolean; items: string[] };
interface Group {
  heading: string | null;
  blocks: Block[];
}

const markdown = new MarkdownIt('commonmark');

/** The brief as groups of blocks: what comes before the first heading, then one group per heading. */
function briefGroups(brief: string): Group[] {
  const groups: Group[] = [{ heading: null, blocks: [] }];
  const tokens = markdown.parse(brief, {});
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.level !== 0) continue;
    const current = groups.at(-1)!;
    if (token.type === 'heading_open') {
      groups.push({ heading: tokens[i + 1]!.content.trim(), blocks: [] });
    } else if (token.type === 'bullet_list_open' || token.type === 'ordered_list_open') {
      const items: string[] = [];
      for (i++; i < tokens.length && tokens[i]!.level > 0; i++) {
        const t = tokens[i]!;
        if (t.type === 'list_item_open' && t.level === 1) items.push('');
        else if (t.type === 'inline') items[items.length - 1] = `${items.at(-1)} ${t.content}`.trim();
      }
      current.blocks.push({ kind: 'list', ordered: token.type === 'ordered_list_open', items: items.filter(Boolean) });
    } else if (token.type.endsWith('_open')) {
      const close = token.type.replace(/_open$/, '_close');
      const parts: string[] = [];
      for (i++; i < tokens.length && !(tokens[i]!.type === close && tokens[i]!.level === 0); i++) {
        if (tokens[i]!.type === 'inline') parts.push(tokens[i]!.content);
      }
      if (parts.length > 0) current.blocks.push({ kind: 'paragraph', text: parts.join('\n') });
    } else if (token.content.trim() !== '') {
      // code blocks and raw HTML: their text, shown as text
      current.blocks.push({ kind: 'paragraph', text: token.content.trim() });
    }
  }
  return groups.filter((g) => g.heading !== null || g.blocks.length > 0);
}

const plain = (text: string) =>
  text
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(\*|_)(.+?)\1/g, '$2')
    .replace(/\s+/g, ' ')
    .trim();

const sentence = (text: string) => clip(text.charAt(0).toUpperCase() + text.slice(1), 400);

/** "**Title**: text", "Title — text" → a titled item; anything else is text alone. */
function item(text: string) {
  const match = /^(?:\*\*(.{1,80}?)\*\*|([^:—–]{1,60}))\s*(?::|—|–| - )\s*(.+)$/s.exec(text);
  if (match === null) return { title: '', text: sentence(plain(text)) };
  return { title: clip(plain(match[1] ?? match[2]!), 80), text: sentence(plain(match[3]!)) };
}

const asMarkdown = (blocks: Block[]) =>
  blocks
    .map((b) =>
      b.kind === 'paragraph' ? b.text : b.items.map((x, n) => `${b.ordered ? `${n + 1}.` : '-'} ${x}`).join('\n'),
    )
    .join('\n\n');

/** A headed part of the brief as a section: lists become value points or steps, the rest prose. */
function sectionOf(heading: string, blocks: Block[]): PageSection | null {
  const lists = blocks.filter((b) => b.kind === 'list');
  const paragraphs = blocks.filter((b) => b.kind === 'paragraph');
  const last = blocks.at(-1);
  if (lists.length === 1 && last?.kind === 'list' && last.items.length <= MAX_ITEMS) {
    const intro = clip(plain(paragraphs.map((p) => p.text).join(' ')), 400);
    const items = last.items.map(item);
    return last.ordered ? { kind: 'steps', heading, intro, items } : { kind: 'benefits', heading, intro, items };
  }
  const body = clip(asMarkdown(blocks), 3000);
  return body === '' ? null : { kind: 'text', heading, body };
}

const PROOF_TYPES = new Set(['proof-point', 'proof_point', 'proof', 'quote', 'testimonial']);

/** Quotes and proof points of the tenant's topics, word for word ("… — Name, Title" gives the attribution). */
function proofSection(knowledge: GenerationTopic[]): PageSection | null {
  const items = knowledge
    .flatMap((topic) => topic.entries)
    .filter((entry) => PROOF_TYPES.has(entry.type.toLowerCase()))
    .slice(0, 3)
    .map((entry) => {
      const quoted = /^(.+?)\s+[—–]\s+([^—–]{1,120})$/s.exec(entry.content.trim());
      return quoted === null || entry.type.startsWith('proof')
        ? { quote: clip(entry.content.trim(), 400), attribution: '' }
        : { quote: clip(quoted[1]!, 400), attribution: quoted[2]!.trim() };
    });
  return items.length === 0 ? null : { kind: 'proof', heading: '', items };
}

/** Questions and answers: a `question` entry with the `answer` entry after it, in the same topic. */
function faqSection(knowledge: GenerationTopic[]): PageSection | null {
  const items: { question: string; answer: string }[] = [];
  for (const topic of knowledge) {
    topic.entries.forEach((entry, i) => {
      const next = topic.entries[i + 1];
      if (entry.type.toLowerCase() === 'question' && next?.type.toLowerCase() === 'answer') {
        items.push({ question: clip(entry.content.trim(), 200), answer: clip(next.content.trim(), 1200) });
      }
    });
  }
  return items.length === 0 ? null : { kind: 'faq', heading: 'Frequently asked questions', items: items.slice(0, 8) };
}

function writeCopy(input: GenerationInput): PageCopy {
  const fill = fillPlaceholders(input);
  const company = companyOf(input);
  const person = input.person?.name ?? null;
  const groups = briefGroups(fill(input.page.pageContext));
  const introBlocks = groups[0]?.heading === null ? groups[0].blocks : [];
  const lead = introBlocks[0]?.kind === 'paragraph' ? introBlocks[0] : null;
  const metadataDescription = input.effectiveMetadata.description;
  const subheadline = clip(
    lead !== null ? plain(lead.text) : typeof metadataDescription === 'string' ? metadataDescription : '',
    400,
  );

  const personal: PageSection[] = [];
  const rest = introBlocks.slice(lead === null ? 0 : 1);
  if (rest.length > 0) personal.push({ kind: 'text', heading: '', body: clip(asMarkdown(rest), 3000) });
  const supplementary = input.version.supplementaryContext?.trim();
  if (supplementary) personal.push({ kind: 'text', heading: `For ${company}`, body: clip(fill(supplementary), 3000) });
  const knowledge = [proofSection(input.knowledge), faqSection(input.knowledge)].filter((s) => s !== null);
  const fromBrief = groups
    .filter((g) => g.heading !== null)
    .map((g) => sectionOf(clip(plain(g.heading!), 120), g.blocks))
    .filter((s) => s !== null);
  const room = MAX_SECTIONS - personal.length - knowledge.length;
  const sections = [...personal, ...fromBrief.slice(0, Math.max(0, room)), ...knowledge].slice(0, MAX_SECTIONS);

  const headline = clip(fill(input.page.title).trim(), 140) || input.audience.effectiveName;
  const metadataTitle = input.effectiveMetadata.title;
  return {
    hero: {
      eyebrow: clip(person !== null && person !== company ? `For ${person} · ${company}` : `For ${company}`, 80),
      headline,
      subheadline,
    },
    sections,
    actions: input.page.actions.map((action) => ({
      actionId: action.actionId,
      buttonTitle: clip(fill(action.buttonTitle).trim(), 40) || 'Continue',
      purpose: clip(fill(action.purpose).trim(), 200),
    })),
    seo: {
      title: clip(typeof metadataTitle === 'string' && metadataTitle.trim() !== '' ? metadataTitle : headline, 70),
      description: clip(subheadline, 160),
    },
  };
}
