import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError } from '../../http/errors.js';
import type { KeysetWindow } from '../../http/pagination.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { countQuestion, SESSION_IDLE_MS } from '../audience-sessions/index.js';
import { writePersonLog } from '../person-logs/index.js';
import { extractiveAnswer, type Answer } from './agent.answer.js';
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
 * Answers a visitor's question (docs/agent.md): retrieves the passages, answers from them, then in
 * one transaction counts the question in the visit (refused when the visit has asked its limit),
 * stores the question and the answer with the visit, and, when the visitor is known (their own
 * page, or a form sent in this visit), writes the question to the person's log as endpoint 11
 * does. A refused question writes nothing.
 */
export async function askQuestion(scope: TenantScope, clock: Clock, input: AskInput, rules: AskRules): Promise<Answer> {
  const { page } = input;
  const { terms, passages } = await retrieve(scope, page.versionId, input.question);
  const answer = extractiveAnswer(terms, passages, page.action, rules.answerMaxChars);
  await scope.transaction(async (tx) => {
    const now = clock.now();
    let email = '';
    if (input.sessionId !== null) {
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
      email = counted.formSubmissionEmail;
      const position = await q.countMessages(tx, input.sessionId);
      const createdAt = isoNow(clock);
      const common = { session_id: input.sessionId, page_id: page.pageId, created_at: createdAt };
      await q.insertMessages(tx, [
        { ...common, id: newId('agentMessage'), position, role: 'visitor', content: input.question, sources: [] },
        {
          ...common,
          id: newId('agentMessage'),
          position: position + 1,
          role: 'agent',
          content: answer.text,
          sources: answer.sources,
        },
      ]);
    }
    const identity = page.personId !== null ? { personId: page.personId } : email !== '' ? { email } : null;
    if (identity !== null) {
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
  });
  return answer;
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
