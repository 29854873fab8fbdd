import { renderToStaticMarkup } from 'preact-render-to-string';
import {
  FORM_FIELDS,
  FORM_LIMITS,
  HIDDEN,
  HONEYPOT_FIELD,
  type FieldProblem,
  type FormField,
  type FormValues,
} from '../form-submissions/index.js';
import { cspHash } from './site.headers.js';
import type { ActionModel, FooterGroupModel, HeadModel, PageModel, ScriptModel, WidgetModel } from './site.model.js';
import { CopyMain } from './site.render-sections.js';

/**
 * Pages as HTML, with Preact's server renderer: every text and attribute value is escaped by
 * default (ADR 0004); the only markup that is not escaped is the tenant's own enabled scripts,
 * which are JavaScript by definition. Rendering is a pure function of the page model and the
 * runtime's assets, so a version's bytes are the same for every visitor.
 */

export interface RenderAssets {
  /** `/_ap/page.<hash>.css` */
  stylesheet: string;
  /** `/_ap/page.<hash>.js`, loaded by a tiny inline loader so that 'strict-dynamic' trusts it. */
  script: string;
}

export interface RenderContext {
  /** `http(s)://host[:port]`, to make image paths absolute where a URL must be (og:image). */
  origin: string;
  /** Signed reference of the page's audience for the page script (site.tokens.ts). */
  viewToken: string;
  assets: RenderAssets;
  /**
   * A preview of a version (site.preview.routes.ts): the page with a visible marker saying so, and
   * without the view token, so its script records no visit and no session.
   */
  preview?: { label: string };
}

export interface RenderedPage {
  html: string;
  /** The Content-Security-Policy that lets exactly this page's scripts run. */
  csp: string;
}

/** The JavaScript of an inline element as it will be in the HTML (what its CSP hash is over). */
function inertScript(content: string): string {
  // Inside <script>, only `</script` and `<!--` change how HTML parses the element; in JavaScript
  // `<\/script` and `<\!--` mean the same in strings, which is the only place they can be.
  return content.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

function loaderScript(src: string): string {
  return `(function(d){var s=d.createElement('script');s.src=${JSON.stringify(src)};s.async=true;d.head.appendChild(s)})(document);`;
}

/**
 * The policy of a page (docs/pages-runtime.md): scripts only by hash (our loader and each enabled
 * tenant script; 'strict-dynamic' lets those load what they load), no plugins, no <base>, forms
 * and everything else to http(s) (the tenant's scripts talk to their vendors), framing only by the
 * page's own origin.
 */
function contentSecurityPolicy(scriptHashes: string[]): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'strict-dynamic' ${scriptHashes.join(' ')}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' https: data:",
    "font-src 'self' https: data:",
    "connect-src 'self' https:",
    "frame-src 'self' https:",
    "media-src 'self' https:",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self' https:",
    "frame-ancestors 'self'",
  ].join('; ');
}

const Script = ({ code }: { code: string }) => <script dangerouslySetInnerHTML={{ __html: code }} />;

function Head({ head, ctx, absolute }: { head: HeadModel; ctx: RenderContext; absolute: (u: string) => string }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{head.title}</title>
      {head.description !== null && <meta name="description" content={head.description} />}
      {head.keywords.length > 0 && <meta name="keywords" content={head.keywords.join(', ')} />}
      {head.author !== null && <meta name="author" content={head.author} />}
      {head.robots !== null && <meta name="robots" content={head.robots} />}
      {head.canonical !== null && <link rel="canonical" href={head.canonical} />}
      {head.themeColor !== null && <meta name="theme-color" content={head.themeColor} />}
      {head.openGraph.map(([property, content]) => (
        <meta property={property} content={property === 'og:image' ? absolute(content) : content} />
      ))}
      {head.twitter.map(([name, content]) => (
        <meta name={name} content={name === 'twitter:image' ? absolute(content) : content} />
      ))}
      {ctx.preview === undefined && <meta name="ap-view" content={ctx.viewToken} />}
      <link rel="stylesheet" href={ctx.assets.stylesheet} />
      <Script code={loaderScript(ctx.assets.script)} />
    </head>
  );
}

/** An action's button: a link when its URL is safe, else its title as plain text. */
function ActionButton({ action, large = false }: { action: ActionModel; large?: boolean }) {
  const className = large ? 'ap-button ap-button--large' : 'ap-button';
  if (action.href === null) {
    return <span class={`${className} ap-button--inert`}>{action.buttonTitle}</span>;
  }
  return (
    <a class={className} href={action.href} data-ap-action={action.actionId}>
      {action.buttonTitle}
    </a>
  );
}

/** A refused submission shown again without JavaScript: the visitor's values and what is wrong. */
export interface FormState {
  actionId: string;
  values: FormValues;
  problems: FieldProblem[];
  /** The form stamp to send it again with (docs/forms.md, Fill time); shown to this visitor only. */
  stamp?: string | null;
}

const FIELD_VIEW: Record<
  FormField,
  {
    label: string;
    type: 'email' | 'text' | 'tel' | 'textarea';
    autocomplete: string;
    hint?: string;
    inputmode?: 'tel';
  }
> = {
  email: { label: 'Work email', type: 'email', autocomplete: 'email' },
  name: { label: 'Name', type: 'text', autocomplete: 'name' },
  phoneNumber: {
    label: 'Phone',
    type: 'tel',
    autocomplete: 'tel',
    inputmode: 'tel',
    hint: 'International format, e.g. +14155550123',
  },
  company: { label: 'Company', type: 'text', autocomplete: 'organization' },
  message: { label: 'Message', type: 'textarea', autocomplete: 'off' },
};

/**
 * A form-type action's form (docs/forms.md): a plain POST to the page's own address, so it works
 * without JavaScript; the page script adds the per-view token, the session and the form stamp, and
 * submits with fetch. The markup is the same for every visitor (no token in it), except when a
 * refused submission is shown again with its values and errors (`state`, never cached).
 */
function ActionForm({
  action,
  audienceId,
  state,
}: {
  action: ActionModel & { form: NonNullable<ActionModel['form']> };
  audienceId: string;
  state: FormState | null;
}) {
  const base = `ap-${action.actionId}`;
  const anchor = `ap-form-${action.actionId}`;
  const problems = state?.problems ?? [];
  const problemOf = (field: string) => problems.find((p) => p.field === field)?.message ?? null;
  const general = problemOf('form');
  return (
    <div class="ap-form" id={anchor} data-form-id={action.form.formId ?? undefined}>
      {action.form.formInstructions !== null && <p class="ap-form-instructions">{action.form.formInstructions}</p>}
      <div class="ap-form-sent" id={`ap-sent-${action.actionId}`} role="status" tabindex={-1}>
        <p class="ap-form-sent-title">Thank you!</p>
        <p>Your details have been sent. We will be in touch soon.</p>
      </div>
      <form
        method="post"
        action={`#${encodeURIComponent(anchor)}`}
        class="ap-form-fields"
        data-ap-form={action.actionId}
        accept-charset="utf-8"
      >
        <div class="ap-form-summary" id={`${base}-summary`} role="alert" tabindex={-1} hidden={problems.length === 0}>
          {problems.length > 0 && (
            <>
              <p class="ap-form-summary-title">
                {general !== null ? general : 'Please correct the following and send again:'}
              </p>
              <ul>
                {problems
                  .filter((p) => p.field !== 'form')
                  .map((p) => (
                    <li>
                      <a href={`#${base}-${p.field}`}>{p.message}</a>
                    </li>
                  ))}
              </ul>
            </>
          )}
        </div>
        {FORM_FIELDS.map((field) => {
          const view = FIELD_VIEW[field];
          const id = `${base}-${field}`;
          const error = problemOf(field);
          const described = [view.hint ? `${id}-hint` : null, error !== null ? `${id}-error` : null]
            .filter((x) => x !== null)
            .join(' ');
          const common = {
            id,
            name: field,
            autocomplete: view.autocomplete,
            maxlength: FORM_LIMITS[field],
            required: field === 'email',
            'aria-invalid': error !== null ? ('true' as const) : undefined,
            'aria-describedby': described === '' ? undefined : described,
          };
          const value = state?.values[field] ?? undefined;
          return (
            <div class={`ap-field ap-field--${field}`}>
              <label for={id}>
                {view.label}
                {field === 'email' ? (
                  <span class="ap-required"> (required)</span>
                ) : (
                  <span class="ap-optional"> (optional)</span>
                )}
              </label>
              {view.hint !== undefined && (
                <p class="ap-field-hint" id={`${id}-hint`}>
                  {view.hint}
                </p>
              )}
              {view.type === 'textarea' ? (
                <textarea {...common} rows={4}>
                  {value}
                </textarea>
              ) : (
                <input {...common} type={view.type as 'text'} inputmode={view.inputmode} value={value} />
              )}
              <p class="ap-field-error" id={`${id}-error`} hidden={error === null}>
                {error}
              </p>
            </div>
          );
        })}
        <div class="ap-hp" aria-hidden="true">
          <label for={`${base}-${HONEYPOT_FIELD}`}>Leave this field empty</label>
          <input id={`${base}-${HONEYPOT_FIELD}`} type="text" name={HONEYPOT_FIELD} tabindex={-1} autocomplete="off" />
        </div>
        <input type="hidden" name={HIDDEN.audience} value={audienceId} />
        <input type="hidden" name={HIDDEN.action} value={action.actionId} />
        <input type="hidden" name={HIDDEN.token} value="" />
        <input type="hidden" name={HIDDEN.session} value="" />
        <input
          type="hidden"
          name={HIDDEN.stamp}
          value={state?.actionId === action.actionId ? (state.stamp ?? '') : ''}
        />
        <button type="submit" class="ap-button ap-form-submit">
          {action.buttonTitle}
        </button>
      </form>
    </div>
  );
}

function ActionCard({
  action,
  audienceId,
  formState,
}: {
  action: ActionModel;
  audienceId: string;
  formState: FormState | null;
}) {
  return (
    <li class={action.form !== null ? 'ap-card ap-card--form' : 'ap-card'} id={`action-${action.actionId}`}>
      {action.purpose.trim() !== '' && <p class="ap-purpose">{action.purpose}</p>}
      {action.form !== null ? (
        <ActionForm
          action={action as ActionModel & { form: NonNullable<ActionModel['form']> }}
          audienceId={audienceId}
          state={formState?.actionId === action.actionId ? formState : null}
        />
      ) : (
        <ActionButton action={action} />
      )}
    </li>
  );
}

function Widget({ widget, index }: { widget: WidgetModel; index: number }) {
  const id = `widget-${index}`;
  return (
    <section class="ap-widget" aria-labelledby={widget.title ? id : undefined} data-widget-type={widget.type}>
      {widget.title !== '' && <h2 id={id}>{widget.title}</h2>}
      <ul class="ap-logos">
        {widget.logos.map((logo) => (
          <li>
            {logo.src !== null ? (
              <img src={logo.src} alt={logo.alt} loading="lazy" decoding="async" />
            ) : (
              <span class="ap-logo-text">{logo.alt}</span>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Footer({ groups }: { groups: FooterGroupModel[] }) {
  if (groups.length === 0) return null;
  return (
    <footer class="ap-footer">
      <div class="ap-wrap ap-footer-groups">
        {groups.map((group, i) => (
          <nav aria-labelledby={`footer-${i}`}>
            <h2 id={`footer-${i}`}>{group.title}</h2>
            <ul>
              {group.links.map((link) => (
                <li>{link.href !== null ? <a href={link.href}>{link.text}</a> : <span>{link.text}</span>}</li>
              ))}
            </ul>
          </nav>
        ))}
      </div>
    </footer>
  );
}

/** The path the agent's questions are posted to (site.agent.routes.ts). */
export const AGENT_PATH = '/_ap/ask';

/**
 * The on-page agent (docs/agent.md, The widget): a plain form that works without script (it posts
 * to AGENT_PATH and gets an answer page back); the page script turns it into a conversation. The
 * markup is the same for every visitor of the page (the view token names the audience, nobody else).
 */
function AgentWidget({ viewToken }: { viewToken: string }) {
  return (
    <section class="ap-agent" aria-labelledby="ap-agent-title">
      <h2 id="ap-agent-title">Questions? Ask this page</h2>
      <p class="ap-agent-intro">Answers come from what we have published about this offer.</p>
      <div class="ap-agent-log" id="ap-agent-log" aria-live="polite" />
      <form method="post" action={AGENT_PATH} class="ap-agent-form" data-ap-agent="" accept-charset="utf-8">
        <input type="hidden" name="v" value={viewToken} />
        <label for="ap-agent-q">Ask a question</label>
        <div class="ap-agent-row">
          <input id="ap-agent-q" name="q" type="text" required autocomplete="off" enterkeyhint="send" />
          <button type="submit" class="ap-button ap-agent-send">
            Send
          </button>
        </div>
      </form>
    </section>
  );
}

/** The marker across the top of a preview: not the live page (inline style: no stylesheet change). */
function PreviewMarker({ label }: { label: string }) {
  return (
    <div
      class="ap-preview-marker"
      role="status"
      style="position:sticky;top:0;z-index:1000;background:#7c2d12;color:#fff;font:600 14px/1.4 system-ui,sans-serif;padding:.5rem 1rem;text-align:center"
    >
      Preview — {label} — not what visitors see until it is published
    </div>
  );
}

function Body({
  model,
  scripts,
  formState,
  viewToken,
  preview,
}: {
  model: PageModel;
  scripts: string[];
  formState: FormState | null;
  viewToken: string;
  preview?: { label: string } | undefined;
}) {
  const others = model.actions.filter((a) => a !== model.headerAction || a.form !== null);
  const nextSteps = others.length > 0 && (
    <section class="ap-actions" aria-labelledby="ap-next-steps">
      <h2 id="ap-next-steps">Next steps</h2>
      <ul class="ap-grid">
        {others.map((action) => (
          <ActionCard action={action} audienceId={model.audienceId} formState={formState} />
        ))}
      </ul>
    </section>
  );
  const widgets = model.widgets.map((widget, index) => <Widget widget={widget} index={index} />);
  return (
    <body>
      {preview !== undefined && <PreviewMarker label={preview.label} />}
      <a class="ap-skip" href="#main">
        Skip to content
      </a>
      <header class="ap-bar">
        <div class="ap-wrap ap-bar-inner">
          <span class="ap-site">{model.siteName ?? ''}</span>
          {model.headerAction !== null && <ActionButton action={model.headerAction} />}
        </div>
      </header>
      <main id="main" class="ap-wrap">
        {model.copy !== null ? (
          <CopyMain model={model} copy={model.copy} Button={ActionButton} nextSteps={nextSteps} widgets={widgets} />
        ) : (
          <>
            <section class="ap-hero">
              <h1>{model.heading}</h1>
              {model.lead !== null && <p class="ap-lead">{model.lead}</p>}
              {model.headerAction !== null && model.headerAction.form === null && (
                <div class="ap-hero-action">
                  {model.headerAction.purpose.trim() !== '' && <p>{model.headerAction.purpose}</p>}
                  <ActionButton action={model.headerAction} large />
                </div>
              )}
            </section>
            {nextSteps}
            {widgets}
          </>
        )}
        {model.agent && <AgentWidget viewToken={viewToken} />}
      </main>
      <Footer groups={model.footer} />
      {scripts.map((code) => (
        <Script code={code} />
      ))}
    </body>
  );
}

function accentStyle(accent: string | null): string | undefined {
  if (accent === null) return undefined;
  return `--ap-accent:${accent};--ap-on-accent:${readableOn(accent)}`;
}

/** Black or white, whichever reads better on the colour (WCAG relative luminance). */
function readableOn(hex: string): string {
  let h = hex.slice(1);
  if (h.length <= 4) h = [...h].map((c) => c + c).join('');
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(h.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const luminance = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  return luminance > 0.179 ? '#111827' : '#ffffff';
}

/** The whole page of one version. */
export function renderPage(model: PageModel, ctx: RenderContext, formState: FormState | null = null): RenderedPage {
  const absolute = (url: string) => (url.startsWith('/') ? `${ctx.origin}${url}` : url);
  const scripts = model.scripts.map((s: ScriptModel) => inertScript(s.content));
  const html =
    '<!doctype html>' +
    renderToStaticMarkup(
      <html lang="en" style={accentStyle(model.accent)}>
        <Head head={model.head} ctx={ctx} absolute={absolute} />
        <Body model={model} scripts={scripts} formState={formState} viewToken={ctx.viewToken} preview={ctx.preview} />
      </html>,
    );
  return { html, csp: contentSecurityPolicy([cspHash(loaderScript(ctx.assets.script)), ...scripts.map(cspHash)]) };
}
