import { parseConfig } from '../../src/config.js';
import { systemClock } from '../../src/lib/clock.js';
import { signIn } from '../../src/modules/console/console.auth.service.js';
import { demoCommand } from '../../src/modules/demo.js';
import { measured, startService, type BenchContext, type BenchScenario } from '../lib.js';
import { runLoad } from '../load.js';

/**
 * The console (issue 28: "every screen's HTML under 100 ms server time with the demo data set"):
 * the demo's tenant, signed in as its console user, and each screen requested over one
 * connection, one request at a time (so the latency is the server's time plus loopback), for a
 * few seconds each: p50 and p99 per screen.
 */
async function run(ctx: BenchContext) {
  const { database, env, drop } = await ctx.freshDatabase('console');
  const demo = (await demoCommand.run(
    { database, db: database.kysely, config: parseConfig(env), clock: systemClock, migrations: {} },
    { values: { name: 'Console bench' }, positionals: [] },
  )) as { tenantId: string; console: { signInUrl: string } };
  const token = new URL(demo.console.signInUrl).searchParams.get('token')!;
  const session = await signIn(database, systemClock, token);
  const tenantId = session.tenantId;
  const first = async <T>(query: Promise<T | undefined>) => {
    const row = await query;
    if (row === undefined) throw new Error('the demo data set lacks a row the bench needs');
    return row;
  };
  const page = await first(
    database.kysely
      .selectFrom('pages')
      .select('id')
      .where('tenant_id', '=', tenantId)
      .where('status', '=', 'published')
      .orderBy('created_at')
      .executeTakeFirst(),
  );
  const audience = await first(
    database.kysely.selectFrom('audiences').select('id').where('page_id', '=', page.id).executeTakeFirst(),
  );
  const person = await first(
    database.kysely.selectFrom('persons').select('id').where('tenant_id', '=', tenantId).executeTakeFirst(),
  );
  const account = await first(
    database.kysely.selectFrom('accounts').select('id').where('tenant_id', '=', tenantId).executeTakeFirst(),
  );
  const subscription = await database.kysely
    .selectFrom('webhook_subscriptions')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  const screens: [string, string][] = [
    ['pages', '/console/pages'],
    ['new page', '/console/pages/new'],
    ['a page', `/console/pages/${page.id}`],
    ['an audience', `/console/pages/${page.id}/audiences/${audience.id}`],
    ['analytics (30 days)', `/console/pages/${page.id}/analytics`],
    ['import', `/console/pages/${page.id}/import`],
    ['people', '/console/people'],
    ['a person', `/console/people/${person.id}`],
    ['accounts', '/console/accounts'],
    ['an account', `/console/accounts/${account.id}`],
    ['settings', '/console/settings'],
    ...(subscription ? [['a webhook', `/console/settings/webhooks/${subscription.id}`] as [string, string]] : []),
    ['users', '/console/users'],
  ];
  const service = await startService(env);
  try {
    for (const [name, path] of screens) {
      const result = await runLoad({
        baseUrl: service.baseUrl,
        headers: { cookie: `ap-console=${session.token}`, accept: 'text/html' },
        requests: [{ method: 'GET', path }],
        connections: 1,
        durationSeconds: ctx.quick ? 1 : 3,
      });
      ctx.record(measured('console', `GET ${name} (one at a time)`, result, { goal: 'under 100 ms' }));
    }
  } finally {
    await service.stop();
    await drop();
  }
}

export const consoleScenario: BenchScenario = { name: 'console', run };
