import type { AddressInfo } from 'node:net';
import { demoCommand } from '../../src/modules/demo.js';
import { pageHostsFor } from '../../src/modules/tenant-domains/tenant-domains.hosts.js';
import type { TestApp } from '../harness.js';

/** What the browser tests use of `npx audience-pages demo`'s output, for the test app's port. */
export type DemoTenant = {
  apiKey: string;
  /** The demo's page links, on the port the test app listens on. */
  pageUrls: string[];
  /** The console's one-time sign-in link, on the test app's origin (`http://127.0.0.1:<port>`). */
  signInUrl: string;
};

/**
 * Runs the demo on the test app's database, as the CLI would beside a running server, and then
 * has the app read the demo's domains at once: a server learns of domains written by another
 * process within a second (`PageHosts`), and a browser opening a page link sooner would get 404.
 */
export async function runDemo(t: TestApp, name = 'Northwind Demo'): Promise<DemoTenant> {
  const port = (t.app.server.address() as AddressInfo).port;
  const demo = (await demoCommand.run(
    { database: t.database, db: t.database.kysely, config: t.app.ctx.config, clock: t.clock, migrations: {} },
    { values: { name }, positionals: [] },
  )) as { apiKey: string; pageLinks: { pageUrls: string[] }; console: { signInUrl: string } };
  await pageHostsFor(t.app.ctx).refresh();
  return {
    apiKey: demo.apiKey,
    // the demo prints links for the configured port; the test app listens elsewhere
    pageUrls: demo.pageLinks.pageUrls.map((u) => u.replace(/:\d+\//, `:${port}/`)),
    signInUrl: demo.console.signInUrl.replace(/^http:\/\/localhost:\d+/, `http://127.0.0.1:${port}`),
  };
}
