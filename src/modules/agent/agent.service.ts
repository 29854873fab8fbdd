import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { countQuestion, SESSION_IDLE_MS } from '../audience-sessions/index.js';
import { writePersonLog } from '../person-logs/index.js';
import type { RankedPassage } from '../../db/dialect.js';
import type { AgentMessageSource } from '../../db/schema.js';
import type { LlmClient } from '../../llm/client.js';
import { LlmError } from '../../llm/errors.js';
import type { TokenBudget } from '../../llm/token-budget.js';
import { capped, extractiveAnswer, type Answer } from './agent.answer.js';
import { agentMessages, AnswerFilter, NO_ANSWER, withoutForeignLinks } from './agent.prompt.js';
import { retrieve } from './agent.knowledge.js';
import * as q from './agent.messages.queries.js';
import type { AgentMessage } from './agent.schemas.js';

/** The page a question is asked on: its live version and who it addresses. */
export interface AskedPage {
  pageId: string;
  audienceId: string;
  versionId: string;
  /** The person whose own page this is, if any. */
  personId: string | null;
  /** The page's primary action, offered when nothing known answers. */
  action: { title: string; href: string | null } | null;
  /** Every action of the page with an address: the only links an answer may carry. */
  actions: { title: string; href: string }[];
}

export interface AskInput {
  page: AskedPage;
  question: string;
  /** The visit, when the page script recorded one (its session token was valid for this page). */
  sessionId: string | null;
}

export interface AskRules {
  questionsPerSession: number;
  answerMaxChars: number;
}

/**
 * The language model answers come from, when one is configured (docs/agent.md, Answers with a
 * model): the process's shared client (generation's, so LLM_CONCURRENCY bounds both), the model
 * to ask (LLM_AGENT_MODEL, else LLM_MODEL), and the tenants' daily token budget.
 */
export interface AgentModel {
  client: LlmClient;
  model: string | null;
  budget: TokenBudget;
}

/** What the answer of a question was made with; `fallback`: why the model's answer was not used. */
interface AnsweredBy {
  by: 'model' | 'extract';
  fallback?: string;
}

/** An answer as it is written: its text in pieces, then the whole answer. */
export type AnswerStream = AsyncGenerator<string, Answer & AnsweredBy>;

/** The stored messages of a question whose answer is being written (model answers). */
interface Pending {
  answerMessageId: string | null;
  email: string;
}

/** The longest piece of a passage sent to the model (the prompt stays small; the best part is the start). */
const PASSAGE_PROMPT_CHARS = 1_500;

/** The extractive answer's words, as pieces to stream (the same as a model's would come). */
function* words(text: string): Generator<string> {
  for (const piece of text.match(/[^\s]+\s*/gu) ?? []) yield piece;
}

/**
 * Answers a visitor's question (docs/agent.md) and yields the answer's text as it comes; returns
 * the whole answer (its final text, which the stream's last line carries: a model's answer that
 * failed half-way is replaced by the extractive one). Retrieves the passages first, then:
 *
 * - without a model (or without any passage): the extractive answer, then one transaction counts
 *   the question in the visit (refused when the visit has asked its limit), stores the question
 *   and the answer, and writes the person's log when the visitor is known;
 * - with a model: the question is counted and stored first (a refused question never reaches the
 *   provider), the answer is streamed from the model through AnswerFilter (links, rules), and a
 *   second transaction stores the answer and the person's log. Any failure of the model (provider
 *   error, over the token budget, a reply that repeats the rules) gives the extractive answer.
 *
 * A refused question writes nothing and throws before anything is yielded.
 */
export async function* askQuestion(
  scope: TenantScope,
  clock: Clock,
  input: AskInput,
  rules: AskRules,
  model: AgentModel | null = null,
): AnswerStream {
  const { page } = input;
  const { terms, passages } = await retrieve(scope, page.versionId, input.question);
  // Quoted material carries no address but the page's actions either (an entry may have been talked into one).
  const extractive = (): Answer => {
    const quoted = extractiveAnswer(terms, passages, page.action, rules.answerMaxChars);
    return {
      ...quoted,
      text: withoutForeignLinks(
        quoted.text,
        page.actions.map((a) => a.href),
      ),
    };
  };
  if (model === null || passages.length === 0) {
    const answer = extractive();
    await scope.transaction(async (tx) => {
      const pending = await storeQuestion(tx, clock, input, rules, answer);
      await logQuestion(tx, clock, input, pending.email, answer);
    });
    yield* words(answer.text);
    return { ...answer, by: 'extract' };
  }
  const pending = await scope.transaction((tx) => storeQuestion(tx, clock, input, rules, null));
  let answer: (Answer & AnsweredBy) | null = null;
  const progress = { sent: '' };
  try {
    const attempt = yield* modelAnswer(scope, input, passages, model, rules, progress);
    answer = 'fallback' in attempt ? { ...extractive(), by: 'extract', fallback: attempt.fallback } : attempt;
    return answer;
  } finally {
    // Also when the reader left half-way: what they were shown by then is stored (cut short: "…").
    const stored =
      answer ??
      (progress.sent.trim() !== ''
        ? { text: `${progress.sent.trim()}…`, sources: sourcesOf(passages), answered: true }
        : extractive());
    await scope.transaction(async (tx) => {
      if (pending.answerMessageId !== null) {
        await q.completeMessage(tx, pending.answerMessageId, stored.text, stored.sources);
      }
      await logQuestion(tx, clock, input, pending.email, stored);
    });
  }
}

/**
 * Counts the question in its visit and stores it with its answer (`answer` null: an empty answer
 * message, completed once written). Without a visit nothing is stored. Throws the refusal.
 */
async function storeQuestion(
  tx: TenantScope,
  clock: Clock,
  input: AskInput,
  rules: AskRules,
  answer: Answer | null,
): Promise<Pending> {
  const { page } = input;
  if (input.sessionId === null) return { answerMessageId: null, email: '' };
  const now = clock.now();
  const counted = await countQuestion(tx, {
    sessionId: input.sessionId,
    pageId: page.pageId,
    audienceId: page.audienceId,
    max: rules.questionsPerSession,
    now: now.toISOString(),
    endedBefore: new Date(now.getTime() - SESSION_IDLE_MS).toISOString(),
  });
  if (counted === null) {
    throw new AppError(
      'question_limit_reached',
      `This visit has asked the ${rules.questionsPerSession} questions it may ask, or has ended. Reload the page to start again.`,
      [],
      429,
    );
  }
  const position = await q.countMessages(tx, input.sessionId);
  const createdAt = isoNow(clock);
  const common = { session_id: input.sessionId, page_id: page.pageId, created_at: createdAt };
  const answerMessageId = newId('agentMessage');
  await q.insertMessages(tx, [
    { ...common, id: newId('agentMessage'), position, role: 'visitor', content: input.question, sources: [] },
    {
      ...common,
      id: answerMessageId,
      position: position + 1,
      role: 'agent',
      content: answer?.text ?? '',
      sources: answer?.sources ?? [],
    },
  ]);
  return { answerMessageId, email: counted.formSubmissionEmail };
}

/** The question in the person's log, when the visitor is known (their own page, or a form sent in this visit). */
async function logQuestion(tx: TenantScope, clock: Clock, input: AskInput, email: string, answer: Answer) {
  const { page } = input;
  const identity = page.personId !== null ? { personId: page.personId } : email !== '' ? { email } : null;
  if (identity === null) return;
  await writePersonLog(tx, clock, {
    source: 'page-agent',
    type: 'agent-question',
    ...identity,
    payload: {
      question: input.question,
      answer: answer.text,
      answered: answer.answered,
      sources: answer.sources,
      pageId: page.pageId,
      audienceId: page.audienceId,
      ...(input.sessionId !== null ? { audienceSessionId: input.sessionId } : {}),
    },
  });
}

/**
 * The model's answer from the passages, streamed as it comes (docs/agent.md, Answers with a
 * model); `{ fallback }` with the reason when it cannot be used. Nothing is let out until the
 * reply is known not to be NO_ANSWER; it stops at AGENT_ANSWER_MAX_CHARS.
 */
async function* modelAnswer(
  scope: TenantScope,
  input: AskInput,
  passages: RankedPassage[],
  model: AgentModel,
  rules: AskRules,
  progress: { sent: string },
): AsyncGenerator<string, (Answer & AnsweredBy) | { fallback: string }> {
  const { page } = input;
  const allowed = page.actions.map((a) => a.href);
  const sent = passages.map((p) => ({ ...p, body: capped(p.body, PASSAGE_PROMPT_CHARS) }));
  const messages = agentMessages({ actions: page.actions }, sent, input.question);
  const filter = new AnswerFilter(allowed);
  let shown = '';
  let decided = false;
  let stopped = false;
  try {
    const stream = model.client.stream({
      messages,
      model: model.model ?? undefined,
      // about four characters a token, and room for the words the filter takes out
      maxOutputTokens: Math.max(64, Math.ceil(rules.answerMaxChars / 2)),
      budget: model.budget.for(scope),
    });
    for await (const piece of stream) {
      const out = filter.push(piece);
      if (filter.leaks()) return { fallback: 'the model repeated its instructions' };
      if (!decided) {
        const start = filter.raw.trimStart();
        if (start.length <= NO_ANSWER.length && NO_ANSWER.startsWith(start)) {
          shown += out;
          continue;
        }
        decided = true;
        if (start.startsWith(NO_ANSWER)) break;
        if (shown !== '') {
          progress.sent += shown;
          yield shown;
        }
      }
      if (out === '') continue;
      if (shown.length + out.length > rules.answerMaxChars) {
        // What fits of this piece, cut at a word (a provider may send the whole answer at once).
        const whole = capped(shown + out, rules.answerMaxChars);
        const fitting = whole.startsWith(shown) ? whole.slice(shown.length) : '';
        if (fitting !== '') {
          shown += fitting;
          progress.sent += fitting;
          yield fitting;
        }
        stopped = true;
        break;
      }
      shown += out;
      progress.sent += out;
      yield out;
    }
  } catch (error) {
    return { fallback: error instanceof LlmError ? error.message : `the model failed: ${String(error)}` };
  }
  if (filter.raw.trimStart().startsWith(NO_ANSWER)) {
    return { ...extractiveAnswer([], [], page.action, rules.answerMaxChars), by: 'model' };
  }
  if (!stopped) {
    const rest = filter.end();
    if (filter.leaks()) return { fallback: 'the model repeated its instructions' };
    if (!decided && shown !== '') {
      progress.sent += shown;
      yield shown;
    }
    if (shown.length + rest.length <= rules.answerMaxChars) {
      shown += rest;
      if (rest !== '') {
        progress.sent += rest;
        yield rest;
      }
    } else stopped = true;
  }
  const text = stopped ? capped(shown, rules.answerMaxChars) : shown.trim();
  if (text === '') return { fallback: 'the model gave an empty answer' };
  return { text, sources: sourcesOf(passages), answered: true, by: 'model' };
}

/** The passages given to the model, as sources (each label once). */
function sourcesOf(passages: RankedPassage[]): AgentMessageSource[] {
  const sources: AgentMessageSource[] = [];
  for (const p of passages) {
    if (!sources.some((s) => s.kind === p.source_kind && s.label === p.label)) {
      sources.push({ kind: p.source_kind, label: p.label });
    }
  }
  return sources;
}

/** A session's conversation, oldest first (the session is known to be the page's). */
export async function listMessages(scope: TenantScope, sessionId: string, window: KeysetWindow) {
  const [rows, totalCount] = await Promise.all([
    q.listMessages(scope, sessionId, window),
    q.countMessages(scope, sessionId),
  ]);
  const items: (AgentMessage & { position: number })[] = rows.map((r) => ({
    role: r.role as AgentMessage['role'],
    content: r.content,
    sources: r.sources,
    createdAt: r.created_at,
    position: r.position,
  }));
  return { items, totalCount };
}
