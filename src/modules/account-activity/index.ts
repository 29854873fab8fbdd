export { latestActivityOfDomain, recordAccountActivity } from './account-activity.queries.js';
