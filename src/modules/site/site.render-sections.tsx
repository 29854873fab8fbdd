import type { ComponentChildren, FunctionComponent } from 'preact';
import type { ActionModel, CopyModel, PageModel, SectionModel } from './site.model.js';
import { renderMarkdown } from './site.markdown.js';

/**
 * The main part of a v2 page (generated copy): hero with eyebrow and call to action, the tenant's
 * logo walls, the body sections, the next steps. Every text is escaped by Preact; the Markdown of
 * prose and answers is rendered by site.markdown.ts (raw HTML, links and images off), the one
 * other place raw markup is written. The pieces shared with v1 pages (the action button, the next
 * steps with their forms, the widgets) are handed in by site.render.tsx.
 */
export function CopyMain({
  model,
  copy,
  Button,
  nextSteps,
  widgets,
}: {
  model: PageModel;
  copy: CopyModel;
  Button: FunctionComponent<{ action: ActionModel; large?: boolean }>;
  nextSteps: ComponentChildren;
  widgets: ComponentChildren;
}) {
  const primary = model.headerAction !== null && model.headerAction.form === null ? model.headerAction : null;
  return (
    <>
      <section class="ap-hero ap-hero--v2">
        {copy.eyebrow !== null && <p class="ap-eyebrow">{copy.eyebrow}</p>}
        <h1>{model.heading}</h1>
        {model.lead !== null && <p class="ap-lead">{model.lead}</p>}
        {primary !== null && (
          <div class="ap-hero-cta">
            <Button action={primary} large />
            {primary.purpose.trim() !== '' && <p>{primary.purpose}</p>}
          </div>
        )}
      </section>
      {widgets}
      {copy.sections.map((section, index) => (
        <Section section={section} id={`ap-section-${index}`} />
      ))}
      {nextSteps}
      {!nextSteps && primary !== null && (
        <section class="ap-closing" aria-label="Next step">
          {primary.purpose.trim() !== '' && <p>{primary.purpose}</p>}
          <Button action={primary} large />
        </section>
      )}
    </>
  );
}

const Prose = ({ markdown }: { markdown: string }) => (
  <div class="ap-prose" dangerouslySetInnerHTML={{ __html: renderMarkdown(markdown) }} />
);

function Section({ section, id }: { section: SectionModel; id: string }) {
  const heading = section.heading !== '' ? <h2 id={id}>{section.heading}</h2> : null;
  const labelled = heading !== null ? id : undefined;
  switch (section.kind) {
    case 'text':
      return (
        <section class="ap-section ap-text" aria-labelledby={labelled}>
          {heading}
          <Prose markdown={section.body} />
        </section>
      );
    case 'benefits':
    case 'steps': {
      const List = section.kind === 'steps' ? 'ol' : 'ul';
      return (
        <section class={`ap-section ap-${section.kind}`} aria-labelledby={labelled}>
          {heading}
          {section.intro !== '' && <p class="ap-intro">{section.intro}</p>}
          <List class="ap-points">
            {section.items.map((item) => (
              <li>
                {item.title !== '' && <h3>{item.title}</h3>}
                {item.text !== '' && <p>{item.text}</p>}
              </li>
            ))}
          </List>
        </section>
      );
    }
    case 'proof':
      return (
        <section
          class="ap-section ap-proof"
          aria-labelledby={labelled}
          aria-label={labelled ? undefined : 'In their words'}
        >
          {heading}
          {section.items.map((item) => (
            <figure class="ap-quote">
              <blockquote>
                <p>{item.quote}</p>
              </blockquote>
              {item.attribution !== '' && <figcaption>{item.attribution}</figcaption>}
            </figure>
          ))}
        </section>
      );
    case 'faq':
      return (
        <section class="ap-section ap-faq" aria-labelledby={labelled}>
          {heading}
          {section.items.map((item) => (
            <details>
              <summary>{item.question}</summary>
              <Prose markdown={item.answer} />
            </details>
          ))}
        </section>
      );
  }
}
