import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { testConfig, useTestApp } from '../../../test/harness.js';
import { runCli } from '../../cli/run.js';
import { pagesCommands } from './pages.cli.js';

/**
 * `audience-pages page create|publish|archive|restore … --json` (docs/api.md, The life of a page),
 * run in this process against the test's database exactly as `src/main/cli.ts` runs them.
 */

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

beforeAll(() => {
  // A PostgreSQL test database is a schema of its own: the CLI's connection finds it as a deployed one would.
  if (t.database.env.PGOPTIONS) vi.stubEnv('PGOPTIONS', t.database.env.PGOPTIONS);
});
afterAll(() => vi.unstubAllEnvs()); // the next test file in this worker has a schema of its own

async function cli(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(
    [...args, '--json'],
    pagesCommands,
    { config: testConfig(t.database.env), clock: t.clock, migrations: {} },
    { stdout: (s) => out.push(s), stderr: (s) => err.push(s) },
  );
  const lines = out.join('').trim().split('\n');
  expect(lines).toHaveLength(1); // exactly one JSON object on stdout
  return { code, json: JSON.parse(lines[0]!), stderr: err.join('') };
}

function pageFile(name: string, body: unknown): string {
  const file = path.join(t.database.dataDir, name);
  fs.writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body));
  return file;
}

describe('audience-pages page …', () => {
  it('creates a page from a file, publishes and archives it; the API sees each step', async () => {
    const file = pageFile('page.json', {
      name: 'From a terminal',
      pageContext: 'A brief.',
      pageType: 'sales_deck',
      actions: [{ actionId: 'go', purpose: 'Go', buttonTitle: 'Go', actionType: 'link', url: 'https://x.example' }],
      headerActionId: 'go',
    });
    const created = await cli('page', 'create', '--file', file, '--tenant', alice.tenantId);
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ name: 'From a terminal', title: 'From a terminal', status: 'draft' });
    const { pageId } = created.json;
    const api = async () => (await t.request(alice, { method: 'GET', url: `/v0/pages/${pageId}` })).json();
    expect(await api()).toEqual(created.json);

    const published = await cli('page', 'publish', pageId, '--tenant', alice.tenantId);
    expect(published).toMatchObject({ code: 0, json: { pageId, status: 'published' } });
    const archived = await cli('page', 'archive', pageId, '--tenant', alice.tenantId);
    expect(archived).toMatchObject({ code: 0, json: { pageId, status: 'archived' } });
    expect(await api()).toEqual(archived.json);
    const again = await cli('page', 'archive', pageId, '--tenant', alice.tenantId);
    expect(again).toMatchObject({ code: 1, json: { error: { code: 'page_archived' } } });
    const restored = await cli('page', 'restore', pageId, '--tenant', alice.tenantId);
    expect(restored).toMatchObject({ code: 0, json: { status: 'published' } });
  });

  it('refuses a file the API would refuse, an unknown file, and another tenant’s page, writing nothing', async () => {
    const count = async () => (await t.request(alice, { method: 'GET', url: '/v0/pages' })).json().totalCount;
    const before = await count();
    const invalid = await cli(
      'page',
      'create',
      '--file',
      pageFile('bad.json', { name: 'x', pageType: 'landing' }),
      '--tenant',
      alice.tenantId,
    );
    expect(invalid).toMatchObject({ code: 1, json: { error: { code: 'validation_failed' } } });
    expect(invalid.json.error.message).toContain('pageContext');
    const tooLarge = await cli(
      'page',
      'create',
      '--file',
      pageFile('large.json', { name: 'x', pageType: 'custom', pageContext: '€'.repeat(95_000) }),
      '--tenant',
      alice.tenantId,
    );
    expect(tooLarge).toMatchObject({ code: 1, json: { error: { code: 'page_too_large' } } });
    const notJson = await cli('page', 'create', '--file', pageFile('x.json', '{'), '--tenant', alice.tenantId);
    expect(notJson).toMatchObject({ code: 1, json: { error: { code: 'bad_request' } } });
    const missing = await cli('page', 'create', '--file', '/nonexistent/page.json', '--tenant', alice.tenantId);
    expect(missing).toMatchObject({ code: 1, json: { error: { code: 'bad_request' } } });
    const noFile = await cli('page', 'create', '--tenant', alice.tenantId);
    expect(noFile.code).not.toBe(0);
    expect(await count()).toBe(before);

    const bobs = await t.request(bob, {
      method: 'POST',
      url: '/v0/pages',
      payload: { name: 'Bob’s', pageContext: 'b', pageType: 'custom' },
    });
    const other = await cli('page', 'publish', bobs.json().pageId, '--tenant', alice.tenantId);
    expect(other).toMatchObject({ code: 1, json: { error: { code: 'not_found' } } });
    expect((await t.request(bob, { method: 'GET', url: `/v0/pages/${bobs.json().pageId}` })).json().status).toBe(
      'draft',
    );
  });
});
