import { Badge, PostForm, renderDocument, When, type Viewer } from './console.views.js';

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
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Pages">
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

export interface VersionView {
  versionNumber: number;
  status: string;
  publishedAt: string | null;
  createdAt: string;
}

export interface AudienceRow {
  audienceId: string;
  effectiveName: string;
  status: string;
  personId: string | null;
  latestVersion: VersionView;
  publishedVersion: VersionView;
}

export interface PageView {
  pageId: string;
  name: string;
  status: string;
  pageType: string;
  pageContext: string;
  updatedAt: string;
  actions: { buttonTitle?: string; purpose?: string; actionType?: string; url?: string | null }[];
}

function versionText(v: VersionView): string {
  return `v${v.versionNumber} · ${v.status}`;
}

/** A page: its brief, its actions, its audiences with their live and latest versions. */
export function renderPageView(options: {
  viewer: Viewer;
  page: PageView;
  audiences: AudienceRow[];
  audiencesTotal: number | null;
  notice?: string;
}): string {
  const { viewer, page, audiences } = options;
  return renderDocument({
    title: page.name,
    viewer,
    section: 'pages',
    body: (
      <>
        <nav aria-label="Breadcrumb">
          <a href="/console/pages">Pages</a>
        </nav>
        <h1>{page.name}</h1>
        {options.notice && (
          <p class="notice" role="status">
            {options.notice}
          </p>
        )}
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <Badge value={page.status} />
          </dd>
          <dt>Type</dt>
          <dd>{page.pageType}</dd>
          <dt>Updated</dt>
          <dd>
            <When at={page.updatedAt} />
          </dd>
          <dt>Page id</dt>
          <dd>
            <code>{page.pageId}</code>
          </dd>
        </dl>
        <div class="actions">
          <a class="button secondary" href={`/console/pages/${page.pageId}/analytics`}>
            Analytics
          </a>
          <PostForm
            viewer={viewer}
            action={`/console/pages/${page.pageId}/publish-drafts`}
            confirm="Publish the draft of every audience of this page?"
          >
            <button type="submit">Publish drafts</button>
          </PostForm>
          <PostForm
            viewer={viewer}
            action={`/console/pages/${page.pageId}/regenerate`}
            confirm="Write a new version for every live audience of this page?"
          >
            <button type="submit" class="secondary">
              Regenerate all
            </button>
          </PostForm>
        </div>
        <h2>Brief</h2>
        <p class="brief">{page.pageContext}</p>
        <h2>Actions</h2>
        {page.actions.length === 0 ? (
          <p>No actions.</p>
        ) : (
          <ul>
            {page.actions.map((a, i) => (
              <li key={i}>
                <strong>{a.buttonTitle ?? a.purpose ?? 'Action'}</strong>
                {a.actionType ? ` (${a.actionType})` : ''}
                {a.url ? (
                  <>
                    {' '}
                    — <code>{a.url}</code>
                  </>
                ) : null}
              </li>
            ))}
          </ul>
        )}
        <h2>Audiences{options.audiencesTotal === null ? '' : ` (${options.audiencesTotal})`}</h2>
        {audiences.length === 0 ? (
          <p>No audiences yet.</p>
        ) : (
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Audiences">
            <table>
              <thead>
                <tr>
                  <th scope="col">Audience</th>
                  <th scope="col">Status</th>
                  <th scope="col">Live version</th>
                  <th scope="col" class="hide-small">
                    Latest version
                  </th>
                </tr>
              </thead>
              <tbody>
                {audiences.map((a) => (
                  <tr key={a.audienceId}>
                    <td>
                      {a.effectiveName}
                      <br />
                      <code class="hint">{a.audienceId}</code>
                    </td>
                    <td>
                      <Badge value={a.status} />
                    </td>
                    <td>
                      {versionText(a.publishedVersion)}
                      <br />
                      <span class="hint">
                        <When at={a.publishedVersion.publishedAt} />
                      </span>
                    </td>
                    <td class="hide-small">{versionText(a.latestVersion)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </>
    ),
  });
}
