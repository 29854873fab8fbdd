/**
 * What other modules may use of person logs: the one code path that finds or creates a person and
 * writes an entry against it (endpoint 11), so every writer follows the same identity rules.
 */
export { writePersonLog } from './person-logs.service.js';
