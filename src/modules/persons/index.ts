/** What other modules may use of persons: the identity rules and the Person shape. */
export { findPerson, insertUnlessTaken, type PersonRow } from './persons.queries.js';
export { PersonEmail, PersonName, PHONE_PATTERN, PhoneNumber, SocialProfileUrl } from './persons.schemas.js';
export { normalizeIdentity } from './persons.identity.js';
export { personToCreate, resolvePerson } from './persons.resolution.js';
export { getPerson, linkedPersons, patchPerson, searchPersons } from './persons.service.js';
