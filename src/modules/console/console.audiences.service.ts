import type { TenantScope } from '../../db/tenant-scope.js';
import type { AudienceUrl } from './console.audiences.views.js';
import { linksOfPage } from './console.queries.js';

/** Links of a page read to make an audience's URLs. */
const LINKS_READ = 100;

/**
 * An audience's full URLs (docs/console.md, An audience): its own links, and its person route key
 * under every link of its page (docs/pages-runtime.md, Routing). A `*.localhost` domain is the
 * development one, served over http on the service's port; every other domain over https. A link
 * on no domain is served on every domain of the tenant: its path is shown alone.
 */
export async function audienceUrls(
  scope: TenantScope,
  port: number,
  pageId: string,
  audienceId: string,
  routeKey: string | null,
): Promise<AudienceUrl[]> {
  const links = await linksOfPage(scope, pageId, LINKS_READ);
  const origin = (hostname: string) =>
    hostname.endsWith('.localhost') ? `http://${hostname}${port === 80 ? '' : `:${port}`}` : `https://${hostname}`;
  const urls: AudienceUrl[] = [];
  for (const link of links) {
    const host = link.hostname;
    if (link.audience_id === audienceId) {
      urls.push(
        host === null
          ? { url: link.path, how: 'Its link, on every domain of yours (no domain named).' }
          : { url: `${origin(host)}${link.path}`, how: 'Its link.' },
      );
    }
    if (routeKey !== null) {
      const path = `${link.path === '/' ? '' : link.path}/${encodeURIComponent(routeKey)}`;
      const how = 'Its own address under a link of the page (its person route key).';
      urls.push(
        host === null ? { url: path, how: `${how} On every domain of yours.` } : { url: `${origin(host)}${path}`, how },
      );
    }
  }
  return urls;
}
