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
export { markFormSubmitted } from './audience-sessions.queries.js';
