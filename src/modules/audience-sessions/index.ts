/** What other modules may use of audience sessions: the page runtime records visits through these. */
export { recordActivity, SessionTokens, startSession } from './audience-sessions.collect.js';
export { markFormSubmitted } from './audience-sessions.queries.js';
