import type { Migration } from './column-types.js';
import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-persons-accounts.js';

/**
 * Every migration, in order. Names are permanent: once a migration has run anywhere it is never
 * edited or renamed; a change to the schema is a new file here.
 */
export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-persons-accounts': m0002,
};
