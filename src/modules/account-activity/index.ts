export { activityForward, latestActivityOfDomain, recordAccountActivity } from './account-activity.queries.js';
