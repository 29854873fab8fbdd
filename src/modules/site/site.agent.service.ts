import type { Database } from '../../db/connect.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { askQuestion, type AgentModel, type AnswerStream, type AskedPage } from '../agent/index.js';
import { SessionIngest, type SessionTokens } from '../audience-sessions/index.js';
import { pageModel } from './site.model.js';
import { findServedVersion } from './site.queries.js';
import type { PageSigner } from './site.tokens.js';

export interface AgentLimits {
  questionMaxChars: number;
  questionsPerSession: number;
  answerMaxChars: number;
}

/** A question as posted: the page's view token, the question, the visit's session token if any. */
export interface PostedQuestion {
  v: unknown;
  q: unknown;
  s: unknown;
}

/** `answer`: the answer's text as it comes; its return value is the whole answer. */
export type AskOutcome =
  { kind: 'no-page' } | { kind: 'answered'; page: AskedPage; question: string; answer: AnswerStream };

/**
 * A visitor's question to a page's agent (docs/agent.md): which page it is (the signed view token
 * of the page, the audience's published version, which must show the agent), the question within
 * its limits, the visit (a session token of this very page), then the agent module answers.
 */
export class AgentService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly signer: PageSigner,
    private readonly tokens: SessionTokens,
    private readonly limits: AgentLimits,
    /** The language model answers come from; null: extractive answers only. */
    private readonly model: AgentModel | null = null,
  ) {}

  /** The checked question text (422 when empty or too long); writes nothing. */
  question(raw: unknown): string {
    const question = typeof raw === 'string' ? raw.replace(/\s+/gu, ' ').trim() : '';
    if (question === '') {
      throw new AppError('validation_failed', 'Please type a question.', [
        { path: '/body/q', message: 'must not be empty' },
      ]);
    }
    if ([...question].length > this.limits.questionMaxChars) {
      throw new AppError(
        'validation_failed',
        `Please keep your question under ${this.limits.questionMaxChars} characters.`,
        [{ path: '/body/q', message: `must be at most ${this.limits.questionMaxChars} characters` }],
      );
    }
    return question;
  }

  /** The audience the view token names, or null (not a page of this host's tenant). */
  audienceOf(tenantId: string, view: unknown): string | null {
    return typeof view === 'string' && view.length <= 300 ? this.signer.readViewToken(tenantId, view) : null;
  }

  async ask(tenantId: string, audienceId: string, posted: PostedQuestion): Promise<AskOutcome> {
    const question = this.question(posted.q);
    const scope = TenantScope.of(this.database, tenantId);
    const served = await findServedVersion(scope, audienceId);
    if (served === undefined || !served.is_new_page_agent) return { kind: 'no-page' };
    const model = pageModel(served.artifact, () => '');
    const primary = model.headerAction ?? model.actions[0] ?? null;
    const ref = typeof posted.s === 'string' && posted.s.length <= 300 ? this.tokens.read(tenantId, posted.s) : null;
    const sessionId =
      ref !== null && ref.audienceId === audienceId && ref.pageId === served.page_id ? ref.sessionId : null;
    const page: AskedPage = {
      pageId: served.page_id,
      audienceId,
      versionId: served.version_id,
      personId: served.person_id,
      action: primary === null ? null : { title: primary.buttonTitle, href: primary.href },
      actions: model.actions.flatMap((a) => (a.href === null ? [] : [{ title: a.buttonTitle, href: a.href }])),
    };
    // Visits are written in batches (SessionIngest): the one this question counts in must be there.
    if (sessionId !== null) await SessionIngest.flushAll();
    const answer = askQuestion(scope, this.clock, { page, question, sessionId }, this.limits, this.model);
    return { kind: 'answered', page, question, answer };
  }
}
