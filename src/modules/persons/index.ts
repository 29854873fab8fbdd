/** What other modules may use of persons: the identity rules and the Person shape. */
export { findPerson } from './persons.queries.js';
export { PersonEmail, PersonName, PHONE_PATTERN, PhoneNumber, SocialProfileUrl } from './persons.schemas.js';
export { getPerson, linkedPersons, normalizeIdentity, patchPerson, resolvePerson } from './persons.service.js';
