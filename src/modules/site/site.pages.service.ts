import type { Database } from '../../db/connect.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { liveAssetFileId } from '../assets/index.js';
import { readCompletedFile, type FileStore } from '../files/index.js';
import { RenderCache, type RenderedEntry } from './site.cache.js';
import { pageModel, type PageModel } from './site.model.js';
import { findArtifact } from './site.queries.js';
import { renderPage, type FormState, type RenderAssets } from './site.render.js';
import { resolvePage, type Resolution } from './site.resolve.js';
import type { PageSigner } from './site.tokens.js';

export type PageOutcome = { status: 200; entry: RenderedEntry } | { status: 404 | 410 };
export type FormPageOutcome = (Extract<Resolution, { status: 200 }> & { model: PageModel }) | { status: 404 | 410 };

/**
 * What a page host answers for a path: the rendered page of the link's published version (from
 * the cache, or rendered once from the stored artifact), or 404/410 (site.resolve.ts).
 */
export class PageService {
  readonly #cache = new RenderCache();
  readonly #rendering = new Map<string, Promise<RenderedEntry>>();

  constructor(
    private readonly database: Database,
    private readonly signer: PageSigner,
    private readonly assets: RenderAssets,
    private readonly files: FileStore,
  ) {}

  /** `origin` (scheme://host[:port]) is part of the key: absolute URLs in the page use it. */
  async page(host: string, path: string, origin: string): Promise<PageOutcome> {
    const resolution = await resolvePage(this.database, host, path);
    if (resolution.status !== 200) return resolution;
    const key = `${resolution.versionId} ${origin}`;
    const cached = this.#cache.get(key);
    if (cached !== undefined) return { status: 200, entry: cached };
    // Concurrent first requests for a version render it once.
    let pending = this.#rendering.get(key);
    if (pending === undefined) {
      pending = this.#render(key, resolution.tenantId, resolution.versionId, resolution.audienceId, origin).finally(
        () => this.#rendering.delete(key),
      );
      this.#rendering.set(key, pending);
    }
    return { status: 200, entry: await pending };
  }

  encoded(entry: RenderedEntry, encoding: 'br' | 'gzip' | 'identity'): Buffer {
    return this.#cache.encoded(entry, encoding);
  }

  async #render(key: string, tenantId: string, versionId: string, audienceId: string, origin: string) {
    const model = await this.#model(tenantId, versionId);
    const { html, csp } = this.render(model, tenantId, audienceId, origin, null);
    return this.#cache.set(key, html, csp);
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
