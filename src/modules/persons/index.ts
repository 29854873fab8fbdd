/** What other modules may use of persons: the identity rules and the Person shape. */
export { findPerson } from './persons.queries.js';
export { PersonEmail, PersonName, PhoneNumber, SocialProfileUrl, type Person } from './persons.schemas.js';
export { linkedPersons, normalizeIdentity, patchPerson, resolvePerson, toPerson } from './persons.service.js';
