/** What other modules may use of accounts. */
export { findAccountByDomain } from './accounts.queries.js';
export { ensureAccount, getAccount } from './accounts.service.js';
