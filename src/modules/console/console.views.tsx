import type { ComponentChildren, VNode } from 'preact';
import { renderToStaticMarkup } from 'preact-render-to-string';
import { consoleAssets } from './console.static.js';

/**
 * The console's page shell and the pieces every screen shares. Everything a tenant, a visitor or
 * a model wrote goes through Preact's escaping: no screen sets inner HTML.
 */

/** What the shell needs to know of the signed-in user. */
export interface Viewer {
  email: string;
  csrfToken: string;
}

/** The sections of the console, in the navigation's order. */
const SECTIONS = [
  { key: 'pages', href: '/console/pages', label: 'Pages' },
  { key: 'people', href: '/console/people', label: 'People' },
  { key: 'settings', href: '/console/settings', label: 'Settings' },
  { key: 'users', href: '/console/users', label: 'Users' },
] as const;

export type Section = (typeof SECTIONS)[number]['key'];

/** The anti-CSRF field every state-changing form carries. */
export function Csrf({ viewer }: { viewer: Viewer }) {
  return <input type="hidden" name="_csrf" value={viewer.csrfToken} />;
}

/** A POST form of the console (with its anti-CSRF field); `confirm` asks first (script). */
export function PostForm(props: {
  viewer: Viewer;
  action: string;
  children: ComponentChildren;
  confirm?: string;
  class?: string;
}) {
  return (
    <form method="post" action={props.action} class={props.class ?? 'inline'} data-confirm={props.confirm}>
      <Csrf viewer={props.viewer} />
      {props.children}
    </form>
  );
}

/**
 * A table that may be wider than the screen: it scrolls inside its own region, which keyboard
 * users can focus and screen readers announce by its label (WCAG 1.4.10, 2.1.1).
 */
export function TableRegion({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}

export function Badge({ value }: { value: string }) {
  return <span class={`badge ${value.replace(/[^a-z_-]/g, '')}`}>{value}</span>;
}

/** A date-time as people read it, exact in its tooltip; UTC so that every reader sees the same. */
export function When({ at }: { at: string | null | undefined }) {
  if (at === null || at === undefined) return <span>—</span>;
  return (
    <time dateTime={at} title={at}>
      {at.slice(0, 16).replace('T', ' ')} UTC
    </time>
  );
}

/** A whole console document. `viewer` null: the signed-out shell (no navigation). */
export function renderDocument(options: {
  title: string;
  viewer: Viewer | null;
  section?: Section;
  body: VNode;
  /** A screen's own assets beyond the shared ones (the analytics chart): same-origin paths. */
  extra?: { styles?: string[]; scripts?: string[] };
  /** Reload the screen every this many seconds when script is off (a running import). */
  refreshWithoutScript?: number;
}): string {
  const assets = consoleAssets();
  const { viewer } = options;
  return (
    '<!doctype html>' +
    renderToStaticMarkup(
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="robots" content="noindex" />
          <title>{`${options.title} · Audience Pages console`}</title>
          <link rel="stylesheet" href={assets.stylesheet.path} />
          <script src={assets.script.path} defer />
          {options.refreshWithoutScript !== undefined && (
            <noscript>
              <meta http-equiv="refresh" content={String(options.refreshWithoutScript)} />
            </noscript>
          )}
          {options.extra?.styles?.map((href) => (
            <link key={href} rel="stylesheet" href={href} />
          ))}
          {options.extra?.scripts?.map((src) => (
            <script key={src} src={src} defer />
          ))}
        </head>
        <body>
          <a class="skip" href="#main">
            Skip to content
          </a>
          <header class="top">
            <a class="brand" href="/console">
              Audience Pages
            </a>
            {viewer !== null && (
              <nav aria-label="Console">
                <ul>
                  {SECTIONS.map((s) => (
                    <li key={s.key}>
                      <a href={s.href} aria-current={options.section === s.key ? 'page' : undefined}>
                        {s.label}
                      </a>
                    </li>
                  ))}
                </ul>
              </nav>
            )}
            {viewer !== null && (
              <div class="who">
                <span>{viewer.email}</span>
                <PostForm viewer={viewer} action="/console/sign-out">
                  <button type="submit" class="secondary">
                    Sign out
                  </button>
                </PostForm>
              </div>
            )}
          </header>
          <main id="main">{options.body}</main>
        </body>
      </html>,
    )
  );
}

/** A page that only says something (an error, a refusal, "signed out"). */
export function renderMessage(options: {
  title: string;
  text: string;
  viewer: Viewer | null;
  link?: { href: string; label: string };
}): string {
  return renderDocument({
    title: options.title,
    viewer: options.viewer,
    body: (
      <div class="narrow">
        <h1>{options.title}</h1>
        <p>{options.text}</p>
        {options.link && <a href={options.link.href}>{options.link.label}</a>}
      </div>
    ),
  });
}
