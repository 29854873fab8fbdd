import fs from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import type { TenantScope } from '../../db/tenant-scope.js';
import { AppError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { checkItem, openPageForImport, runItems, type ItemProblem, type ItemResult } from './audiences.batch.js';
import type { AudienceBatchItem } from './audiences.schemas.js';

/**
 * `audience-pages audience import FILE.csv --page PAGE_ID --tenant TENANT_ID`: a CSV of targets,
 * one audience per row, each row going through the batch endpoint's service (audiences.batch.ts)
 * so that a row is found or created exactly as `POST …/audiences/batch` would. docs/api.md,
 * Importing audiences.
 */

/** The columns a file may have, in any order, matched case-insensitively; each at most once. */
const IMPORT_COLUMNS = ['email', 'name', 'company', 'domain', 'context'] as const;
type Column = (typeof IMPORT_COLUMNS)[number];

/** Where a problem's path in an item comes from in a row. */
const COLUMN_OF_PATH: Record<string, Column> = {
  '/person': 'email',
  '/person/email': 'email',
  '/person/name': 'name',
  '/account': 'domain',
  '/account/domain': 'domain',
  '/account/name': 'company',
  '/supplementaryContext': 'context',
};

export interface ImportRowError {
  /** The line of the file the row starts on (the header is line 1). */
  line: number;
  /** The column at fault, when it is one. */
  column: Column | null;
  code: string;
  message: string;
}

export interface ImportSummary {
  file: string;
  pageId: string;
  /** Data rows read (blank lines not counted). */
  rows: number;
  created: number;
  existing: number;
  failed: number;
  /** True when the import was stopped before its end: re-run the same command to finish it. */
  interrupted: boolean;
  durationMs: number;
  errors: ImportRowError[];
}

interface Row {
  line: number;
  cells: string[];
}

/** The header's columns by position; an unknown, repeated or missing identity column stops the import. */
function columnsOf(header: string[], file: string): Column[] {
  const names = header.map((h) => h.trim().toLowerCase());
  const unknown = names.filter((n) => !(IMPORT_COLUMNS as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new AppError(
      'validation_failed',
      `${file}: unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((u) => `"${u}"`).join(', ')} in the ` +
        `header (line 1). The columns are ${IMPORT_COLUMNS.join(', ')}, in any order; remove or rename the others.`,
    );
  }
  const repeated = names.filter((n, i) => names.indexOf(n) !== i);
  if (repeated.length > 0) {
    throw new AppError('validation_failed', `${file}: column "${repeated[0]}" appears twice in the header (line 1).`);
  }
  if (!names.includes('email') && !names.includes('domain')) {
    throw new AppError(
      'validation_failed',
      `${file}: the header (line 1) has neither an email nor a domain column: a row needs one to say whom it addresses.`,
    );
  }
  return names as Column[];
}

/**
 * Checks the header of a file about to be queued (the console's upload), so that an unknown,
 * repeated or missing column is refused at once (422), as the import itself would refuse it.
 */
export function checkImportHeader(text: string, file: string): void {
  const [header] = parse(text.replace(/\r\n/g, '\n'), { bom: true, to: 1, relax_column_count: true }) as string[][];
  if (header === undefined) throw new AppError('validation_failed', `${file}: the file is empty (no header line).`);
  columnsOf(header, file);
}

/** Reads the file: its data rows with the line each starts on. BOM and CRLF line ends accepted. */
function readRows(text: string, file: string): { columns: Column[]; rows: Row[]; unreadable: ImportRowError[] } {
  const unreadable: ImportRowError[] = [];
  // CRLF to LF first: csv-parse counts a CRLF inside a quoted field as two lines.
  const records = parse(text.replace(/\r\n/g, '\n'), {
    bom: true,
    info: true,
    relax_column_count: true,
    skip_records_with_error: true,
    on_skip: (error) => {
      unreadable.push({
        line: typeof error?.lines === 'number' ? error.lines : 0,
        column: null,
        code: 'invalid_csv',
        message: error?.message ?? 'not a CSV record',
      });
      return undefined;
    },
  }) as unknown as { record: string[]; info: { lines: number } }[];
  const [header, ...data] = records;
  if (header === undefined) throw new AppError('validation_failed', `${file}: the file is empty (no header line).`);
  const columns = columnsOf(header.record, file);
  const rows: Row[] = [];
  for (const { record, info } of data) {
    if (record.every((cell) => cell.trim() === '')) continue; // a blank line, or only separators
    const inner = record.reduce((n, cell) => n + (cell.match(/\n/g)?.length ?? 0), 0);
    rows.push({ line: info.lines - inner, cells: record });
  }
  return { columns, rows, unreadable };
}

/** A row as a batch item (empty cells are absent), or the reason it cannot be one. */
function itemOf(columns: Column[], row: Row): { item: AudienceBatchItem } | { error: ImportRowError } {
  if (row.cells.length !== columns.length) {
    return {
      error: {
        line: row.line,
        column: null,
        code: 'validation_failed',
        message: `has ${row.cells.length} fields, the header has ${columns.length}`,
      },
    };
  }
  const value: Partial<Record<Column, string>> = {};
  columns.forEach((column, i) => {
    const cell = row.cells[i]!.trim();
    if (cell !== '') value[column] = cell;
  });
  const item: AudienceBatchItem = {};
  if (value.email !== undefined || value.name !== undefined) {
    item.person = {
      ...(value.email !== undefined ? { email: value.email } : {}),
      ...(value.name !== undefined ? { name: value.name } : {}),
    };
  }
  if (value.domain !== undefined || value.company !== undefined) {
    item.account = {
      ...(value.domain !== undefined ? { domain: value.domain } : {}),
      ...(value.company !== undefined ? { name: value.company } : {}),
    };
  }
  if (value.context !== undefined) item.supplementaryContext = value.context;
  const problem = checkItem(item);
  return problem === undefined ? { item } : { error: rowError(row.line, problem) };
}

function rowError(line: number, problem: ItemProblem): ImportRowError {
  const path = problem.errors[0]?.path ?? '';
  const column = COLUMN_OF_PATH[path] ?? null;
  // A name without an email is a person nobody can be recognised by (POST /v0/person_logs).
  const message =
    path === '/person'
      ? 'is required for a row with a name (a name alone identifies nobody)'
      : (problem.errors[0]?.message ?? problem.detail);
  return { line, column, code: problem.code, message: column === null ? problem.detail : `${column} ${message}` };
}

/** Where an import stands: what a job records after each chunk, and resumes from. */
interface ImportProgress {
  /** Data rows in the file (blank lines not counted). */
  rows: number;
  /** Rows dealt with: refused while reading, or run through the batch service. */
  done: number;
  /** Rows run through the batch service, in file order (a resumed import starts after them). */
  itemsDone: number;
  created: number;
  existing: number;
  failed: number;
  /** The refused rows so far, by line. */
  errors: ImportRowError[];
}

export interface ImportOptions {
  /** Told the number of data rows once the file is read, then how many are done after each chunk. */
  onStart?: (rows: number) => void;
  onProgress?: (done: number) => void;
  /** After each chunk (awaited): where the import stands, for a job to record (its errors when asked). */
  onChunk?: (progress: Omit<ImportProgress, 'errors'> & { errors: () => ImportRowError[] }) => Promise<void>;
  /**
   * An earlier run of the same text got this far (a job's progress after a crash): the rows it ran
   * are not run again, and its counts carry on. Rows it ran after it last recorded its progress
   * run again and, being there already, count as `existing` (a row's identity decides its audience).
   */
  resume?: Pick<ImportProgress, 'itemsDone' | 'created' | 'existing' | 'failed' | 'errors'>;
  /** Stops the import after the chunk in flight (SIGINT): what was done stays, a re-run resumes. */
  signal?: AbortSignal;
}

/**
 * Imports a CSV file into a page. Rows are independent: a bad row is reported with its line and
 * the others go on; each row is atomic. A row's identity decides its audience, so running the
 * same file again creates nothing twice, and an interrupted import resumes by running it again.
 * Refuses the whole file (nothing written) for an unknown page (404), an archived page (409), or
 * a header it cannot read.
 */
export async function importAudiencesCsv(
  scope: TenantScope,
  clock: Clock,
  pageId: string,
  file: string,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const started = performance.now();
  const text = await fs.readFile(file, 'utf8');
  return importAudiencesCsvText(scope, clock, pageId, file, text, options, started);
}

/**
 * The import of a CSV already in memory (`text`, named `file` in messages): the console's upload
 * screen. The same rules and summary as `importAudiencesCsv`.
 */
export async function importAudiencesCsvText(
  scope: TenantScope,
  clock: Clock,
  pageId: string,
  file: string,
  text: string,
  options: ImportOptions = {},
  started = performance.now(),
): Promise<ImportSummary> {
  await openPageForImport(scope, pageId);
  const { columns, rows, unreadable } = readRows(text, file);
  const errors: ImportRowError[] = [...unreadable];
  const items: AudienceBatchItem[] = [];
  const lines: number[] = [];
  for (const row of rows) {
    const result = itemOf(columns, row);
    if ('error' in result) errors.push(result.error);
    else {
      items.push(result.item);
      lines.push(row.line);
    }
  }
  const total = rows.length + unreadable.length;
  options.onStart?.(total);
  const refused = errors.length;
  // Resuming: the rows an earlier run went through keep their outcomes (their refusals among them).
  const skip = Math.min(options.resume?.itemsDone ?? 0, items.length);
  const skippedLines = new Set(lines.slice(0, skip));
  const before = {
    created: options.resume?.created ?? 0,
    existing: options.resume?.existing ?? 0,
    failed: options.resume ? Math.max(0, options.resume.failed - refused) : 0,
    errors: (options.resume?.errors ?? []).filter((e) => skippedLines.has(e.line)),
  };
  // Counted as chunks finish (a long import must not recount its every row after each chunk).
  const count = { created: before.created, existing: before.existing, seen: 0 };
  const itemErrors = [...before.errors];
  const tally = (results: readonly ItemResult[]) => {
    for (; count.seen < results.length; count.seen++) {
      const result = results[count.seen]!;
      if (result.outcome === 'created') count.created++;
      else if (result.outcome === 'existing') count.existing++;
      else itemErrors.push(rowError(lines[skip + count.seen]!, result.problem!));
    }
    return {
      created: count.created,
      existing: count.existing,
      failed: refused + before.failed + itemErrors.length - before.errors.length,
      errors: () => [...errors, ...itemErrors].sort((a, b) => a.line - b.line),
    };
  };
  if (skip > 0) options.onProgress?.(refused + skip);
  const results = await runItems(scope, clock, pageId, items.slice(skip), {
    withAudience: false,
    onChunk: async (done, sofar) => {
      options.onProgress?.(refused + skip + done);
      const counts = tally(sofar);
      await options.onChunk?.({ rows: total, done: refused + skip + done, itemsDone: skip + done, ...counts });
    },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const outcome = tally(results);
  return {
    file,
    pageId,
    rows: total,
    created: outcome.created,
    existing: outcome.existing,
    failed: outcome.failed,
    interrupted: skip + results.length < items.length,
    durationMs: Math.round(performance.now() - started),
    errors: outcome.errors(),
  };
}
