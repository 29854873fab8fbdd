import { bulkWriteConcurrency, bulkWriteYield } from '../../db/dialect.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError, validationFailed } from '../../http/errors.js';
import { validatorCompiler } from '../../http/validation.js';
import type { Clock } from '../../lib/clock.js';
import { canonicalDomain } from '../../lib/domain-name.js';
import { ensureAccount, findAccountByDomain } from '../accounts/index.js';
import { findPerson, normalizeIdentity, patchPerson, resolvePerson } from '../persons/index.js';
import { pageArchived, visiblePage } from './audiences.checks.js';
import * as q from './audiences.queries.js';
import {
  AudienceBatchItem,
  type Audience,
  type AudienceBatchItem as BatchItem,
  type AudienceBatchResult,
} from './audiences.schemas.js';
import { createAudienceOnLockedPage, getAudience } from './audiences.service.js';

/**
 * Creating audiences in bulk: `POST /v0/pages/{page_id}/audiences/batch` and the CSV import
 * (audiences.import.ts) run every item through `importItem`, which finds or creates whom the item
 * addresses with the rules of `POST /v0/person_logs` (persons' resolvePerson) and then either
 * answers the audience that identity already has on the page or creates one with createAudience's
 * checks and writes (createAudienceOnLockedPage: the API's one create path, which queues the first
 * generation). docs/api.md, Importing audiences.
 */

type BatchOutcome = 'created' | 'existing' | 'error';

/** A problem document of one item (paths relative to the item, e.g. `/person/email`). */
export interface ItemProblem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors: { path: string; message: string }[];
  [extension: string]: unknown;
}

export interface ItemResult {
  outcome: BatchOutcome;
  audienceId: string | null;
  personId: string | null;
  accountId: string | null;
  /** The audience as the API shows it (only when asked for: the import does without). */
  audience: Audience | null;
  problem: ItemProblem | null;
}

/** Rewrites the paths of an AppError thrown by a create-body service (`/body/x`) to `${to}/x`. */
async function rebased<R>(to: string, work: () => Promise<R> | R): Promise<R> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const errors = error.errors.map((e) => ({
      ...e,
      path: e.path === '/body' ? to : e.path.startsWith('/body/') ? `${to}${e.path.slice(5)}` : e.path,
    }));
    throw new AppError(error.code, error.detail, errors, error.status, error.extensions);
  }
}

/** The person an item names (by id or by identity), with what links it to an account. */
async function personOf(tx: TenantScope, clock: Clock, item: BatchItem) {
  if (item.person !== undefined) {
    const fields = item.person;
    const identity = await rebased('/person', () => normalizeIdentity(fields));
    const { person } = await rebased('/person', () => resolvePerson(tx, clock, fields, identity));
    return person;
  }
  if (item.personId !== undefined && item.personId !== null) {
    const person = await findPerson(tx, item.personId);
    if (person === undefined) throw validationFailed('/personId', 'must be the personId of a person of yours');
    return person;
  }
  return null;
}

/**
 * One item, inside its own transaction (or savepoint): whom it addresses, then the audience of the
 * page for that person (else that account), found or created. Throws an AppError (paths relative
 * to the item) for an item it refuses; what it wrote is then rolled back by the caller's scope.
 */
async function importItem(
  tx: TenantScope,
  clock: Clock,
  pageId: string,
  item: BatchItem,
  withAudience: boolean,
): Promise<ItemResult> {
  // The page first, locked: two items (or requests) for one identity cannot both create.
  const page = await visiblePage(tx, pageId, { lock: true });
  if (page.status === 'archived') throw pageArchived(pageId);
  const { person: _person, account, ...input } = item;
  if (item.person !== undefined && item.personId != null) {
    throw validationFailed('/person', 'must be omitted when personId is given');
  }
  if (account !== undefined && item.accountId != null) {
    throw validationFailed('/account', 'must be omitted when accountId is given');
  }
  if ((item.personId != null || item.person !== undefined) && item.accountId != null) {
    throw validationFailed('/accountId', 'must be omitted when personId is given (an audience addresses one)');
  }

  const person = await personOf(tx, clock, item);
  let accountId = item.accountId ?? null;
  if (account !== undefined) {
    let domain: string | null = null;
    if (account.domain !== undefined) {
      const canonical = canonicalDomain(account.domain);
      if (!canonical.ok) throw validationFailed('/account/domain', canonical.reason);
      domain = canonical.domain;
    } else if (person !== null) {
      domain = person.account_domain;
    }
    if (domain === null && person === null) {
      throw validationFailed('/account/domain', 'is required when no person is named (a name alone identifies nobody)');
    }
    if (domain !== null) {
      // Most rows of a list name a company an earlier row created: one look-up then, no writes.
      const known = await findAccountByDomain(tx, domain);
      const ensured =
        known !== undefined && (known.name !== null || account.name === undefined)
          ? known.id
          : (await ensureAccount(tx, clock, domain, account.name ?? null)).account.accountId;
      if (person === null) accountId = ensured;
      // The person's own domain is filled when it has none, as identities are: never overwritten.
      else if (person.domain === null && person.account_domain !== domain) {
        await patchPerson(tx, clock, person.id, { domain });
      }
    }
  }
  const personId = person?.id ?? null;
  if (personId === null && accountId === null) {
    throw validationFailed('', 'must name whom the audience addresses: person, personId, account or accountId');
  }

  const existing = await q.findAudienceAddressing(
    tx,
    pageId,
    personId !== null ? { personId } : { accountId: accountId! },
  );
  if (existing !== undefined) {
    return {
      outcome: 'existing',
      audienceId: existing.id,
      personId,
      accountId: personId === null ? accountId : null,
      audience: withAudience ? await getAudience(tx, pageId, existing.id) : null,
      problem: null,
    };
  }
  // The page is locked and open (above): createAudience's writes without a second look at it.
  const audienceId = await rebased('', () =>
    createAudienceOnLockedPage(tx, clock, pageId, {
      ...input,
      personId,
      accountId: personId === null ? accountId : null,
    }),
  );
  return {
    outcome: 'created',
    audienceId,
    personId,
    accountId: personId === null ? accountId : null,
    audience: withAudience ? await getAudience(tx, pageId, audienceId) : null,
    problem: null,
  };
}

function problemOf(error: AppError): ItemProblem {
  return {
    type: `urn:audience-pages:problem:${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    errors: error.errors,
    ...error.extensions,
  };
}

function failed(error: unknown): ItemResult {
  let appError: AppError;
  if (error instanceof AppError) appError = error;
  // A concurrent writer took what this item was about to (PostgreSQL): the item is refused whole.
  else if (isUniqueViolation(error))
    appError = new AppError('conflict', 'The item conflicts with an existing resource; retry it.');
  else throw error;
  return {
    outcome: 'error',
    audienceId: null,
    personId: null,
    accountId: null,
    audience: null,
    problem: problemOf(appError),
  };
}

const checkBody = validatorCompiler()({ schema: AudienceBatchItem, httpPart: 'body', method: 'POST', url: '' }) as {
  (value: unknown): boolean;
  errors?: { instancePath: string; message?: string; keyword: string; params: Record<string, unknown> }[] | null;
};

/**
 * Checks an item that did not come through the route's body schema (a CSV row) against that
 * schema: undefined when valid, else the 422 problem at the offending field (path in the item).
 */
export function checkItem(item: unknown): ItemProblem | undefined {
  if (checkBody(item)) return undefined;
  const first = checkBody.errors?.[0];
  const path =
    first?.keyword === 'additionalProperties'
      ? `${first.instancePath}/${String(first.params.additionalProperty)}`
      : (first?.instancePath ?? '');
  const message = first?.keyword === 'additionalProperties' ? 'is not a known field' : (first?.message ?? 'is invalid');
  return problemOf(validationFailed(path, message));
}

/**
 * Runs items against one page, each atomic on its own (its transaction, or its savepoint in a
 * SQLite group commit), in chunks (bulkWriteConcurrency) after each of which the write lock is
 * released and the event loop turns: visitors' requests never wait behind more than a chunk.
 * Results are in the items' order; an item that repeats an earlier one's identity answers
 * `existing`. `onChunk` hears how many are done (and their results); an aborted `signal` stops before the next chunk.
 */
export async function runItems(
  scope: TenantScope,
  clock: Clock,
  pageId: string,
  items: BatchItem[],
  options: {
    withAudience: boolean;
    /** After each chunk, the results so far (awaited: a job records its progress before the next chunk). */
    onChunk?: (done: number, results: readonly ItemResult[]) => void | Promise<void>;
    signal?: AbortSignal;
  },
): Promise<ItemResult[]> {
  const size = bulkWriteConcurrency(scope.engine);
  const yieldLock = bulkWriteYield(scope.engine);
  const results: ItemResult[] = [];
  for (let start = 0; start < items.length; start += size) {
    if (options.signal?.aborted) break; // the results so far: the caller reports an interruption
    const chunk = items.slice(start, start + size);
    // Queued together, committed together (SQLite group commit), each in its own savepoint.
    const settled = await Promise.all(
      chunk.map((item) =>
        scope.transaction((tx) => importItem(tx, clock, pageId, item, options.withAudience)).catch(failed),
      ),
    );
    results.push(...settled);
    await options.onChunk?.(results.length, results);
    // Let the writers that waited for the lock (in this process, and on SQLite in others) go first.
    await yieldLock();
  }
  return results;
}

/** The page a batch or an import writes to: 404 unknown (or another tenant's), 409 archived. */
export async function openPageForImport(scope: TenantScope, pageId: string): Promise<void> {
  const page = await visiblePage(scope, pageId);
  if (page.status === 'archived') throw pageArchived(pageId);
}

/** `POST /v0/pages/{page_id}/audiences/batch`: every item's result, problems at `/body/items/{i}/…`. */
export async function createAudienceBatch(
  scope: TenantScope,
  clock: Clock,
  pageId: string,
  items: BatchItem[],
): Promise<AudienceBatchResult> {
  await openPageForImport(scope, pageId);
  const results = await runItems(scope, clock, pageId, items, { withAudience: true });
  const count = (outcome: BatchOutcome) => results.filter((r) => r.outcome === outcome).length;
  return {
    pageId,
    createdCount: count('created'),
    existingCount: count('existing'),
    errorCount: count('error'),
    items: results.map((r, index) => ({
      index,
      ...r,
      problem:
        r.problem === null
          ? null
          : { ...r.problem, errors: r.problem.errors.map((e) => ({ ...e, path: `/body/items/${index}${e.path}` })) },
    })),
  };
}
