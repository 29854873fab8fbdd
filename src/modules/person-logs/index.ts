/**
 * What other modules may use of person logs: the one code path that finds or creates a person and
 * writes an entry against it (endpoint 11), so every writer follows the same identity rules; and
 * a person's latest entries (what generation reads of their activity).
 */
export { recentPersonLogs } from './person-logs.queries.js';
export { listPersonLogs, writePersonLog } from './person-logs.service.js';
