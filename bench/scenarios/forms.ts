import http from 'node:http';
import { createAudience } from '../../src/modules/audiences/audiences.service.js';
import { createPageLink } from '../../src/modules/page-links/page-links.service.js';
import { createPage } from '../../src/modules/pages/pages.service.js';
import { createTenantDomain } from '../../src/modules/tenant-domains/tenant-domains.service.js';
import type { BenchScenario } from '../lib.js';

const HOST = 'forms.bench.example';

function get(baseUrl: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(`${baseUrl}${path}`, { headers: { host: HOST } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve(text));
      })
      .on('error', reject);
  });
}

/**
 * Form submissions on a served page (docs/forms.md), as the page script sends them (JSON, a token
 * per view): each a new person with a business email, so each is the whole transaction (submission,
 * person created, person log, form.submitted). Afterwards every acknowledged submission must exist
 * exactly once, with one person log entry and one event each (nothing lost, nothing duplicated).
 * The service runs with FORM_SUBMISSIONS_PER_MINUTE=0: one load generator is one client address.
 */
export const formsScenario: BenchScenario = {
  name: 'forms',
  async run(ctx) {
    const { scope } = await ctx.createTenant('Bench forms');
    const pageId = await createPage(scope, ctx.clock, {
      name: 'Bench form page',
      title: 'Talk to us, {{company}}',
      pageContext: 'Inbound.',
      pageType: 'inbound',
      status: 'draft',
      brandId: 'brand_bench',
      actions: [
        {
          purpose: 'Talk to us about your rollout',
          buttonTitle: 'Contact sales',
          actionType: 'form',
          url: 'https://example.com/contact',
        },
      ],
      headerActionIndex: 0,
    });
    const { audienceId } = await createAudience(scope, ctx.clock, {
      pageId,
      computedName: 'Acme Corporation',
      personRouteKey: null,
      actionFormIdOverride: 'bench-form',
    });
    const domain = await createTenantDomain(scope, ctx.clock, { hostname: HOST }, { apiHostname: null });
    await createPageLink(scope, ctx.clock, {
      path: '/contact',
      tenantDomainId: domain.tenantDomainId,
      target: { targetType: 'audience', audienceId },
    });
    await new Promise((r) => setTimeout(r, 1_500)); // the service learns new host names within a second
    const html = await get(ctx.service.baseUrl, '/contact');
    const action = /name="ap_action" value="([^"]+)"/.exec(html)?.[1];
    if (action === undefined) throw new Error('no form on the bench page');

    const run = Date.now().toString(36);
    let acknowledged = 0;
    let refused = 0;
    const measurement = await ctx.load({
      name: 'POST form submission (new person, business email)',
      path: '/contact',
      method: 'POST',
      headers: { host: HOST, accept: 'application/json' },
      body: (n: number) => ({
        email: `lead-${run}-${n}@company-${n % 997}.example`,
        name: `Lead ${n}`,
        company: `Company ${n % 997}`,
        message: 'We would like a demo.',
        ap_audience: audienceId,
        ap_action: action,
        ap_token: `bench-${run}-${n}`,
      }),
      onResponse: (_n, status) => {
        if (status === 201) acknowledged += 1;
        else refused += 1;
      },
      noCeiling: true,
    });
    await new Promise((r) => setTimeout(r, 500)); // requests still in flight at the end settle

    const count = async (table: 'form_submissions' | 'person_logs' | 'persons') =>
      Number(
        (
          await scope
            .selectFrom(table)
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const submissions = await count('form_submissions');
    const logs = await count('person_logs');
    const persons = await count('persons');
    const events = Number(
      (
        await scope
          .selectFrom('events')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('type', '=', 'form.submitted')
          .executeTakeFirstOrThrow()
      ).n,
    );
    // A request cut off by the end of the run may have committed without its answer being counted.
    const exact =
      submissions >= acknowledged &&
      submissions <= acknowledged + 50 &&
      logs === submissions &&
      persons === submissions &&
      events === submissions &&
      refused === 0;
    Object.assign(measurement.extra ?? (measurement.extra = {}), {
      acknowledged,
      refused,
      submissions,
      personLogs: logs,
      persons,
      formSubmittedEvents: events,
      nothingLostOrDuplicated: exact,
    });
    console.log(
      `  checked: ${acknowledged} acknowledged, ${refused} refused; rows: ${submissions} submissions, ${logs} person logs, ${persons} persons, ${events} form.submitted: exact ${exact}`,
    );
    if (!exact) throw new Error('form submission counts are not exact');
  },
};
