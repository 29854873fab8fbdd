/** What other modules may use of audience sessions: the page runtime records visits through these. */
export { recordActivity, SessionTokens, startSession, type SessionRef } from './audience-sessions.collect.js';
export { markFormSubmitted } from './audience-sessions.queries.js';
