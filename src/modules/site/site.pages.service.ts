import type { Database } from '../../db/connect.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { liveAssetFileId } from '../assets/index.js';
import { readCompletedFile, type FileStore } from '../files/index.js';
import { normalizePath } from '../page-links/index.js';
import type { ServingRevisions } from '../serving/index.js';
import { PageCache, type RenderedEntry } from './site.cache.js';
import { pageModel, type PageModel } from './site.model.js';
import { findArtifact, findPreviewVersion } from './site.queries.js';
import { PREVIEW_STATIC } from './site.preview.js';
import { renderPage, type FormState, type RenderAssets } from './site.render.js';
import { resolvePage, type Resolution } from './site.resolve.js';
import type { PageSigner } from './site.tokens.js';

export type PageOutcome = { status: 200; entry: RenderedEntry } | { status: 404 | 410 };
export type FormPageOutcome = (Extract<Resolution, { status: 200 }> & { model: PageModel }) | { status: 404 | 410 };

/**
 * A path a page host may remember an answer for: a normalized path (so `/a//b/` and `/a/b` are
 * not two entries) whose percent-escapes are the canonical ones a browser sends. Any other
 * spelling is still answered, from the database, but never kept: a visitor cannot make entries
 * by spelling one page many ways.
 */
function cacheablePath(rawPath: string): boolean {
  let normalized: string;
  try {
    normalized = normalizePath(rawPath, '/path');
  } catch {
    return false;
  }
  if (normalized !== rawPath) return false;
  if (!rawPath.includes('%')) return true;
  return rawPath.split('/').every((segment) => {
    try {
      return encodeURIComponent(decodeURIComponent(segment)) === segment;
    } catch {
      return false;
    }
  });
}

/**
 * What a page host answers for a path: the final bytes of the link's published version, from
 * memory when this process answered the same (origin, path) since the tenant's serving revision
 * last moved (no database, no rendering: site.cache.ts), else resolved (site.resolve.ts) and, for
 * a version not kept yet, rendered once however many visitors ask at once; or 404/410, which are
 * never kept.
 */
export class PageService {
  readonly #cache: PageCache;
  readonly #rendering = new Map<string, Promise<RenderedEntry>>();
  #hits = 0;
  #hitsAhead = 0;
  #misses = 0;

  constructor(
    private readonly database: Database,
    private readonly signer: PageSigner,
    private readonly assets: RenderAssets,
    private readonly files: FileStore,
    private readonly revisions: ServingRevisions,
    cacheBytes: number,
  ) {
    this.#cache = new PageCache(cacheBytes);
  }

  /**
   * `origin` (scheme://host[:port], the host a verified domain's name, see site.routes.ts) is
   * part of every key: absolute URLs in the page use it. `path` is the request's path, as sent.
   */
  async page(host: string, path: string, origin: string): Promise<PageOutcome> {
    const routeKey = `${origin}${path}`;
    const route = this.#cache.route(routeKey);
    if (route !== undefined) {
      if (this.revisions.current(route.tenantId, route.generation)) {
        this.#hits += 1;
        return { status: 200, entry: route.entry };
      }
      this.#cache.forgetRoute(routeKey);
    }
    this.#misses += 1;
    // Read before the database is: a change committed after this makes what follows stale.
    const generation = this.revisions.generation;
    const resolution = await resolvePage(this.database, host, path);
    if (resolution.status !== 200) return resolution;
    const pageKey = `${resolution.versionId} ${origin}`;
    const entry = this.#cache.page(pageKey) ?? (await this.#rendered(pageKey, resolution, origin));
    if (cacheablePath(path) && this.revisions.current(resolution.tenantId, generation)) {
      this.#cache.addRoute(routeKey, pageKey, resolution.tenantId, generation);
    }
    return { status: 200, entry };
  }

  /**
   * The cached page of (origin, path) while its tenant's serving revision is current: a hit, with
   * no await (site.pages.ahead.ts answers it ahead of the router); undefined for anything else,
   * which `page` then answers.
   */
  hit(origin: string, path: string): RenderedEntry | undefined {
    const route = this.#cache.route(`${origin}${path}`);
    if (route === undefined || !this.revisions.current(route.tenantId, route.generation)) return undefined;
    this.#hits += 1;
    this.#hitsAhead += 1;
    return route.entry;
  }

  /** Concurrent first requests for a version on an origin render it once. */
  #rendered(pageKey: string, resolution: Extract<Resolution, { status: 200 }>, origin: string) {
    let pending = this.#rendering.get(pageKey);
    if (pending === undefined) {
      const { tenantId, versionId, audienceId, personal } = resolution;
      pending = this.#render(pageKey, tenantId, versionId, audienceId, origin, personal).finally(() =>
        this.#rendering.delete(pageKey),
      );
      this.#rendering.set(pageKey, pending);
    }
    return pending;
  }

  /** How full the cache is (metrics). */
  cacheStats() {
    return { ...this.#cache.stats(), hits: this.#hits, hitsAhead: this.#hitsAhead, misses: this.#misses };
  }

  async #render(
    key: string,
    tenantId: string,
    versionId: string,
    audienceId: string,
    origin: string,
    personal: boolean,
  ) {
    const model = await this.#model(tenantId, versionId);
    const { html, csp } = this.render(model, tenantId, audienceId, origin, null);
    return this.#cache.addPage(key, html, csp, personal);
  }

  async #model(tenantId: string, versionId: string): Promise<PageModel> {
    const artifact = await findArtifact(this.#scope(tenantId), versionId);
    return pageModel(artifact, (_kind, id) => this.signer.imagePath(tenantId, id));
  }

  /**
   * The page a form is posted to (its own address): the link, page and audience it resolves to
   * now, and the published version's model (to find the form's action). Not cached: posts are few.
   */
  async formPage(host: string, path: string): Promise<FormPageOutcome> {
    const resolution = await resolvePage(this.database, host, path);
    if (resolution.status !== 200) return resolution;
    return { ...resolution, model: await this.#model(resolution.tenantId, resolution.versionId) };
  }

  /** A page rendered for one request (a refused form shown again with its values): never cached. */
  render(model: PageModel, tenantId: string, audienceId: string, origin: string, formState: FormState | null) {
    return renderPage(
      model,
      { origin, viewToken: this.signer.viewToken(tenantId, audienceId), assets: this.assets },
      formState,
    );
  }

  /**
   * A version of the tenant rendered for a preview (any status that has content): never cached,
   * with the preview marker and no view token (no visit, no session). Its images are served on
   * the API host at `/_ap/preview-img/<tenantId>/…` (the same signatures). Null when the version
   * has no content or is not there.
   */
  async preview(tenantId: string, versionId: string, origin: string) {
    const row = await findPreviewVersion(this.#scope(tenantId), versionId);
    if (row?.artifact === null || row === undefined) return null;
    const model = pageModel(row.artifact, (_kind, id) =>
      this.signer.imagePath(tenantId, id).replace('/_ap/img/', `/_ap/preview-img/${tenantId}/`),
    );
    const label = `version ${Number(row.version_number)} (${row.status})`;
    const assets = {
      stylesheet: this.assets.stylesheet.replace('/_ap/', PREVIEW_STATIC),
      script: this.assets.script.replace('/_ap/', PREVIEW_STATIC),
    };
    return renderPage(model, { origin, viewToken: '', assets, preview: { label } });
  }

  /**
   * An image a page of the tenant shows (a file, or an asset's file) at its signed path
   * (site.tokens.ts), if the signature is the tenant's and the image is still there.
   */
  async image(tenantId: string, id: string, mac: string) {
    if (!this.signer.checkImage(tenantId, id, mac)) return null;
    const scope = this.#scope(tenantId);
    const fileId = id.startsWith('asset_') ? await liveAssetFileId(scope, id) : id;
    return fileId === null ? null : readCompletedFile(scope, this.files, fileId);
  }

  #scope(tenantId: string) {
    return TenantScope.of(this.database, tenantId);
  }
}
