import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * The rules of eslint.local-rules.js fail `npm run check` on a planted violation: each source is
 * linted as if it were the file named, with the project's own configuration.
 */
const eslint = new ESLint();
async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => m.ruleId ?? m.message);
}

describe('webhook tables are named in src/modules/webhooks only', () => {
  const query = `export const q = (db: { selectFrom(t: string): unknown }) => db.selectFrom('webhook_deliveries');\n`;
  const raw = 'export const text = `delete from webhook_attempts where id = $1`;\n';

  it('fails plumbing, another module or the composition root naming one, in a string or a template', async () => {
    for (const file of ['src/outbox/planted.ts', 'src/modules/audiences/planted.ts', 'src/main/planted.ts']) {
      expect(await problems(file, query)).toEqual(['aps/no-webhook-tables']);
      expect(await problems(file, raw)).toEqual(['aps/no-webhook-tables']);
    }
  });

  it('passes the webhooks module, the table types and the migrations', async () => {
    for (const file of ['src/modules/webhooks/planted.ts', 'src/db/schema.ts', 'src/db/migrations/9999-planted.ts']) {
      expect(await problems(file, query)).toEqual([]);
    }
  });
});

describe('nobody calls notify: wake-ups are registered with scope.afterCommit', () => {
  const route = [
    `export function routes(app: { post(path: string, h: () => void): void }, notify: (c: string) => void) {`,
    `  app.post('/things', () => notify('things'));`,
    `}`,
  ].join('\n');
  const method = `export const wake = (ctx: { notify(c: string): void }) => ctx.notify('events');\n`;

  it('fails a file that registers routes, a visitor handler, a worker, and the app', async () => {
    for (const file of [
      'src/modules/pages/pages.routes.ts',
      'src/modules/files/files.public.ts',
      'src/modules/site/site.forms.ts',
      'src/modules/enrichment/enrichment.worker.ts',
      'src/app.ts',
    ]) {
      expect(await problems(file, route)).toEqual(['aps/no-notify']);
      expect(await problems(file, method)).toEqual(['aps/no-notify']);
    }
  });

  it('passes the composition root that connects the wake-ups to the workers', async () => {
    expect(await problems('src/main/planted.ts', method)).toEqual([]);
  });
});
