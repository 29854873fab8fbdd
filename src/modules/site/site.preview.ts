import { loadServiceSecret } from '../../db/service-secrets.js';
import type { AppContext } from '../../http/context.js';
import { MINUTE_MS } from '../../lib/clock.js';
import { PageSigner } from './site.tokens.js';

/** What signing a preview URL needs: the API's context, or the CLI's. */
type PreviewDeps = Pick<AppContext, 'database' | 'clock' | 'config'>;

/** Where a preview's page loads the runtime's stylesheet and script from, on the API host. */
export const PREVIEW_STATIC = '/_ap/preview-static/';

const signers = new WeakMap<PreviewDeps, Promise<PageSigner>>();

function signerFor(ctx: PreviewDeps): Promise<PageSigner> {
  let signer = signers.get(ctx);
  if (signer === undefined) {
    signer = loadServiceSecret(ctx.database.kysely, 'page-runtime', ctx.clock, ctx.config.secretKeys).then(
      (secret) => new PageSigner(secret),
    );
    signers.set(ctx, signer);
  }
  return signer;
}

/**
 * A signed preview URL of a version of the tenant (site.preview.routes.ts serves it) on the API
 * host `base` (PUBLIC_BASE_URL, else the request's own origin; the CLI: http://localhost:PORT),
 * valid PREVIEW_URL_MINUTES. The caller has checked that the version is the tenant's.
 */
export async function previewUrl(
  ctx: PreviewDeps,
  baseUrl: string,
  tenantId: string,
  versionId: string,
): Promise<{ previewUrl: string; expiresAt: string }> {
  const signer = await signerFor(ctx);
  const base = ctx.config.publicBaseUrl ?? baseUrl;
  const expires = Math.ceil((ctx.clock.now().getTime() + ctx.config.previewUrlMinutes * MINUTE_MS) / 1000);
  return {
    previewUrl: `${base.replace(/\/+$/, '')}/_ap/preview/${tenantId}/${versionId}?${signer.preview(tenantId, versionId, expires)}`,
    expiresAt: new Date(expires * 1000).toISOString(),
  };
}
