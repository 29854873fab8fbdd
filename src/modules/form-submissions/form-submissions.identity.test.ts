import { beforeAll, describe, expect, it } from 'vitest';
import { makeAudience } from '../../../test/factories/audiences.js';
import { enrichmentRunner } from '../../../test/factories/enrichment.js';
import { makePage } from '../../../test/factories/pages.js';
import { linkOnHost, visit } from '../../../test/factories/site.js';
import { useTestApp } from '../../../test/harness.js';

/**
 * Visitors cannot rewrite records (issue 26, docs/forms.md#identity): what a form says about who
 * sent it is recorded as submitted, unverified data; it never fills or changes an existing
 * person's email, phone or domain, and makes accounts only where the tenant opted in.
 */
const t = useTestApp({ tenants: ['Alice'] });
const [alice] = t.tenants;
const HOST = 'go.identity.localhost';
let ip = 0;

async function submit(fields: Record<string, string>) {
  const page = await visit(t, HOST, '/offers');
  const hidden = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body)?.[1] ?? '';
  const res = await t.app.inject({
    method: 'POST',
    url: '/offers',
    remoteAddress: `10.7.0.${++ip}`,
    headers: {
      host: HOST,
      'content-type': 'application/json',
      'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
    },
    payload: { ap_audience: hidden('ap_audience'), ap_action: hidden('ap_action'), ...fields },
  });
  expect(res.statusCode).toBe(201);
  return alice.scope
    .selectFrom('form_submissions')
    .selectAll()
    .where('id', '=', res.json().formSubmissionId)
    .executeTakeFirstOrThrow();
}

const person = (id: string) =>
  alice.scope.selectFrom('persons').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const createPerson = async (body: Record<string, string>) => {
  const res = await t.request(alice, {
    method: 'POST',
    url: '/v0/person_logs',
    payload: { source: 'crm', type: 'import', payload: {}, ...body },
  });
  expect(res.statusCode).toBe(201);
  return res.json().personId as string;
};

beforeAll(async () => {
  const pageId = await makePage(alice.scope, t.clock, {
    title: 'Offers',
    actions: [{ purpose: 'Talk to us', buttonTitle: 'Send', actionType: 'form', url: 'https://example.com/contact' }],
  });
  const { audienceId } = await makeAudience(alice.scope, t.clock, {
    pageId,
    computedName: 'All',
    personRouteKey: null,
  });
  await linkOnHost(t, alice, { hostname: HOST, path: '/offers', audienceId });
});

describe('identities a form submits', () => {
  it('an existing person’s email with a new phone: the entry goes to that person, the phone is not theirs', async () => {
    const jane = await createPerson({ email: 'jane@acme.example', name: 'Jane Doe' });
    const row = await submit({ email: 'Jane@Acme.example', name: 'Mallory', phoneNumber: '+14155550100' });
    expect(row).toMatchObject({ person_id: jane, phone_number: '+14155550100', name: 'Mallory' });
    expect(await person(jane)).toMatchObject({ phone_number: null, name: 'Jane Doe', email: 'jane@acme.example' });
    const [log] = await alice.scope
      .selectFrom('person_logs')
      .selectAll()
      .where('person_id', '=', jane)
      .where('type', '=', 'form-submitted')
      .execute();
    expect(log!.payload).toMatchObject({ phoneNumber: '+14155550100', identityVerified: false });
  });

  it('an existing person’s phone with a new email: a new person, the phone’s owner untouched', async () => {
    const kim = await createPerson({ email: 'kim@initech.example', phoneNumber: '+14155550111' });
    const row = await submit({ email: 'attacker@evil.example', phoneNumber: '+14155550111' });
    expect(row.person_id).not.toBe(kim);
    expect(await person(kim)).toMatchObject({ email: 'kim@initech.example', phone_number: '+14155550111' });
    expect(await person(row.person_id)).toMatchObject({ email: 'attacker@evil.example', phone_number: null });
  });

  it('enrichment never fills an existing person’s domain; it fills the person the submission created', async () => {
    const lee = await createPerson({ email: 'lee@globex.example', name: 'Lee' });
    await alice.scope.updateTable('persons').set({ domain: null }).where('id', '=', lee).execute();
    await submit({ email: 'lee@globex.example' });
    const fresh = await submit({ email: 'new.person@hooli.example' });
    await enrichmentRunner(t.database, t.clock, { createsAccounts: false }).drain();
    expect((await person(lee)).domain).toBeNull();
    expect((await person(fresh.person_id)).domain).toBe('hooli.example');
  });
});

describe('accounts from a form’s email domain (FORM_CREATES_ACCOUNTS)', () => {
  const accountOf = (domain: string) =>
    alice.scope.selectFrom('accounts').selectAll().where('domain', '=', domain).executeTakeFirst();

  it('off (the default): no account, no activity, and form.enriched shows none', async () => {
    const row = await submit({ email: 'someone@umbrella.example' });
    await enrichmentRunner(t.database, t.clock, { createsAccounts: false }).drain();
    expect(await accountOf('umbrella.example')).toBeUndefined();
    const events = await alice.scope.selectFrom('events').selectAll().where('type', '=', 'form.enriched').execute();
    const event = events.find((e) => (e.data as { formSubmissionId: string }).formSubmissionId === row.id);
    expect(event!.data).toMatchObject({ account: null, enrichment: { fieldsFilled: ['person.domain'] } });
    expect(t.app.ctx.config.formCreatesAccounts).toBe(false);
  });

  it('on: the email domain’s account is created', async () => {
    await submit({ email: 'someone@wayne.example' });
    await enrichmentRunner(t.database, t.clock, { createsAccounts: true }).drain();
    expect(await accountOf('wayne.example')).toMatchObject({ domain: 'wayne.example' });
  });

  it('off: an account the tenant has is shown in form.enriched, its name not filled', async () => {
    const created = await t.request(alice, {
      method: 'POST',
      url: '/v0/accounts',
      payload: { domain: 'stark.example' },
    });
    expect(created.statusCode).toBe(201);
    const row = await submit({ email: 'tony@stark.example', company: 'Stark Industries' });
    await enrichmentRunner(t.database, t.clock, { createsAccounts: false }).drain();
    expect(await accountOf('stark.example')).toMatchObject({ name: null });
    const events = await alice.scope.selectFrom('events').selectAll().where('type', '=', 'form.enriched').execute();
    const event = events.find((e) => (e.data as { formSubmissionId: string }).formSubmissionId === row.id);
    expect(event!.data).toMatchObject({ account: { accountId: created.json().accountId } });
  });
});
