import { Counter, Gauge, type Registry } from '../../metrics/metrics.js';
import type { PageService } from './site.pages.service.js';

/**
 * The page cache's metrics, read from the PageService when scraped: nothing on the request path
 * besides the two integers it counts.
 */
export function observePageCache(registry: Registry, pages: PageService): void {
  new Counter({
    name: 'ap_page_cache_requests_total',
    help: 'Page requests on tenant hosts, by whether their route was in memory (hit) or resolved (miss)',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      const { hits, misses } = pages.cacheStats();
      this.reset();
      this.inc({ result: 'hit' }, hits);
      this.inc({ result: 'miss' }, misses);
    },
  });
  new Counter({
    name: 'ap_page_hits_ahead_total',
    help: 'Page cache hits answered ahead of the router (counted in ap_page_cache_requests_total too; not in the request histogram)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(pages.cacheStats().hitsAhead);
    },
  });
  new Gauge({
    name: 'ap_page_cache_bytes',
    help: 'Bytes the page cache holds (every encoding of every page), against PAGE_CACHE_MB',
    registers: [registry],
    collect() {
      this.set(pages.cacheStats().bytes);
    },
  });
  new Gauge({
    name: 'ap_page_cache_pages',
    help: 'Rendered pages (version and host) in the page cache',
    registers: [registry],
    collect() {
      this.set(pages.cacheStats().pages);
    },
  });
  new Counter({
    name: 'ap_page_cache_evictions_total',
    help: 'Pages the cache dropped to stay within PAGE_CACHE_MB',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(pages.cacheStats().evictions);
    },
  });
}
