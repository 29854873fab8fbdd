import { renderToStaticMarkup } from 'preact-render-to-string';
import { cspHash } from './site.headers.js';

/**
 * The answer page of a question posted without script (docs/agent.md): the question, the answer
 * and its sources, the page's primary action, and the way back. Per visitor, so never cached; no
 * script; everything the visitor, the tenant or a model wrote is escaped text.
 */

const STYLE =
  'body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#111827;line-height:1.6}' +
  'main{max-width:40rem;margin:0 auto;padding:2.5rem 1.25rem}h1{font-size:1.5rem;line-height:1.25;margin:0 0 1rem}' +
  '.q{font-weight:600}.a{white-space:pre-line;background:#f3f4f6;border-radius:.5rem;padding:1rem}' +
  '.src{font-size:.9rem;color:#374151}a.btn{display:inline-block;background:#1d4ed8;color:#fff;padding:.6rem 1rem;' +
  'border-radius:.4rem;text-decoration:none;margin:.5rem 0}a:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}';

export const AGENT_PAGE_CSP = `default-src 'none'; style-src ${cspHash(STYLE)}; base-uri 'none'; form-action 'none'; frame-ancestors 'self'`;

export interface AgentPageView {
  question: string;
  answer: string;
  sources: { label: string }[];
  action: { title: string; href: string | null } | null;
  /** A path on the page's own host to go back to, or null. */
  back: string | null;
}

export function renderAgentPage(view: AgentPageView): string {
  return (
    '<!doctype html>' +
    renderToStaticMarkup(
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="robots" content="noindex" />
          <title>Your question</title>
          <style dangerouslySetInnerHTML={{ __html: STYLE }} />
        </head>
        <body>
          <main>
            <h1>Your question</h1>
            <p class="q">{view.question}</p>
            <h2>Answer</h2>
            <p class="a">{view.answer}</p>
            {view.sources.length > 0 && <p class="src">Sources: {view.sources.map((s) => s.label).join('; ')}</p>}
            {view.action !== null && view.action.href !== null && (
              <p>
                <a class="btn" href={view.action.href}>
                  {view.action.title}
                </a>
              </p>
            )}
            {view.back !== null && (
              <p>
                <a href={view.back}>Back to the page</a>
              </p>
            )}
          </main>
        </body>
      </html>,
    )
  );
}
