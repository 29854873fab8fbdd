/** What other modules may use of audience sessions: the page runtime records visits through these. */
export {
  recordActivity,
  SESSION_IDLE_MS,
  SessionTokens,
  startSession,
  type SessionRef,
} from './audience-sessions.collect.js';
export { countQuestion, markFormSubmitted, sessionOfPage } from './audience-sessions.queries.js';
