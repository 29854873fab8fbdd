import type { ImportSummary } from '../audiences/index.js';
import { Csrf, renderDocument, type Viewer } from './console.views.js';

/** The CSV columns the import reads (docs/api.md, Importing audiences). */
const COLUMNS = [
  ['email', 'the person’s e-mail (a row needs an email or a domain)'],
  ['name', 'the person’s name'],
  ['company', 'the company’s name'],
  ['domain', 'the company’s domain'],
  ['context', 'what the writer should know about this audience'],
] as const;

/** Import: upload a CSV of targets for a page; after the upload, its summary with the rows refused. */
export function renderImport(options: {
  viewer: Viewer;
  pageId: string;
  pageName: string;
  maxBytes: number;
  summary?: ImportSummary;
  error?: string;
}): string {
  const { summary } = options;
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
        {summary && (
          <section aria-labelledby="result-title" class="notice" role="status">
            <h2 id="result-title">
              {summary.interrupted ? 'Import interrupted' : 'Import done'}: {summary.file}
            </h2>
            <dl class="facts">
              <dt>Rows read</dt>
              <dd>{summary.rows}</dd>
              <dt>Created</dt>
              <dd>{summary.created}</dd>
              <dt>Already there</dt>
              <dd>{summary.existing}</dd>
              <dt>Refused</dt>
              <dd>{summary.failed}</dd>
              <dt>Took</dt>
              <dd>{(summary.durationMs / 1000).toFixed(1)} s</dd>
            </dl>
            <p>
              <a href={base}>Back to the page and its audiences</a>
            </p>
          </section>
        )}
        {summary && summary.errors.length > 0 && (
          <>
            <h2>Rows refused</h2>
            <p class="hint">
              Correct them in the file and upload it again: rows already imported are not created twice.
            </p>
            <div class="table-wrap" tabIndex={0} role="region" aria-label="Rows refused">
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
                  {summary.errors.map((e, i) => (
                    <tr key={i}>
                      <td class="num">{e.line}</td>
                      <td>{e.column ?? '—'}</td>
                      <td>{e.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
        <h2>{summary ? 'Import another file' : 'Upload'}</h2>
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
          data-busy="Importing… this page shows the result when every row is done."
        >
          <Csrf viewer={options.viewer} />
          <div class="field">
            <label for="f-file">CSV file</label>
            <p class="hint" id="f-file-hint">
              UTF-8, at most {Math.round(options.maxBytes / 1024 / 1024)} MiB. The import runs while this page waits.
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
