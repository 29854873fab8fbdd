import { Badge, renderDocument, When, type Viewer } from './console.views.js';

export interface PageListRow {
  pageId: string;
  name: string;
  status: string | null;
  pageType: string | null;
  audiencesCount: number;
  updatedAt: string | null;
}

/** Pages: the list (newest first) or a search's results, with status and audience counts. */
export function renderPageList(options: {
  viewer: Viewer;
  query: string;
  rows: PageListRow[];
  totalCount: number | null;
  nextHref: string | null;
}): string {
  const { query, rows } = options;
  return renderDocument({
    title: 'Pages',
    viewer: options.viewer,
    section: 'pages',
    body: (
      <>
        <h1>Pages</h1>
        <form method="get" action="/console/pages" class="search" role="search">
          <label for="page-search" class="skip">
            Search pages by name
          </label>
          <input id="page-search" type="search" name="q" value={query} placeholder="Search by name" maxLength={200} />
          <button type="submit" class="secondary">
            Search
          </button>
        </form>
        <p class="lead" aria-live="polite">
          {query !== ''
            ? `${rows.length}${options.nextHref ? '+' : ''} pages whose name contains “${query}”`
            : options.totalCount === null
              ? ''
              : `${options.totalCount} pages`}
        </p>
        {rows.length === 0 ? (
          <p>No pages{query !== '' ? ' match' : ' yet'}.</p>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col" class="num">
                    Audiences
                  </th>
                  <th scope="col" class="hide-small">
                    Type
                  </th>
                  <th scope="col" class="hide-small">
                    Updated
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((p) => (
                  <tr key={p.pageId}>
                    <td>
                      <a href={`/console/pages/${p.pageId}`}>{p.name}</a>
                    </td>
                    <td>{p.status === null ? '—' : <Badge value={p.status} />}</td>
                    <td class="num">{p.audiencesCount}</td>
                    <td class="hide-small">{p.pageType ?? '—'}</td>
                    <td class="hide-small">
                      <When at={p.updatedAt} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {options.nextHref && (
          <nav class="pager" aria-label="More pages">
            <a href={options.nextHref}>Next pages</a>
          </nav>
        )}
      </>
    ),
  });
}
