import type { ServiceModule } from '../module.js';
import { formSubmissionRetentionWorkers } from './form-submissions.retention.js';

/** Form submissions: written by the page runtime (docs/forms.md); here, their retention (docs/privacy.md). */
export const formSubmissionsModule: ServiceModule = {
  name: 'formSubmissions',
  workers: formSubmissionRetentionWorkers,
};
