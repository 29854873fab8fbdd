/**
 * The page model: what a visitor's page shows, read from a version's stored artifact
 * (`application/vnd.audience-page.v1+json`, or v2 with the generated `copy`; made by the audiences
 * module's generators). Pure and
 * defensive: the artifact is JSON written by an earlier version of the service, so every field is
 * checked and anything unexpected is left out rather than trusted. Rendering (site.render.tsx)
 * works on this model only.
 */

export interface ActionModel {
  actionId: string;
  actionType: string;
  buttonTitle: string;
  purpose: string;
  /** A safe link target (see `safeHref`), or null when the artifact's URL is not one. */
  href: string | null;
  /**
   * Present on `form` actions: where the form of the forms feature goes (the audience's overrides
   * of the form id and instructions, as generated into the artifact).
   */
  form: { formId: string | null; formInstructions: string | null } | null;
}

interface LogoModel {
  alt: string;
  /** A safe image source (an http(s) URL, or the page's own signed image path), or null: show `alt`. */
  src: string | null;
}

export interface WidgetModel {
  type: string;
  title: string;
  logos: LogoModel[];
}

export interface FooterGroupModel {
  id: string;
  title: string;
  links: { id: string; text: string; href: string | null }[];
}

export interface ScriptModel {
  name: string;
  /** The tenant's JavaScript, as written (only `</script` and `<!--` are made inert; see renderScript). */
  content: string;
}

export interface HeadModel {
  /** The document title: the metadata title, else the page's heading. */
  title: string;
  description: string | null;
  keywords: string[];
  author: string | null;
  robots: string | null;
  canonical: string | null;
  themeColor: string | null;
  /** `og:*` and `twitter:*` meta tags, in a fixed order, values already chosen. */
  openGraph: [property: string, content: string][];
  twitter: [name: string, content: string][];
}

/** A body section of a v2 page; text fields are plain text, `body` and `answer` safe Markdown. */
export type SectionModel =
  | { kind: 'text'; heading: string; body: string }
  | { kind: 'benefits' | 'steps'; heading: string; intro: string; items: { title: string; text: string }[] }
  | { kind: 'proof'; heading: string; items: { quote: string; attribution: string }[] }
  | { kind: 'faq'; heading: string; items: { question: string; answer: string }[] };

/** What a generator wrote for a v2 page, beyond the heading, lead and call-to-action texts. */
export interface CopyModel {
  eyebrow: string | null;
  sections: SectionModel[];
}

export interface PageModel {
  pageId: string;
  audienceId: string;
  versionNumber: number;
  pageType: string;
  head: HeadModel;
  /** The visible heading (the generated, personalised title). */
  heading: string;
  /** The lead paragraph under the heading (the metadata description), if any. */
  lead: string | null;
  /** The name shown in the top bar (og:site_name, else the metadata title), if any. */
  siteName: string | null;
  /** A CSS hex colour for buttons and accents (from themeColor when it is one). */
  accent: string | null;
  headerAction: ActionModel | null;
  actions: ActionModel[];
  widgets: WidgetModel[];
  footer: FooterGroupModel[];
  scripts: ScriptModel[];
  /** The generated copy of a v2 page; null for a v1 page. */
  copy: CopyModel | null;
  /** Whether the page shows the on-page agent (the version's `isNewPageAgent`, docs/agent.md). */
  agent: boolean;
}

/** Builds first-party paths to images stored in the service (files and assets). */
export type ImagePath = (kind: 'file' | 'asset', id: string) => string;

const str = (value: unknown, max = 10_000): string => (typeof value === 'string' ? value.slice(0, max) : '');
const text = (value: unknown, max?: number): string | null => str(value, max).trim() || null;
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const LINK_PROTOCOLS = new Set(['http:', 'https:', 'mailto:', 'tel:']);

/**
 * A URL that may become a link: absolute `http:`, `https:`, `mailto:` or `tel:` (as the URL parser
 * reads it, so `java\tscript:` and ` javascript:` are what they are), or a path on the page's own
 * host (`/pricing`, not `//other.host`). Anything else (javascript:, data:, vbscript:, relative
 * paths, garbage) is null: the text is shown without a link.
 */
export function safeHref(value: unknown, protocols: ReadonlySet<string> = LINK_PROTOCOLS): string | null {
  const raw = str(value, 2048).trim();
  if (raw === '') return null;
  if (raw.startsWith('/') && !raw.startsWith('//') && !raw.startsWith('/\\')) {
    try {
      const url = new URL(raw, 'https://page.invalid');
      return url.host === 'page.invalid' ? `${url.pathname}${url.search}${url.hash}` : null;
    } catch {
      return null;
    }
  }
  try {
    const url = new URL(raw);
    return protocols.has(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

const IMAGE_PROTOCOLS = new Set(['http:', 'https:']);
const FILE_ID = /^file_[0-9a-z]{26}$/;
const ASSET_ID = /^asset_[0-9a-z]{26}$/;

/** An image source: an http(s) URL, else the service's own file or asset (a first-party path). */
function imageSource(image: Record<string, unknown>, imagePath: ImagePath): string | null {
  const url = safeHref(image.url, IMAGE_PROTOCOLS);
  if (url !== null && !url.startsWith('/')) return url;
  const fileId = str(image.fileId, 100);
  if (FILE_ID.test(fileId)) return imagePath('file', fileId);
  const assetId = str(image.assetId, 100);
  if (ASSET_ID.test(assetId)) return imagePath('asset', assetId);
  return null;
}

/** `#rgb`, `#rrggbb` (with optional alpha): the only theme colours used for styling. */
const HEX_COLOUR = /^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i;

function action(value: unknown): ActionModel | null {
  const a = record(value);
  const actionId = str(a.actionId, 200);
  if (actionId === '') return null;
  const actionType = str(a.actionType, 100);
  return {
    actionId,
    actionType,
    buttonTitle: str(a.buttonTitle, 255).trim() || 'Continue',
    purpose: str(a.purpose),
    href: safeHref(a.url),
    form: actionType === 'form' ? { formId: text(a.formId, 200), formInstructions: text(a.formInstructions) } : null,
  };
}

function head(
  content: Record<string, unknown>,
  metadata: Record<string, unknown>,
  imagePath: ImagePath,
  seo: Record<string, unknown>,
): HeadModel {
  const heading = str(content.title, 255);
  // Metadata the tenant set wins over the generated SEO texts (a v1 artifact has none).
  const title = text(metadata.title, 255) ?? text(seo.title, 255) ?? (heading.trim() || 'Page');
  const description = text(metadata.description) ?? text(seo.description, 1000);
  const absoluteImage = (url: unknown, fileId: unknown) => {
    const direct = safeHref(url, IMAGE_PROTOCOLS);
    if (direct !== null && !direct.startsWith('/')) return direct;
    const id = str(fileId, 100);
    return FILE_ID.test(id) ? imagePath('file', id) : null;
  };
  const og: [string, string | null][] = [
    ['og:type', 'website'],
    ['og:title', text(metadata.ogTitle, 255) ?? title],
    ['og:description', text(metadata.ogDescription) ?? description],
    ['og:url', safeHref(metadata.ogUrl, IMAGE_PROTOCOLS)],
    ['og:site_name', text(metadata.ogSiteName, 255)],
    ['og:image', absoluteImage(metadata.ogImageUrl, metadata.ogImageFileId)],
    ['og:image:alt', text(metadata.ogImageAlt, 255)],
  ];
  const twitterImage = absoluteImage(metadata.twitterImageUrl, metadata.twitterImageFileId);
  const tw: [string, string | null][] = [
    ['twitter:card', twitterImage !== null || og[5]![1] !== null ? 'summary_large_image' : 'summary'],
    ['twitter:title', text(metadata.twitterTitle, 255) ?? text(metadata.ogTitle, 255) ?? title],
    ['twitter:description', text(metadata.twitterDescription) ?? text(metadata.ogDescription) ?? description],
    ['twitter:image', twitterImage],
    ['twitter:image:alt', text(metadata.twitterImageAlt, 255)],
    ['twitter:site', text(metadata.twitterSite, 255)],
    ['twitter:creator', text(metadata.twitterCreator, 255)],
  ];
  const robots = list(metadata.robots)
    .map((r) => str(r, 100).trim())
    .filter(Boolean);
  const themeColor = text(metadata.themeColor, 100);
  return {
    title,
    description,
    keywords: list(metadata.keywords)
      .map((k) => str(k, 100).trim())
      .filter(Boolean),
    author: text(metadata.author, 255),
    robots: robots.length > 0 ? robots.join(', ') : null,
    canonical: safeHref(metadata.canonicalUrl, IMAGE_PROTOCOLS),
    themeColor,
    openGraph: og.filter((e): e is [string, string] => e[1] !== null),
    twitter: tw.filter((e): e is [string, string] => e[1] !== null),
  };
}

const items = <T>(value: unknown, max: number, read: (item: Record<string, unknown>) => T) =>
  list(value)
    .slice(0, max)
    .map((item) => read(record(item)));

function section(value: unknown): SectionModel | null {
  const s = record(value);
  const heading = str(s.heading, 255).trim();
  const titled = (i: Record<string, unknown>) => ({ title: str(i.title, 255).trim(), text: str(i.text, 1000).trim() });
  switch (s.kind) {
    case 'text':
      return { kind: 'text', heading, body: str(s.body, 5000) };
    case 'benefits':
    case 'steps':
      return { kind: s.kind, heading, intro: str(s.intro, 1000).trim(), items: items(s.items, 12, titled) };
    case 'proof':
      return {
        kind: 'proof',
        heading,
        items: items(s.items, 6, (i) => ({
          quote: str(i.quote, 1000).trim(),
          attribution: str(i.attribution, 255).trim(),
        })),
      };
    case 'faq':
      return {
        kind: 'faq',
        heading,
        items: items(s.items, 12, (i) => ({ question: str(i.question, 500).trim(), answer: str(i.answer, 3000) })),
      };
    default:
      return null;
  }
}

/**
 * The generated copy of a v2 artifact, and its call-to-action texts by action id (they replace the
 * tenant's texts of those actions; the actions' URLs stay the tenant's).
 */
function copyOf(content: Record<string, unknown>) {
  if (content.copy === undefined) return null;
  const copy = record(content.copy);
  const hero = record(copy.hero);
  const texts = new Map<string, { buttonTitle: string; purpose: string }>();
  for (const a of list(copy.actions).map(record)) {
    const buttonTitle = str(a.buttonTitle, 255).trim();
    if (buttonTitle !== '') texts.set(str(a.actionId, 200), { buttonTitle, purpose: str(a.purpose, 1000) });
  }
  return {
    model: {
      eyebrow: text(hero.eyebrow, 255),
      sections: list(copy.sections)
        .slice(0, 12)
        .map(section)
        .filter((x): x is SectionModel => x !== null),
    },
    subheadline: text(hero.subheadline, 1000),
    seo: record(copy.seo),
    texts,
  };
}

/** The model of one version's page, from its stored artifact (`{ contentType, content, … }`). */
export function pageModel(artifact: unknown, imagePath: ImagePath): PageModel {
  const content = record(record(artifact).content);
  const metadata = record(content.metadata);
  const copy = copyOf(content);
  const actions = list(content.actions)
    .map(action)
    .filter((a): a is ActionModel => a !== null)
    .map((a) => ({ ...a, ...copy?.texts.get(a.actionId) }));
  const headerActionId = str(content.headerActionId, 200);
  const headerAction = actions.find((a) => a.actionId === headerActionId) ?? null;
  const model = head(content, metadata, imagePath, copy?.seo ?? {});
  return {
    pageId: str(content.pageId, 200),
    audienceId: str(content.audienceId, 200),
    versionNumber: typeof content.versionNumber === 'number' ? content.versionNumber : 0,
    pageType: str(content.pageType, 100),
    head: model,
    heading: str(content.title, 255).trim() || model.title,
    lead: copy === null ? model.description : copy.subheadline,
    siteName: text(metadata.ogSiteName, 255) ?? text(metadata.title, 255),
    accent: model.themeColor !== null && HEX_COLOUR.test(model.themeColor) ? model.themeColor : null,
    headerAction,
    actions,
    widgets: list(content.actionCardWidgets).map((value) => {
      const w = record(value);
      return {
        type: str(w.type, 100),
        title: str(w.title, 255),
        logos: list(w.logos).map((logo) => {
          const image = record(record(logo).image);
          return { alt: str(image.altText, 255), src: imageSource(image, imagePath) };
        }),
      };
    }),
    footer: list(content.footerLinks).map((value) => {
      const g = record(value);
      return {
        id: str(g.id, 100),
        title: str(g.title, 255),
        links: list(g.links).map((l) => {
          const link = record(l);
          return { id: str(link.id, 100), text: str(link.text, 255), href: safeHref(link.url) };
        }),
      };
    }),
    // Older artifacts carry no scripts: their pages render without any.
    scripts: list(content.scripts)
      .map((s) => record(s))
      .filter((s) => typeof s.content === 'string' && s.content.trim() !== '')
      .map((s) => ({ name: str(s.name, 255), content: str(s.content, 100_000) })),
    copy: copy?.model ?? null,
    agent: record(content.agent).isNewPageAgent === true,
  };
}
