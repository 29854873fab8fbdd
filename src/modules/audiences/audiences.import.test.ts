import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makePage } from '../../../test/factories/pages.js';
import { rowCounts, useTestApp, type Tenant } from '../../../test/harness.js';
import { runCliProcess } from '../../../test/process.js';
import { importAudiencesCsv, type ImportSummary } from './audiences.import.js';

const t = useTestApp({ tenants: ['Alice', 'Bob'] });
const [alice, bob] = t.tenants;

/** Writes a CSV into the test's data directory; returns its path. */
function csvFile(name: string, text: string): string {
  const file = path.join(t.database.dataDir, name);
  fs.writeFileSync(file, text);
  return file;
}

const audiencesOf = async (tenant: Tenant, pageId: string) =>
  (await t.request(tenant, { method: 'GET', url: `/v0/pages/${pageId}/audiences?limit=100` })).json() as {
    totalCount: number;
    items: { personId: string | null; accountId: string | null; computedName: string; status: string }[];
  };

// A BOM, CRLF line ends, the header in another order and case, a quoted field over two lines,
// duplicates (the same email in another case), bad emails, a name without email, a blank line.
const TARGETS = [
  '\uFEFFDomain,EMAIL,Name,company,context',
  'globex.example,sam@globex.example,Sam Lee,Globex,"Runs sales ops,\r\nloves dashboards"',
  ',ada@initech.example,Ada Byron,,',
  ',not-an-email,Broken,,',
  'umbrella.example,,,Umbrella,Pharma account',
  ',SAM@GLOBEX.EXAMPLE,Sam L.,,',
  '',
  ',,Only A Name,,',
  'hooli.example,kim@gmail.com,Kim,Hooli,',
  ',also@bad,Bad Two,,',
  ',ada@initech.example,Ada again,,',
].join('\r\n');

describe('audience import FILE.csv (CLI)', () => {
  it('imports good rows, reuses duplicates, reports bad rows by line; a re-run creates nothing', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const file = csvFile('targets.csv', TARGETS);
    const progress: number[] = [];
    const summary = await importAudiencesCsv(alice.scope, t.clock, pageId, file, {
      onStart: (rows) => progress.push(-rows),
      onProgress: (done) => progress.push(done),
    });
    expect(summary).toMatchObject({ rows: 9, created: 4, existing: 2, failed: 3, interrupted: false });
    // Lines as an editor shows them: the quoted line break and the blank line 8 count.
    expect(summary.errors).toEqual([
      { line: 5, column: 'email', code: 'validation_failed', message: expect.stringContaining('email address') },
      { line: 9, column: 'email', code: 'validation_failed', message: expect.stringContaining('identifies nobody') },
      { line: 11, column: 'email', code: 'validation_failed', message: expect.stringContaining('email address') },
    ]);
    expect(progress[0]).toBe(-9);
    expect(progress.at(-1)).toBe(9);

    const list = await audiencesOf(alice, pageId);
    expect(list.totalCount).toBe(4);
    const names = list.items.map((a) => a.computedName).sort();
    expect(names).toEqual(['Ada Byron · initech.example', 'Kim · Hooli', 'Sam Lee · Globex', 'Umbrella']);
    // Each imported audience has its generation queued, as a created one has.
    expect(list.items.every((a) => a.status === 'queued')).toBe(true);
    expect(t.notified).toContain('audience-versions');
    const sam = await t.request(alice, { method: 'GET', url: '/v0/persons/search?query=sam%40globex' });
    expect(sam.json().items).toHaveLength(1);

    const before = await rowCounts(alice);
    const again = await importAudiencesCsv(alice.scope, t.clock, pageId, file);
    expect(again).toMatchObject({ rows: 9, created: 0, existing: 6, failed: 3 });
    expect(await rowCounts(alice)).toEqual(before);
  });

  it('refuses a file with an unknown column before writing anything', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const before = await rowCounts(alice);
    const file = csvFile('unknown.csv', 'email,name,title\nsam@globex.example,Sam,CEO\n');
    await expect(importAudiencesCsv(alice.scope, t.clock, pageId, file)).rejects.toThrow(
      /unknown column "title" in the header \(line 1\)\. The columns are email, name, company, domain, context/,
    );
    const noIdentity = csvFile('no-identity.csv', 'name,company\nSam,Globex\n');
    await expect(importAudiencesCsv(alice.scope, t.clock, pageId, noIdentity)).rejects.toThrow(
      /neither an email nor a domain/,
    );
    // Another tenant's page is unknown.
    const good = csvFile('good.csv', 'email\nsam@globex.example\n');
    await expect(importAudiencesCsv(bob.scope, t.clock, pageId, good)).rejects.toMatchObject({ code: 'not_found' });
    expect(await rowCounts(alice)).toEqual(before);
  });

  it('an interrupted import resumes: the rows done stay done, the re-run does the rest', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const rows = Array.from({ length: 30 }, (_, i) => `lead${i}@corp${i % 3}.example,Lead ${i}`);
    const file = csvFile('leads.csv', ['email,name', ...rows].join('\n'));
    const controller = new AbortController();
    const first = await importAudiencesCsv(alice.scope, t.clock, pageId, file, {
      onProgress: () => controller.abort(), // stopped after its first chunk
      signal: controller.signal,
    });
    expect(first.interrupted).toBe(true);
    expect(first.created).toBeGreaterThan(0);
    expect(first.created).toBeLessThan(30);
    const second = await importAudiencesCsv(alice.scope, t.clock, pageId, file);
    expect(second).toMatchObject({
      interrupted: false,
      created: 30 - first.created,
      existing: first.created,
      failed: 0,
    });
    expect((await audiencesOf(alice, pageId)).totalCount).toBe(30);
  });

  it('runs as `audience-pages audience import` with one JSON summary', async () => {
    const pageId = await makePage(alice.scope, t.clock);
    const file = csvFile('cli.csv', 'email,name,context\r\nsam@globex.example,Sam,Hi\r\nbad,Bad,\r\n');
    const args = ['audience', 'import', file, '--page', pageId, '--tenant', alice.tenantId, '--json'];
    const run = await runCliProcess(args, t.database.env);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as ImportSummary;
    expect(summary).toMatchObject({ rows: 2, created: 1, failed: 1, errors: [{ line: 3, column: 'email' }] });
    const again = JSON.parse((await runCliProcess(args, t.database.env)).stdout) as ImportSummary;
    expect(again).toMatchObject({ created: 0, existing: 1, failed: 1 });
    const unknown = await runCliProcess(
      [
        'audience',
        'import',
        csvFile('bad.csv', 'email,title\n'),
        '--page',
        pageId,
        '--tenant',
        alice.tenantId,
        '--json',
      ],
      t.database.env,
    );
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout).error.message).toContain('unknown column "title"');
  }, 60_000);
});
