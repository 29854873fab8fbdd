import type { Audience } from '../audiences/index.js';
import { Field, FormError, type FieldErrors } from './console.pages.forms.js';
import { Badge, Csrf, PostForm, renderDocument, TableRegion, type Viewer, When } from './console.views.js';

/** A version as the timeline shows it: the API's AudienceVersionDetail, less its content. */
export interface TimelineVersion {
  versionId: string;
  versionNumber: number;
  status: string;
  createdAt: string;
  publishedAt: string | null;
  generation: {
    generator: string | null;
    model: string | null;
    durationMs: number | null;
    attempts: number;
    lastFailureReason: string | null;
  };
  hasContent: boolean;
}

/** A full URL that reaches the audience, and how. */
export interface AudienceUrl {
  url: string;
  how: string;
}

/** The audience's editable content (the API's PATCH fields) as the form shows them. */
export interface AudienceEditValues {
  customName: string;
  supplementaryContext: string;
  actionUrlOverride: string;
  actionFormIdOverride: string;
  actionFormInstructionsOverride: string;
  isNewPageAgent: boolean;
}

export function editValuesOf(a: Audience): AudienceEditValues {
  return {
    customName: a.customName ?? '',
    supplementaryContext: a.supplementaryContext ?? '',
    actionUrlOverride: a.actionUrlOverride ?? '',
    actionFormIdOverride: a.actionFormIdOverride ?? '',
    actionFormInstructionsOverride: a.actionFormInstructionsOverride ?? '',
    isNewPageAgent: a.isNewPageAgent,
  };
}

function duration(ms: number | null): string {
  if (ms === null) return '—';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Whom an audience addresses, in words. */
function addressee(a: Audience): string {
  if (a.personId !== null) return `A person: ${a.computedName}`;
  if (a.accountId != null) return `An account: ${a.computedName}`;
  return `A named segment: ${a.computedName}`;
}

/**
 * An audience: whom it addresses, its content (editable), its versions with a preview of one in
 * a frame, its moves (publish a draft, roll back, regenerate, archive/restore), its full URLs.
 */
export function renderAudienceView(options: {
  viewer: Viewer;
  pageName: string;
  pageStatus: string;
  audience: Audience;
  versions: TimelineVersion[];
  versionsTotal: number | null;
  preview: { versionNumber: number; url: string } | null;
  urls: AudienceUrl[];
  notice?: string;
  error?: string;
  form?: { values: AudienceEditValues; errors: FieldErrors };
}): string {
  const { viewer, audience: a } = options;
  const base = `/console/pages/${a.pageId}/audiences/${a.audienceId}`;
  const archived = a.archivedAt !== null;
  const readOnly = archived || options.pageStatus === 'archived';
  const form = options.form ?? { values: editValuesOf(a), errors: {} };
  const v = form.values;
  return renderDocument({
    title: a.effectiveName,
    viewer,
    section: 'pages',
    body: (
      <>
        <nav aria-label="Breadcrumb">
          <a href="/console/pages">Pages</a> › <a href={`/console/pages/${a.pageId}`}>{options.pageName}</a>
        </nav>
        <h1>{a.effectiveName}</h1>
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
          <dt>Addresses</dt>
          <dd>{addressee(a)}</dd>
          <dt>Status</dt>
          <dd>
            <Badge value={a.status} />
          </dd>
          <dt>Live version</dt>
          <dd>v{(a.publishedVersion as { versionNumber: number }).versionNumber}</dd>
          <dt>Created</dt>
          <dd>
            <When at={a.createdAt} />
          </dd>
          <dt>Audience id</dt>
          <dd>
            <code>{a.audienceId}</code>
          </dd>
        </dl>
        <div class="actions">
          {!readOnly && (
            <PostForm viewer={viewer} action={`${base}/regenerate`}>
              <button type="submit">Regenerate</button>
            </PostForm>
          )}
          {options.pageStatus !== 'archived' &&
            (archived ? (
              <PostForm viewer={viewer} action={`${base}/restore`}>
                <button type="submit" class="secondary">
                  Restore
                </button>
              </PostForm>
            ) : (
              <PostForm
                viewer={viewer}
                action={`${base}/archive`}
                confirm="Archive this audience? Its links stop serving until it is restored."
              >
                <button type="submit" class="secondary">
                  Archive
                </button>
              </PostForm>
            ))}
        </div>

        <h2>Its page links</h2>
        {options.urls.length === 0 ? (
          <p>No link reaches this audience yet (links are made over the API: POST /v0/page_links).</p>
        ) : (
          <ul class="urls">
            {options.urls.map((u) => (
              <li key={u.url}>
                <span class="secret">{u.url}</span>{' '}
                <button type="button" class="secondary" data-copy={u.url} aria-label={`Copy ${u.url}`}>
                  Copy
                </button>
                <br />
                <span class="hint">{u.how}</span>
              </li>
            ))}
          </ul>
        )}

        <h2>Versions{options.versionsTotal === null ? '' : ` (${options.versionsTotal})`}</h2>
        <TableRegion label="Versions">
          <table>
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Status</th>
                <th scope="col" class="hide-small">
                  Generator
                </th>
                <th scope="col" class="num hide-small">
                  Duration
                </th>
                <th scope="col" class="num hide-small">
                  Attempts
                </th>
                <th scope="col" class="hide-small">
                  Created
                </th>
                <th scope="col">
                  <span class="skip">Do</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {options.versions.map((ver) => (
                <tr key={ver.versionId}>
                  <td>v{ver.versionNumber}</td>
                  <td>
                    <Badge value={ver.status} />
                    {ver.generation.lastFailureReason && (
                      <>
                        <br />
                        <span class="hint">{ver.generation.lastFailureReason}</span>
                      </>
                    )}
                  </td>
                  <td class="hide-small">
                    {ver.generation.generator ?? '—'}
                    {ver.generation.model && (
                      <>
                        <br />
                        <span class="hint">{ver.generation.model}</span>
                      </>
                    )}
                  </td>
                  <td class="num hide-small">{duration(ver.generation.durationMs)}</td>
                  <td class="num hide-small">{ver.generation.attempts}</td>
                  <td class="hide-small">
                    <When at={ver.createdAt} />
                  </td>
                  <td class="row-actions">
                    {ver.hasContent && (
                      <a href={`${base}?preview=${ver.versionId}#preview`} aria-label={`Preview v${ver.versionNumber}`}>
                        Preview
                      </a>
                    )}
                    {!readOnly && ver.status === 'draft' && (
                      <PostForm
                        viewer={viewer}
                        action={`${base}/versions/${ver.versionId}/publish`}
                        confirm={`Publish v${ver.versionNumber}? It replaces the live version.`}
                      >
                        <button type="submit" class="link" aria-label={`Publish v${ver.versionNumber}`}>
                          Publish
                        </button>
                      </PostForm>
                    )}
                    {!readOnly && ver.status === 'archived' && ver.hasContent && (
                      <PostForm
                        viewer={viewer}
                        action={`${base}/versions/${ver.versionId}/publish`}
                        confirm={`Roll back to v${ver.versionNumber}? A new version with its content goes live.`}
                      >
                        <button type="submit" class="link" aria-label={`Roll back to v${ver.versionNumber}`}>
                          Roll back
                        </button>
                      </PostForm>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>

        {options.preview && (
          <section id="preview" aria-labelledby="preview-title">
            <h2 id="preview-title">Preview of v{options.preview.versionNumber}</h2>
            <p class="hint">
              As a visitor would see it; nothing is recorded. <a href={options.preview.url}>Open in its own tab</a> (the
              link works for a limited time).
            </p>
            <iframe
              class="preview"
              src={options.preview.url}
              title={`Preview of version ${options.preview.versionNumber}`}
              sandbox="allow-scripts"
              referrerpolicy="no-referrer"
            />
          </section>
        )}

        <h2>Context and overrides</h2>
        {readOnly ? (
          <p class="hint">
            {archived ? 'An archived audience is read-only: restore it to edit.' : 'The page is archived.'}
          </p>
        ) : (
          <>
            <FormError errors={form.errors} />
            <form method="post" action={`${base}/edit`} class="stack" novalidate>
              <Csrf viewer={viewer} />
              <p class="hint">Edits are used by the next version: regenerate once they are done.</p>
              <Field
                name="customName"
                label="Display name"
                hint="Empty: the name made from whom it addresses."
                errors={form.errors}
                value={v.customName}
              />
              <Field
                name="supplementaryContext"
                label="Context"
                kind="textarea"
                errors={form.errors}
                value={v.supplementaryContext}
              />
              <Field
                name="actionUrlOverride"
                label="Action URL override"
                kind="url"
                errors={form.errors}
                value={v.actionUrlOverride}
              />
              <Field
                name="actionFormIdOverride"
                label="Action form id override"
                errors={form.errors}
                value={v.actionFormIdOverride}
              />
              <Field
                name="actionFormInstructionsOverride"
                label="Action form instructions override"
                kind="textarea"
                errors={form.errors}
                value={v.actionFormInstructionsOverride}
              />
              <div class="field check">
                <input
                  type="checkbox"
                  id="f-isNewPageAgent"
                  name="isNewPageAgent"
                  value="true"
                  checked={v.isNewPageAgent}
                />
                <label for="f-isNewPageAgent">New page agent</label>
              </div>
              <p>
                <button type="submit">Save</button>
              </p>
            </form>
          </>
        )}
      </>
    ),
  });
}
