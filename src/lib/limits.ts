/** Limits shared by several parts of the service, named once. */

/**
 * The longest failure text kept with a job or put in an event (a version's `failure.reason`, an
 * enrichment job's `last_error`): enough for any error message, bounded whatever a provider or a
 * generator threw.
 */
const MAX_FAILURE_TEXT_LENGTH = 2000;

/** `text` cut to MAX_FAILURE_TEXT_LENGTH characters. */
export function failureText(text: string): string {
  return text.slice(0, MAX_FAILURE_TEXT_LENGTH);
}
