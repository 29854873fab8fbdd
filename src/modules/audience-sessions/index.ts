/** What other modules may use of audience sessions: the page runtime records visits through these. */
export {
  activityOf,
  newSession,
  sessionAudience,
  SESSION_IDLE_MS,
  SessionTokens,
  type SessionAudience,
  type SessionRef,
} from './audience-sessions.collect.js';
export { SessionIngest } from './audience-sessions.ingest.js';
export { countQuestion, markFormSubmitted, sessionOfPage } from './audience-sessions.queries.js';
export { sessionFilter } from './audience-sessions.service.js';
export { summarizeSessions, visitsOfPerson, type SessionSummary } from './audience-sessions.summary.js';
