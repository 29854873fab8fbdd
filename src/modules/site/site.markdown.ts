import MarkdownIt from 'markdown-it';

/**
 * The Markdown of generated body text (v2 pages): a small, safe subset, rendered by markdown-it
 * (ADR 0007). Paragraphs, line breaks, **bold**, *italic*, lists, block quotes and headings (always
 * written as <h3>, under the section's own <h2>). Raw HTML is off (it shows as text, escaped), and
 * so are links, autolinks, images, reference definitions, tables and code: no URL of a generated
 * text ever becomes a link or a source. markdown-it escapes all text it writes.
 */
const markdown = new MarkdownIt('zero', { html: false, linkify: false, typographer: false }).enable([
  'heading',
  'list',
  'blockquote',
  'emphasis',
  'newline',
  'escape',
  'entity',
]);
// Belt and braces: were a link rule ever enabled, no URL would pass.
markdown.validateLink = () => false;
markdown.core.ruler.push('subordinate_headings', (state) => {
  for (const token of state.tokens)
    if (token.type === 'heading_open' || token.type === 'heading_close') token.tag = 'h3';
  return true;
});

/** Body text as HTML: escaped text in a few elements, never an attribute but `start` of a list. */
export function renderMarkdown(text: string): string {
  return markdown.render(text);
}
