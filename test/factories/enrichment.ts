import { pino } from 'pino';
import { typeid } from 'typeid-js';
import type { Database } from '../../src/db/connect.js';
import type { Clock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { domainEnricher, type Enricher } from '../../src/modules/enrichment/enrichment.enricher.js';
import type { LeaseSettings } from '../../src/workers/leased-jobs.js';
import { enqueueEnrichment, type EnrichmentRequest } from '../../src/modules/enrichment/index.js';
import {
  ENRICHMENT_SETTINGS,
  enrichmentJobs,
  type EnrichmentDeps,
} from '../../src/modules/enrichment/enrichment.worker.js';
import type { Tenant } from '../harness.js';
import { makePerson } from './persons.js';

/**
 * A form submission as the forms module will queue it: a person made through the person-log path
 * and its enrichment job enqueued in a transaction. The submission id is only syntactic here.
 */
export async function submitForEnrichment(
  tenant: Tenant,
  clock: Clock,
  email: string,
  options: { personEmail?: string; name?: string | null; company?: string | null; personCreated?: boolean } = {},
): Promise<{ personId: string; formSubmissionId: string }> {
  const personId = await makePerson(tenant.scope, clock, { email: options.personEmail ?? email });
  const formSubmissionId = typeid('formsub').toString();
  const request: EnrichmentRequest = {
    formSubmissionId,
    personId,
    email,
    name: options.name ?? null,
    company: options.company ?? null,
    pageId: newId('page'),
    audienceId: newId('audience'),
    // As if the submission had created the person (a form's usual first contact).
    personCreated: options.personCreated ?? true,
  };
  await tenant.scope.transaction((tx) => enqueueEnrichment(tx, request, clock));
  return { personId, formSubmissionId };
}

/** The enrichment runner as the worker builds it, with the built-in enricher and a 30 s lease. */
export function enrichmentRunner(
  database: Database,
  clock: Clock,
  overrides: { enricher?: Enricher; settings?: Partial<LeaseSettings>; createsAccounts?: boolean } = {},
) {
  const deps: EnrichmentDeps = {
    database,
    clock,
    logger: pino({ level: 'silent' }),
    enricher: overrides.enricher ?? domainEnricher,
    // As a deployment with FORM_CREATES_ACCOUNTS=true (the worker itself reads the setting).
    createsAccounts: overrides.createsAccounts ?? true,
    settings: { ...ENRICHMENT_SETTINGS, leaseMs: 30_000, ...overrides.settings },
  };
  return enrichmentJobs(deps);
}

/** The form.enriched / form.enrichment_failed events of a submission, oldest first. */
export async function enrichmentEvents(database: Database, formSubmissionId: string) {
  const rows = await database.kysely
    .selectFrom('events')
    .select(['type', 'data'])
    .where('type', 'in', ['form.enriched', 'form.enrichment_failed'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.filter((row) => row.data.formSubmissionId === formSubmissionId);
}

export async function jobOf(database: Database, formSubmissionId: string) {
  return database.kysely
    .selectFrom('enrichment_jobs')
    .selectAll()
    .where('form_submission_id', '=', formSubmissionId)
    .executeTakeFirstOrThrow();
}
