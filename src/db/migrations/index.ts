import type { Migration } from './column-types.js';
import * as m0001 from './0001-foundation.js';
import * as m0002 from './0002-persons-accounts.js';
import * as m0003 from './0003-audiences.js';
import * as m0004 from './0004-assets-topics.js';
import * as m0005 from './0005-webhooks.js';
import * as m0006 from './0006-page-runtime.js';
import * as m0009 from './0009-performance.js';
import * as m0010 from './0010-forms.js';
import * as m0013 from './0013-fairness.js';
import * as m0015 from './0015-webhook-api.js';
import * as m0016 from './0016-enrichment.js';
import * as m0017 from './0017-secrets.js';
import * as m0018 from './0018-fair-jobs.js';
import * as m0025 from './0025-generation-usage.js';
import * as m0026 from './0026-llm-token-days.js';
import * as m0030 from './0030-domain-verification.js';
import * as m0031 from './0031-domain-checks.js';
import * as m0040 from './0040-audience-authoring.js';
import * as m0045 from './0045-asset-lifecycle.js';
import * as m0050 from './0050-agent-passages.js';
import * as m0051 from './0051-agent-messages.js';
import * as m0060 from './0060-serving-revisions.js';
import * as m0065 from './0065-console.js';
import * as m0070 from './0070-page-lifecycle.js';
import * as m0075 from './0075-review-before-publish.js';
import * as m0080 from './0080-audience-import.js';
import * as m0090 from './0090-person-erasures.js';
import * as m0091 from './0091-privacy-retention.js';
import * as m0092 from './0092-form-identity.js';
import * as m0100 from './0100-audience-imports.js';
import * as m0120 from './0120-tenant-daily-caps.js';

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
  '0010-forms': m0010,
  '0013-fairness': m0013,
  '0015-webhook-api': m0015,
  '0016-enrichment': m0016,
  '0017-secrets': m0017,
  '0018-fair-jobs': m0018,
  '0025-generation-usage': m0025,
  '0026-llm-token-days': m0026,
  '0030-domain-verification': m0030,
  '0031-domain-checks': m0031,
  '0040-audience-authoring': m0040,
  '0045-asset-lifecycle': m0045,
  '0050-agent-passages': m0050,
  '0051-agent-messages': m0051,
  '0060-serving-revisions': m0060,
  '0065-console': m0065,
  '0070-page-lifecycle': m0070,
  '0075-review-before-publish': m0075,
  '0080-audience-import': m0080,
  '0090-person-erasures': m0090,
  '0091-privacy-retention': m0091,
  '0092-form-identity': m0092,
  '0100-audience-imports': m0100,
  '0120-tenant-daily-caps': m0120,
};
