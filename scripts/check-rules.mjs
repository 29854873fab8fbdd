// Proves that the rules `npm run check` enforces catch what they are meant to: plants one
// violation of each in the source tree, runs the check's own step on it, expects the failure, and
// puts the tree back. `npm run check:rules`; a few seconds each (knip reads the whole project).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const eslint = (file) => ['npx', 'eslint', '--max-warnings', '0', file];

const plants = [
  {
    rule: 'routes never import queries',
    file: 'src/modules/topics/topics.planted.routes.ts',
    text: "import * as q from './topics.queries.js';\n\nexport const planted = q;\n",
    command: eslint,
    fails: /Routes call the service; SQL lives behind it/,
  },
  {
    rule: 'routes are registered only in *.routes.ts (so the rule above sees them all)',
    file: 'src/modules/topics/topics.planted.ts',
    text: [
      "import type { FastifyInstance } from 'fastify';",
      "import { findTopic } from './topics.queries.js';",
      '',
      'export function planted(app: FastifyInstance) {',
      "  app.get('/planted', async () => findTopic);",
      '}',
      '',
    ].join('\n'),
    command: eslint,
    fails: /layers\/routes-in-route-files/,
  },
  {
    rule: '(control) a Map is not a Fastify instance',
    file: 'src/modules/topics/topics.planted.ts',
    text: "const cache = new Map<string, number>();\n\nexport const planted = () => cache.get('a');\n",
    command: eslint,
    fails: null,
  },
  {
    rule: 'engine branches live in db/dialect.ts',
    file: 'src/modules/topics/topics.planted.ts',
    text: [
      "import type { TenantScope } from '../../db/tenant-scope.js';",
      '',
      "export const planted = (scope: TenantScope) => (scope.engine === 'postgres' ? 'ilike' : 'like');",
      '',
    ].join('\n'),
    command: eslint,
    fails: /layers\/engine-branches-in-dialect/,
  },
  {
    rule: 'no file outside src/modules/webhooks names a webhook table (a string)',
    file: 'src/outbox/planted.ts',
    text: "export const planted = (db: { selectFrom(t: string): unknown }) => db.selectFrom('webhook_deliveries');\n",
    command: eslint,
    fails: /layers\/no-webhook-tables/,
  },
  {
    rule: 'no file outside src/modules/webhooks names a webhook table (raw SQL)',
    file: 'src/modules/audiences/audiences.planted.ts',
    text: 'export const planted = `delete from webhook_attempts where id = $1`;\n',
    command: eslint,
    fails: /layers\/no-webhook-tables/,
  },
  {
    rule: '(control) the webhooks module names its own tables',
    file: 'src/modules/webhooks/webhooks.planted.ts',
    text: "export const planted = (db: { selectFrom(t: string): unknown }) => db.selectFrom('webhook_deliveries');\n",
    command: eslint,
    fails: null,
  },
  {
    rule: 'no notify( in routes, the app or modules: wake-ups go through scope.afterCommit',
    file: 'src/modules/topics/topics.planted.routes.ts',
    text: "export const planted = (ctx: { notify(channel: string): void }) => ctx.notify('events');\n",
    command: eslint,
    fails: /layers\/no-notify/,
  },
  {
    rule: '(control) the composition root connects wake-ups to the workers',
    file: 'src/main/planted.ts',
    text: "export const planted = (ctx: { notify(channel: string): void }) => ctx.notify('events');\n",
    command: eslint,
    fails: null,
  },
  {
    rule: 'no export that only its own file uses (knip)',
    file: 'src/lib/random.ts',
    append:
      '\nexport const PLANTED_LIMIT = 2;\n\nexport function plantedTwice(): number {\n  return PLANTED_LIMIT * 2;\n}\n',
    command: () => ['npx', 'knip'],
    fails: /PLANTED_LIMIT/,
  },
  {
    rule: 'docs/configuration.md is what src/config.ts generates',
    file: 'docs/configuration.md',
    append: '\nA hand edit.\n',
    command: () => ['npm', 'run', 'config:doc:check'],
    fails: /differs from the configuration's declarations/,
  },
];

let restore = () => {};
process.on('SIGINT', () => {
  restore();
  process.exit(130);
});

let failures = 0;
for (const plant of plants) {
  const original = fs.existsSync(plant.file) ? fs.readFileSync(plant.file, 'utf8') : null;
  restore = () => (original === null ? fs.rmSync(plant.file, { force: true }) : fs.writeFileSync(plant.file, original));
  try {
    fs.writeFileSync(plant.file, plant.append === undefined ? plant.text : original + plant.append);
    const [bin, ...args] = plant.command(plant.file);
    const run = spawnSync(bin, args, { encoding: 'utf8' });
    const output = `${run.stdout}${run.stderr}`;
    const caught = plant.fails === null ? run.status === 0 : run.status !== 0 && plant.fails.test(output);
    if (!caught) failures++;
    console.log(`${caught ? 'ok  ' : 'FAIL'} ${plant.rule}`);
    if (!caught) console.log(output.replace(/^/gm, '     '));
  } finally {
    restore();
  }
}
process.exit(failures === 0 ? 0 : 1);
