import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { makePage } from '../../../test/factories/pages.js';
import { makePerson } from '../../../test/factories/persons.js';
import { linkOnHost } from '../../../test/factories/site.js';
import { useTestApp } from '../../../test/harness.js';
import { buildApp } from '../../app.js';

/** 1:1 pages are private and not indexed; person route keys stay out of request logs (docs/privacy.md). */
const t = useTestApp({ tenants: ['Alice'] });
const [alice] = t.tenants;
const HOST = 'go.privacy.localhost';

const lines: Record<string, unknown>[] = [];
let app: Awaited<ReturnType<typeof buildApp>>;
const visit = (path: string, method: 'GET' | 'POST' = 'GET') =>
  app.inject({
    method,
    url: path,
    headers: { host: HOST, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
    ...(method === 'POST' ? { payload: '{}' } : {}),
  });

beforeAll(async () => {
  const pageId = await makePage(alice.scope, t.clock, { title: 'Pricing' });
  const general = await makeAudience(alice.scope, t.clock, { pageId, computedName: 'Everyone', personRouteKey: null });
  const sam = await makePerson(alice.scope, t.clock, { name: 'Sam Lee', email: 'sam@globex.example' });
  await makeAudience(alice.scope, t.clock, {
    pageId,
    computedName: 'Sam Lee · Globex',
    personId: sam,
    personRouteKey: 'sam-lee-globex',
  });
  await linkOnHost(t, alice, { hostname: HOST, path: '/pricing', audienceId: general.audienceId });
  // Then the service's app again, on the same database, with a logger that keeps its lines.
  app = await buildApp({
    config: t.app.ctx.config,
    database: t.database,
    logger: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) }),
    clock: t.clock,
  });
  await app.ready();
});
afterAll(() => app?.close());

const loggedPaths = () => lines.filter((l) => l.msg === 'request').map((l) => l.path);

describe('a 1:1 page (an audience addressing a person)', () => {
  it('is served Cache-Control: private with X-Robots-Tag: noindex, from the cache as well', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await visit('/pricing/sam-lee-globex');
      expect(res.statusCode).toBe(200);
      expect(res.headers['cache-control']).toBe('private, max-age=60');
      expect(res.headers['x-robots-tag']).toBe('noindex');
    }
    const revalidated = await app.inject({
      method: 'GET',
      url: '/pricing/sam-lee-globex',
      headers: { host: HOST, 'if-none-match': (await visit('/pricing/sam-lee-globex')).headers.etag as string },
    });
    expect(revalidated.statusCode).toBe(304);
    expect(revalidated.headers['cache-control']).toBe('private, max-age=60');
    expect(revalidated.headers['x-robots-tag']).toBe('noindex');
  });

  it('a page addressing nobody stays public and indexable', async () => {
    const res = await visit('/pricing');
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('public, max-age=60, stale-while-revalidate=600');
    expect(res.headers['x-robots-tag']).toBeUndefined();
  });
});

describe('request logs', () => {
  it('show a person route key as [redacted], for pages, misses and form posts alike', async () => {
    lines.length = 0;
    await visit('/pricing/sam-lee-globex');
    await visit('/pricing/kim-park-initech');
    await visit('/pricing/sam-lee-globex', 'POST');
    await visit('/pricing');
    expect(loggedPaths()).toEqual(['/pricing/[redacted]', '/pricing/[redacted]', '/pricing/[redacted]', '/pricing']);
    expect(JSON.stringify(lines)).not.toContain('sam-lee-globex');
    expect(JSON.stringify(lines)).not.toContain('kim-park-initech');
  });
});
