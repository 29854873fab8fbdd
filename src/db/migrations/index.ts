import type { Migration } from './column-types.js';
import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-persons-accounts.js';
import * as m0003 from './0003-audiences.js';
import * as m0004 from './0004-assets-topics.js';
import * as m0005 from './0005-webhooks.js';
import * as m0006 from './0006-page-runtime.js';
import * as m0009 from './0009-performance.js';
import * as m0014 from './0014-secrets.js';

/**
 * Every migration, in order. Names are permanent: once a migration has run anywhere it is never
 * edited or renamed; a change to the schema is a new file here.
 */
export const migrations: Record<string, Migration> = {
  '0001-foundation': m0001,
  '0002-persons-accounts': m0002,
  '0003-audiences': m0003,
  '0004-assets-topics': m0004,
  '0005-webhooks': m0005,
  '0006-page-runtime': m0006,
  '0009-performance': m0009,
  '0014-secrets': m0014,
};
