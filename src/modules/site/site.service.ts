import type { Database } from '../../db/connect.js';
import { TenantScope } from '../../db/tenant-scope.js';
import { liveAssetFileId } from '../assets/index.js';
import { readCompletedFile, type FileStore } from '../files/index.js';
import { RenderCache, type RenderedEntry } from './site.cache.js';
import { pageModel } from './site.model.js';
import { findArtifact } from './site.queries.js';
import { renderPage, type RenderAssets } from './site.render.js';
import { resolvePage } from './site.resolve.js';
import type { PageSigner } from './site.tokens.js';

export type PageOutcome = { status: 200; entry: RenderedEntry } | { status: 404 | 410 };

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
    const artifact = await findArtifact(this.#scope(tenantId), versionId);
    const model = pageModel(artifact, (_kind, id) => this.signer.imagePath(tenantId, id));
    const { html, csp } = renderPage(model, {
      origin,
      viewToken: this.signer.viewToken(tenantId, audienceId),
      assets: this.assets,
    });
    return this.#cache.set(key, html, csp);
  }

  /** An image a page of the tenant shows (a file, or an asset's file), if it is still there. */
  async image(tenantId: string, id: string, store: FileStore) {
    const scope = this.#scope(tenantId);
    const fileId = id.startsWith('asset_') ? await liveAssetFileId(scope, id) : id;
    return fileId === null ? null : readCompletedFile(scope, store, fileId);
  }

  #scope(tenantId: string) {
    return new TenantScope(this.database.kysely, this.database.engine, tenantId);
  }
}
