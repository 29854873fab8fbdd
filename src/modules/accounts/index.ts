/** What other modules may use of accounts. */
export { findAccountByDomain } from './accounts.queries.js';
