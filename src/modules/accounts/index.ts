/** What other modules may use of accounts. */
export { findAccount, findAccountByDomain } from './accounts.queries.js';
export { ensureAccount, getAccount, listAccounts } from './accounts.service.js';
