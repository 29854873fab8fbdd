/**
 * What other modules may use of form submissions: the page runtime renders the form from the
 * field rules and hands each submission to `submitForm` (docs/forms.md).
 */
export {
  FORM_FIELDS,
  FORM_LIMITS,
  HIDDEN,
  HONEYPOT_FIELD,
  readSubmission,
  type FieldProblem,
  type FormField,
  type FormValues,
} from './form-submissions.rules.js';
export { submitForm } from './form-submissions.service.js';
