import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINE } from '../harness.js';
import { runCliInProcess, startServerProcess } from '../process.js';
import { announceMissingBrowser, DESKTOP_UA, HAVE_BROWSER, launchChromium, SCREENSHOTS } from './browser.js';

announceMissingBrowser();

const SHOTS = path.join(SCREENSHOTS, '23');
const MARKER = '<!-- first-page walkthrough:';

/** The README's walkthrough block: the first `sh` block after its marker, as a reader pastes it. */
function readmeWalkthrough(): string {
  const readme = fs.readFileSync('README.md', 'utf8');
  const at = readme.indexOf(MARKER);
  if (at < 0) throw new Error('README.md lost its first-page walkthrough marker');
  const start = readme.indexOf('```sh\n', at) + '```sh\n'.length;
  return readme.slice(start, readme.indexOf('\n```', start));
}

/** Runs a shell script with bash (stopping at the first failing command), as a terminal would. */
async function runBash(script: string, env: Record<string, string>, timeoutMs: number) {
  const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/**
 * Issue 23: a newcomer's flow, end to end, from a fresh data directory (SQLite) or an empty
 * schema (PostgreSQL) and a real server process, through the API only: the README's "Your first
 * page of your own" — the CLI's `tenant create` and `key create` (the same arguments, run in this
 * process), then the README's curl block run by bash as it stands — and both URLs it prints opened
 * in Chromium.
 */
describe.skipIf(!HAVE_BROWSER)('the README walkthrough: a first page of your own, in a real browser', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-first-page-'));
  let env: Record<string, string> = { DATA_DIR: dataDir };
  let dropSchema: (() => Promise<void>) | undefined;
  let server: Awaited<ReturnType<typeof startServerProcess>> | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    if (ENGINE === 'postgres') {
      const url = process.env.TEST_DATABASE_URL!;
      const schema = `t_first_${randomBytes(4).toString('hex')}`;
      const run = async (sql: string) => {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        await c.query(sql);
        await c.end();
      };
      await run(`create schema ${schema}`);
      dropSchema = () => run(`drop schema if exists ${schema} cascade`);
      env = { ...env, DATABASE_URL: url, PGOPTIONS: `-c search_path=${schema},public` };
    }
    // The server migrates the empty database itself, as `npm start` does on a first start.
    server = await startServerProcess(env);
    browser = await launchChromium();
    fs.mkdirSync(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await dropSchema?.();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('creates, previews, publishes and serves a page of a new tenant, exactly as the README says', async () => {
    // `npx audience-pages tenant create --name "My company" --json`, then `key create`.
    const tenant = await runCliInProcess(['tenant', 'create', '--name', 'My company', '--json'], env);
    expect(tenant.code, tenant.stderr).toBe(0);
    const { tenantId } = JSON.parse(tenant.stdout) as { tenantId: string };
    const key = await runCliInProcess(['key', 'create', '--tenant', tenantId, '--name', 'me', '--json'], env);
    expect(key.code, key.stderr).toBe(0);
    const { apiKey } = JSON.parse(key.stdout) as { apiKey: string };

    const walk = await runBash(readmeWalkthrough(), { API_KEY: apiKey, BASE: server!.baseUrl }, 90_000);
    expect(walk.code, `${walk.stdout}\n${walk.stderr}`).toBe(0);
    expect(walk.stderr).toBe('');
    const lines = walk.stdout.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/^\{"pageId":"page_\w+","status":"published"\}$/),
      expect.stringMatching(/^preview: http:\/\/127\.0\.0\.1:\d+\/_ap\/preview\//),
      '{"versionNumber":2,"status":"published"}',
      expect.stringMatching(/^\{"pageLinkId":"link_\w+","path":"\/jane"\}$/),
      expect.stringMatching(/^live: http:\/\/my-pages-[\w-]{8}\.localhost:\d+\/jane$/),
    ]);
    const previewUrl = lines[1]!.slice('preview: '.length);
    const liveUrl = lines[4]!.slice('live: '.length);

    // What the tenant now has, read back over the API: one page, one audience, version 2 live.
    const api = async (url: string) =>
      (await fetch(`${server!.baseUrl}${url}`, { headers: { 'x-api-key': apiKey } })).json() as Promise<{
        items: Record<string, unknown>[];
      }>;
    const pages = await api('/v0/pages');
    expect(pages.items).toHaveLength(1);
    expect(pages.items[0]).toMatchObject({ name: 'Rollout plan', status: 'published', reviewBeforePublish: true });
    const pageId = pages.items[0]!.pageId as string;
    const audiences = await api(`/v0/pages/${pageId}/audiences`);
    expect(audiences.items).toHaveLength(1);
    const audienceId = audiences.items[0]!.audienceId as string;
    const versions = await api(`/v0/pages/${pageId}/audiences/${audienceId}/versions`);
    expect(versions.items.map((v) => [v.versionNumber, v.status])).toEqual([
      [2, 'published'],
      [1, 'archived'],
    ]);

    const context = await browser!.newContext({ userAgent: DESKTOP_UA });
    try {
      const tab = await context.newPage();
      // The preview (of the version now live: a preview URL shows its version whatever its status).
      const preview = await tab.goto(previewUrl);
      expect(preview?.status()).toBe(200);
      expect(await tab.locator('body').innerText()).toContain('Preview — version 2');
      await tab.screenshot({ path: path.join(SHOTS, `first-page-preview-${ENGINE}.png`), fullPage: true });

      // The live link on the tenant's own *.localhost domain, as a visitor opens it.
      const live = await tab.goto(liveUrl);
      expect(live?.status()).toBe(200);
      expect(await tab.title()).toBe('A rollout plan for your team');
      const text = await tab.locator('body').innerText();
      expect(text).toContain('Jane asked about SSO.');
      expect(text).not.toContain('Preview —');
      await tab.screenshot({ path: path.join(SHOTS, `first-page-live-${ENGINE}.png`), fullPage: true });
    } finally {
      await context.close();
    }
  }, 150_000);
});
