import type { Audience } from '../audiences/index.js';
import { PAGE_TYPES, type Page } from '../pages/index.js';
import { Field, FormError, type FieldErrors } from './console.pages.forms.js';
import { Badge, Csrf, PostForm, renderDocument, TableRegion, type Viewer, When } from './console.views.js';

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
        <p>
          <a class="button" href="/console/pages/new">
            New page
          </a>
        </p>
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
          <TableRegion label="Pages">
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
          </TableRegion>
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

/** What a page form shows: the values sent (or stored) and their errors. */
export interface PageFormValues {
  name: string;
  title?: string;
  /** New versions wait as drafts for someone to publish them (the page's `reviewBeforePublish`). */
  reviewBeforePublish?: boolean;
  pageType: string;
  pageContext: string;
  actions: { actionId?: string; purpose: string; buttonTitle: string; actionType: string; url: string }[];
}

/** Action rows a form offers: the page's actions and one empty row for a new one. */
const ACTION_ROWS_EXTRA = 1;

/** `creating`: the title can be given (then it is fixed: the API's PATCH has no `title`, docs/api.md). */
function PageFields({ values, errors, creating }: { values: PageFormValues; errors: FieldErrors; creating: boolean }) {
  const rows = [...values.actions, { purpose: '', buttonTitle: '', actionType: 'link', url: '' }].slice(
    0,
    values.actions.length + ACTION_ROWS_EXTRA,
  );
  return (
    <>
      <Field name="name" label="Name" errors={errors} value={values.name} required maxLength={255} />
      {creating && (
        <Field
          name="title"
          label="Title"
          hint="What visitors see as the page's title; the name when left empty. It cannot be changed later."
          errors={errors}
          value={values.title ?? ''}
        />
      )}
      <Field name="pageType" label="Type" errors={errors} value={values.pageType} options={PAGE_TYPES} />
      <Field
        name="pageContext"
        label="Brief"
        hint="What the page is for and what it should say: every audience's version is written from it."
        kind="textarea"
        errors={errors}
        value={values.pageContext}
        required
      />
      <div class="field check">
        <input
          type="checkbox"
          id="f-reviewBeforePublish"
          name="reviewBeforePublish"
          value="true"
          checked={values.reviewBeforePublish === true}
          aria-describedby="f-reviewBeforePublish-hint"
        />
        <label for="f-reviewBeforePublish">Review each new version before it goes live</label>
      </div>
      <p class="hint" id="f-reviewBeforePublish-hint">
        On a published page, a newly written version then waits as a draft until someone publishes it.
      </p>
      <fieldset>
        <legend>Actions</legend>
        <p class="hint">What a visitor can do on the page. Leave a row empty to remove it.</p>
        {rows.map((a, i) => (
          <div class="action-row" key={i}>
            <p class="action-label">Action {i + 1}</p>
            {a.actionId && <input type="hidden" name={`actions.${i}.actionId`} value={a.actionId} />}
            <Field name={`actions.${i}.purpose`} label="Purpose" errors={errors} value={a.purpose} />
            <Field name={`actions.${i}.buttonTitle`} label="Button title" errors={errors} value={a.buttonTitle} />
            <Field name={`actions.${i}.url`} label="URL" kind="url" errors={errors} value={a.url} />
            <Field
              name={`actions.${i}.actionType`}
              label="Action type"
              hint="link, form, meeting, …"
              errors={errors}
              value={a.actionType}
            />
          </div>
        ))}
      </fieldset>
    </>
  );
}

/** "New page": name, type, brief, title, actions; the API's errors next to their fields. */
export function renderNewPage(options: { viewer: Viewer; values: PageFormValues; errors: FieldErrors }): string {
  return renderDocument({
    title: 'New page',
    viewer: options.viewer,
    section: 'pages',
    body: (
      <>
        <nav aria-label="Breadcrumb">
          <a href="/console/pages">Pages</a>
        </nav>
        <h1>New page</h1>
        <FormError errors={options.errors} />
        <form method="post" action="/console/pages/new" class="stack" novalidate>
          <Csrf viewer={options.viewer} />
          <PageFields values={options.values} errors={options.errors} creating />
          <p>
            <button type="submit">Create the page</button>
          </p>
        </form>
      </>
    ),
  });
}

/** The moves of the page status table (docs/api.md, The life of a page) offered for a status. */
const MOVES: Record<string, { name: 'publish' | 'archive' | 'restore'; label: string; confirm: string }[]> = {
  draft: [
    { name: 'publish', label: 'Publish', confirm: 'Publish this page? Its audiences’ drafts go live.' },
    { name: 'archive', label: 'Archive', confirm: 'Archive this page? Its links stop serving until restored.' },
  ],
  published: [
    { name: 'archive', label: 'Archive', confirm: 'Archive this page? Its links stop serving until restored.' },
  ],
  archived: [{ name: 'restore', label: 'Restore', confirm: 'Restore this page to the status it was archived from?' }],
};

/** "New audience" on a page's screen: a person, an account, or a named segment. */
export interface AudienceFormValues {
  email: string;
  personName: string;
  domain: string;
  company: string;
  customName: string;
  supplementaryContext: string;
}

const EMPTY_AUDIENCE_FORM: AudienceFormValues = {
  email: '',
  personName: '',
  domain: '',
  company: '',
  customName: '',
  supplementaryContext: '',
};

function versionText(v: { versionNumber: number; status: string }): string {
  return `v${v.versionNumber} · ${v.status}`;
}

/** A page: its brief, its actions (editable), its moves, its audiences with their live and latest versions. */
export function renderPageView(options: {
  viewer: Viewer;
  page: Page;
  audiences: Audience[];
  audiencesTotal: number | null;
  notice?: string;
  error?: string;
  form?: { values: PageFormValues; errors: FieldErrors };
  audienceForm?: { values: AudienceFormValues; errors: FieldErrors };
}): string {
  const { viewer, page, audiences } = options;
  const archived = page.status === 'archived';
  const form = options.form ?? {
    values: {
      name: page.name,
      reviewBeforePublish: page.reviewBeforePublish,
      pageType: page.pageType,
      pageContext: page.pageContext,
      actions: (page.actions as PageFormValues['actions']).map((a) => ({
        actionId: a.actionId,
        purpose: a.purpose,
        buttonTitle: a.buttonTitle,
        actionType: a.actionType,
        url: a.url,
      })),
    },
    errors: {},
  };
  const audienceForm = options.audienceForm ?? { values: EMPTY_AUDIENCE_FORM, errors: {} };
  const a = audienceForm.values;
  const base = `/console/pages/${page.pageId}`;
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
        {options.error && (
          <p class="notice error" role="alert">
            {options.error}
          </p>
        )}
        <dl class="facts">
          <dt>Status</dt>
          <dd>
            <Badge value={page.status} />
          </dd>
          <dt>Type</dt>
          <dd>{page.pageType}</dd>
          <dt>Title</dt>
          <dd>{page.title}</dd>
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
          {(MOVES[page.status] ?? []).map((m) => (
            <PostForm key={m.name} viewer={viewer} action={`${base}/${m.name}`} confirm={m.confirm}>
              <button type="submit" class={m.name === 'publish' ? undefined : 'secondary'}>
                {m.label}
              </button>
            </PostForm>
          ))}
          {!archived && (
            <>
              <PostForm
                viewer={viewer}
                action={`${base}/publish-drafts`}
                confirm="Publish the draft of every audience of this page?"
              >
                <button type="submit" class="secondary">
                  Publish drafts
                </button>
              </PostForm>
              <PostForm
                viewer={viewer}
                action={`${base}/regenerate`}
                confirm="Write a new version for every live audience of this page?"
              >
                <button type="submit" class="secondary">
                  Regenerate all
                </button>
              </PostForm>
              <a class="button secondary" href={`${base}/import`}>
                Import a CSV
              </a>
            </>
          )}
        </div>
        <h2>Audiences{options.audiencesTotal === null ? '' : ` (${options.audiencesTotal})`}</h2>
        {audiences.length === 0 ? (
          <p>No audiences yet.</p>
        ) : (
          <TableRegion label="Audiences">
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
                {audiences.map((au) => (
                  <tr key={au.audienceId}>
                    <td>
                      <a href={`${base}/audiences/${au.audienceId}`}>{au.effectiveName}</a>
                      <br />
                      <code class="hint">{au.audienceId}</code>
                    </td>
                    <td>
                      <Badge value={au.status} />
                    </td>
                    <td>
                      {versionText(au.publishedVersion as { versionNumber: number; status: string })}
                      <br />
                      <span class="hint">
                        <When at={(au.publishedVersion as { publishedAt: string | null }).publishedAt} />
                      </span>
                    </td>
                    <td class="hide-small">
                      {versionText(au.latestVersion as { versionNumber: number; status: string })}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
        {!archived && (
          <details class="panel" open={Object.keys(audienceForm.errors).length > 0}>
            <summary>New audience</summary>
            <FormError errors={audienceForm.errors} />
            <form method="post" action={`${base}/audiences`} class="stack" novalidate>
              <Csrf viewer={viewer} />
              <p class="hint">
                A person (by e-mail), an account (by domain), or a named segment (a name alone). A person or account
                that already has an audience on this page gets that one back.
              </p>
              <Field
                name="person.email"
                label="Person’s e-mail"
                kind="email"
                errors={audienceForm.errors}
                value={a.email}
              />
              <Field name="person.name" label="Person’s name" errors={audienceForm.errors} value={a.personName} />
              <Field name="account.domain" label="Company domain" errors={audienceForm.errors} value={a.domain} />
              <Field name="account.name" label="Company name" errors={audienceForm.errors} value={a.company} />
              <Field
                name="customName"
                label="Segment name"
                hint="Required for a segment (no person, no company); otherwise an optional display name."
                errors={audienceForm.errors}
                value={a.customName}
              />
              <Field
                name="supplementaryContext"
                label="Context"
                hint="What the writer should know about this audience."
                kind="textarea"
                errors={audienceForm.errors}
                value={a.supplementaryContext}
              />
              <p>
                <button type="submit">Create the audience</button>
              </p>
            </form>
          </details>
        )}
        <h2>Brief and actions</h2>
        {archived ? (
          <>
            <p class="brief">{page.pageContext}</p>
            <p class="hint">An archived page is read-only: restore it to edit.</p>
          </>
        ) : (
          <>
            <FormError errors={form.errors} />
            <form method="post" action={`${base}/edit`} class="stack" novalidate>
              <Csrf viewer={viewer} />
              <PageFields values={form.values} errors={form.errors} creating={false} />
              <p>
                <button type="submit">Save the page</button>
              </p>
            </form>
          </>
        )}
      </>
    ),
  });
}
