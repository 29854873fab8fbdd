import { pino } from 'pino';
import { typeid } from 'typeid-js';
import type { Database } from '../../src/db/connect.js';
import type { Clock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { domainEnricher } from '../../src/modules/enrichment/enrichment.enricher.js';
import { enqueueEnrichment, type EnrichmentRequest } from '../../src/modules/enrichment/index.js';
import {
  processNextEnrichment,
  type EnrichmentDeps,
  type EnrichmentStep,
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
  options: { personEmail?: string; name?: string | null; company?: string | null } = {},
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
  };
  await tenant.scope.transaction((tx) => enqueueEnrichment(tx, request, clock));
  return { personId, formSubmissionId };
}

export function enrichmentDeps(
  database: Database,
  clock: Clock,
  overrides: Partial<EnrichmentDeps> = {},
): EnrichmentDeps {
  return {
    database,
    clock,
    logger: pino({ level: 'silent' }),
    notify: () => {},
    enricher: domainEnricher,
    leaseMs: 30_000,
    ...overrides,
  };
}

/** Runs the worker's steps until nothing is due (what the worker does in the background). */
export async function drainEnrichment(deps: EnrichmentDeps): Promise<EnrichmentStep[]> {
  const steps: EnrichmentStep[] = [];
  for (let step = await processNextEnrichment(deps); step !== null; step = await processNextEnrichment(deps)) {
    steps.push(step);
  }
  return steps;
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
