import type { AudienceImportsTable } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError, notFound } from '../../http/errors.js';
import { isoNow, MINUTE_MS, SECOND_MS, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import {
  done,
  fail,
  holdLease,
  LeasedJobs,
  retry,
  type LeasedJobDeps,
  type LeasedJobKind,
  type LeasedRow,
} from '../../workers/leased-jobs.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';
import { openPageForImport } from './audiences.batch.js';
import {
  checkImportHeader,
  importAudiencesCsvText,
  type ImportOptions,
  type ImportRowError,
  type ImportSummary,
} from './audiences.import.js';
import * as q from './audiences.import-queries.js';

/**
 * Imports the console starts (docs/console.md#import): the upload stores the CSV in a row of
 * audience_imports and queues it; this kind of the one leased-job runner runs it through the CLI's
 * import service (`importAudiencesCsvText`, the batch endpoint's rules row by row), outside any
 * transaction, recording its progress in the row as it goes (which also extends its lease). A run
 * lost to a crash is taken over when its lease ends and resumes after the rows last recorded; rows
 * it had run since are found by their identity (`existing`), never created twice.
 */

const IMPORT_CHANNEL = 'audience-imports';

/** The refused rows an import keeps (its `failed` counts them all). */
const IMPORT_ERRORS_KEPT = 1_000;

type ImportJob = LeasedRow & Pick<AudienceImportsTable, 'id'>;

const IMPORT_SETTINGS = {
  // A run records its progress (and so renews its lease) at least every PROGRESS_EVERY_MS; a chunk
  // of rows takes well under a second. A minute without word: the worker is presumed dead.
  leaseMs: MINUTE_MS,
  // Runs, including ones lost to crashes, before the import is given up.
  maxAttempts: 5,
  // An import is long and writes: two at once per process, one per tenant.
  concurrency: 2,
  perTenant: 1,
  pollMs: 5 * SECOND_MS,
};

/** How often a run writes its progress (the screen polls every second or two). */
const PROGRESS_EVERY_MS = 500;

export interface ImportJobOptions {
  /** Write progress after every chunk (tests) instead of every PROGRESS_EVERY_MS. */
  progressEveryMs?: number;
}

type ChunkProgress = Parameters<NonNullable<ImportOptions['onChunk']>>[0];

/** A run's progress as its row records it (what a taken-over run resumes from). */
export function progressColumns(progress: ChunkProgress) {
  return {
    rows: progress.rows,
    rows_done: progress.done,
    items_done: progress.itemsDone,
    created: progress.created,
    existing: progress.existing,
    failed: progress.failed,
    errors: JSON.stringify(progress.errors().slice(0, IMPORT_ERRORS_KEPT)),
  };
}

export function audienceImportKind(
  clock: Clock,
  options: ImportJobOptions = {},
): LeasedJobKind<'audience_imports', ImportJob, ImportSummary, string> {
  const every = options.progressEveryMs ?? PROGRESS_EVERY_MS;
  const kind: LeasedJobKind<'audience_imports', ImportJob, ImportSummary, string> = {
    name: 'audience-imports',
    channel: IMPORT_CHANNEL,
    table: 'audience_imports',
    key: 'id',
    columns: [],
    statuses: { waiting: ['queued'], running: 'running' },
    settings: IMPORT_SETTINGS,
    work: async (job, scope) => {
      const row = await q.findImportForRun(scope, job.id);
      if (row === undefined || row.csv === null) return fail('the file of this import is gone');
      const controller = new AbortController();
      let written = -Infinity;
      try {
        const summary = await importAudiencesCsvText(scope, clock, row.page_id, row.file_name, row.csv, {
          resume: {
            itemsDone: row.items_done,
            created: row.created,
            existing: row.existing,
            failed: row.failed,
            errors: row.errors as ImportRowError[], // written from ImportRowError only
          },
          signal: controller.signal,
          onChunk: async (progress) => {
            if (performance.now() - written < every) return;
            written = performance.now();
            const held = await holdLease(kind, clock, scope, job, {
              ...progressColumns(progress),
              updated_at: isoNow(clock),
            });
            if (!held) controller.abort();
          },
        });
        // Stopped because the lease was lost: finishing finds it taken over and records nothing.
        if (summary.interrupted) return retry('the lease of this run was lost');
        return done(summary);
      } catch (error) {
        // The whole file refused (a header it cannot read, the page archived or gone): for good.
        if (error instanceof AppError && [404, 409, 422].includes(error.status)) return fail(error.detail);
        throw error;
      }
    },
    complete: async (tx, job, summary) => {
      const now = isoNow(clock);
      await q.updateImport(tx, job.id, {
        status: 'done',
        csv: null,
        lease_token: null,
        available_at: null,
        rows: summary.rows,
        rows_done: summary.rows,
        created: summary.created,
        existing: summary.existing,
        failed: summary.failed,
        errors: JSON.stringify(summary.errors.slice(0, IMPORT_ERRORS_KEPT)),
        updated_at: now,
        finished_at: now,
      });
    },
    fail: async (tx, job, failure) => {
      const now = isoNow(clock);
      await q.updateImport(tx, job.id, {
        status: 'failed',
        csv: null,
        lease_token: null,
        available_at: null,
        failure,
        updated_at: now,
        finished_at: now,
      });
    },
    interrupted: (job) => `the import stopped on all ${job.attempts} attempts (its worker's lease ran out each time)`,
    onClaim: (_job, now) => ({ status: 'running', updated_at: now }),
    onRetry: (_job, _failure, now) => ({ status: 'queued', updated_at: now }),
  };
  return kind;
}

export function audienceImportJobs(deps: LeasedJobDeps, options: ImportJobOptions = {}) {
  return new LeasedJobs(audienceImportKind(deps.clock, options), deps);
}

export function audienceImportWorker(ctx: WorkerContext): BackgroundWorker {
  return audienceImportJobs(ctx).worker();
}

/**
 * Queues the import of a CSV into a page for the import worker: the page must be open for it
 * (404 unknown, 409 archived) and the file text with a readable header (422), as the import checks; the
 * rows are read by the worker. Returns the import's id.
 */
export async function startImport(
  scope: TenantScope,
  clock: Clock,
  input: { pageId: string; userId: string; fileName: string; csv: string },
): Promise<string> {
  await openPageForImport(scope, input.pageId);
  if (input.csv.includes('\u0000')) {
    throw new AppError('validation_failed', `${input.fileName}: not a text file (it holds NUL bytes).`);
  }
  checkImportHeader(input.csv, input.fileName);
  const id = newId('audienceImport');
  const now = isoNow(clock);
  await scope.transaction(async (tx) => {
    await q.insertImport(tx, {
      id,
      page_id: input.pageId,
      user_id: input.userId,
      file_name: input.fileName,
      csv: input.csv,
      status: 'queued',
      attempts: 0,
      lease_token: null,
      available_at: now,
      rows: null,
      rows_done: 0,
      items_done: 0,
      created: 0,
      existing: 0,
      failed: 0,
      errors: '[]',
      failure: null,
      created_at: now,
      updated_at: now,
      finished_at: null,
    });
    tx.afterCommit(IMPORT_CHANNEL);
  });
  return id;
}

/** An import's state, as its screen and its JSON status show it. */
export interface ImportStatus {
  importId: string;
  pageId: string;
  fileName: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  /** Data rows in the file; null until a run has read it. */
  rows: number | null;
  /** Rows dealt with so far (created, existing or refused). */
  done: number;
  created: number;
  existing: number;
  failed: number;
  /** The refused rows (the first IMPORT_ERRORS_KEPT). */
  errors: { line: number; column: string | null; code: string; message: string }[];
  /** Why the whole file was refused, or the import given up. */
  failure: string | null;
  createdAt: string;
  finishedAt: string | null;
}

/** The import `id` of the scope's tenant; another tenant's, or none, is a 404. */
export async function getImport(scope: TenantScope, id: string): Promise<ImportStatus> {
  const row = await q.findImport(scope, id);
  if (row === undefined) throw notFound('import', id);
  return {
    importId: row.id,
    pageId: row.page_id,
    fileName: row.file_name,
    status: row.status,
    rows: row.rows,
    done: row.rows_done,
    created: row.created,
    existing: row.existing,
    failed: row.failed,
    errors: row.errors,
    failure: row.failure,
    createdAt: row.created_at,
    finishedAt: row.finished_at,
  };
}
