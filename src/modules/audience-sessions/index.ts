/** What other modules may use of audience sessions: the page runtime records visits through these. */
export {
  ENGAGED_SECONDS,
  recordActivity,
  SESSION_IDLE_MS,
  SessionTokens,
  startSession,
  type SessionRef,
  type Totals,
} from './audience-sessions.collect.js';
