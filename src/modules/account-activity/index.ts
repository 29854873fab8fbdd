export {
  activityForward,
  latestActivityOfDomain,
  recordAccountActivity,
  recordActivityOfPerson,
} from './account-activity.queries.js';
