import type { ImportStatus } from '../audiences/index.js';
import { Csrf, renderDocument, TableRegion, type Viewer, When } from './console.views.js';

/** The CSV columns the import reads (docs/api.md, Importing audiences). */
const COLUMNS = [
  ['email', 'the person’s e-mail (a row needs an email or a domain)'],
  ['name', 'the person’s name'],
  ['company', 'the company’s name'],
  ['domain', 'the company’s domain'],
  ['context', 'what the writer should know about this audience'],
] as const;

/** Import: upload a CSV of targets for a page (the upload starts an import and opens its screen). */
export function renderImport(options: {
  viewer: Viewer;
  pageId: string;
  pageName: string;
  maxBytes: number;
  error?: string;
}): string {
  const base = `/console/pages/${options.pageId}`;
  return renderDocument({
    title: `Import · ${options.pageName}`,
    viewer: options.viewer,
    section: 'pages',
    body: (
      <>
        <nav aria-label="Breadcrumb">
          <a href="/console/pages">Pages</a> › <a href={base}>{options.pageName}</a>
        </nav>
        <h1>Import audiences from a CSV</h1>
        {options.error && (
          <p class="notice error" role="alert">
            {options.error}
          </p>
        )}
        <h2>Upload</h2>
        <p>
          One audience per row, found or created by whom it addresses (as the API’s batch import does): a person or
          company that already has an audience on this page keeps it. The first line names the columns, in any order:
        </p>
        <ul>
          {COLUMNS.map(([name, what]) => (
            <li key={name}>
              <code>{name}</code> — {what}
            </li>
          ))}
        </ul>
        <form
          method="post"
          action={`${base}/import`}
          enctype="multipart/form-data"
          class="stack"
          data-busy="Uploading…"
        >
          <Csrf viewer={options.viewer} />
          <div class="field">
            <label for="f-file">CSV file</label>
            <p class="hint" id="f-file-hint">
              UTF-8, at most {Math.round(options.maxBytes / 1024 / 1024)} MiB. The import runs in the background; its
              screen shows how far it got.
            </p>
            <input id="f-file" type="file" name="file" accept=".csv,text/csv" required aria-describedby="f-file-hint" />
          </div>
          <p>
            <button type="submit">Import</button>
          </p>
          <p class="hint busy" aria-live="polite" />
        </form>
      </>
    ),
  });
}

const TITLES: Record<ImportStatus['status'], string> = {
  queued: 'Import waiting to start',
  running: 'Importing',
  done: 'Import done',
  failed: 'Import refused',
};

/**
 * An import's screen: while it runs, a progress bar and its counts, kept fresh by the console's
 * script (it polls `…/status` and reloads the screen when the import ends) or, without script, by
 * the page refreshing itself; once it ends, its summary and the rows it refused.
 */
export function renderImportProgress(options: { viewer: Viewer; status: ImportStatus; pageName: string }): string {
  const { status } = options;
  const base = `/console/pages/${status.pageId}`;
  const live = status.status === 'queued' || status.status === 'running';
  const count = (field: 'done' | 'created' | 'existing' | 'failed') => (
    <dd data-count={field} data-value={status[field]}>
      {status[field]}
    </dd>
  );
  return renderDocument({
    title: `${TITLES[status.status]} · ${status.fileName}`,
    viewer: options.viewer,
    section: 'pages',
    ...(live ? { refreshWithoutScript: 2 } : {}),
    body: (
      <>
        <nav aria-label="Breadcrumb">
          <a href="/console/pages">Pages</a> › <a href={base}>{options.pageName}</a> ›{' '}
          <a href={`${base}/import`}>Import</a>
        </nav>
        <h1 data-running-title={status.status === 'queued' ? `${TITLES.running}: ${status.fileName}` : undefined}>
          {TITLES[status.status]}: {status.fileName}
        </h1>
        {status.status === 'failed' && (
          <p class="notice error" role="alert">
            Nothing more was imported: {status.failure}
          </p>
        )}
        <section
          aria-labelledby="progress-label"
          class="import-progress"
          data-import-status={live ? `/console/imports/${status.importId}/status` : undefined}
        >
          <p id="progress-label" aria-live="polite" data-progress-text>
            {progressText(status)}
          </p>
          <progress
            aria-labelledby="progress-label"
            max={status.rows ?? undefined}
            value={status.rows === null ? undefined : status.done}
          />
          <dl class="facts">
            <dt>Rows read</dt>
            {count('done')}
            <dt>Created</dt>
            {count('created')}
            <dt>Already there</dt>
            {count('existing')}
            <dt>Refused</dt>
            {count('failed')}
            <dt>Started</dt>
            <dd>
              <When at={status.createdAt} />
            </dd>
            {status.finishedAt !== null && (
              <>
                <dt>Ended</dt>
                <dd>
                  <When at={status.finishedAt} />
                </dd>
              </>
            )}
          </dl>
          {live && (
            <p class="hint">
              The import runs in the background: you may leave this screen and come back (its address stays the same).
            </p>
          )}
        </section>
        {status.errors.length > 0 && (
          <>
            <h2>Rows refused</h2>
            <p class="hint">
              Correct them in the file and upload it again: rows already imported are not created twice.
              {status.failed > status.errors.length &&
                ` The first ${status.errors.length} of ${status.failed} are listed.`}
            </p>
            <TableRegion label="Rows refused">
              <table>
                <thead>
                  <tr>
                    <th scope="col" class="num">
                      Line
                    </th>
                    <th scope="col">Column</th>
                    <th scope="col">Why</th>
                  </tr>
                </thead>
                <tbody>
                  {status.errors.map((e, i) => (
                    <tr key={i}>
                      <td class="num">{e.line}</td>
                      <td>{e.column ?? '—'}</td>
                      <td>{e.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableRegion>
          </>
        )}
        {!live && (
          <p>
            <a href={base}>Back to the page and its audiences</a> · <a href={`${base}/import`}>Import another file</a>
          </p>
        )}
      </>
    ),
  });
}

function progressText(status: ImportStatus): string {
  if (status.status === 'queued') return 'Waiting for the import worker…';
  if (status.rows === null) return 'Reading the file…';
  return `${status.done} of ${status.rows} rows`;
}
