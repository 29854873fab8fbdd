import { describe, expect, it } from 'vitest';
import { problem, startTestApp, useTestApp, type Tenant } from '../../../test/harness.js';
import { TEST_SECRET_KEY, testSecretBox } from '../../../test/factories/webhooks.js';

const t = useTestApp({ config: { WEBHOOK_SECRET_KEY: TEST_SECRET_KEY }, tenants: ['Alice'] });
const [alice] = t.tenants;

const create = (tenant: Tenant | null, body: unknown) =>
  t.request(tenant, { method: 'POST', url: '/v0/webhook_subscriptions', payload: body as object });

const countSubscriptions = async () =>
  Number(
    (
      await t.database.kysely
        .selectFrom('webhook_subscriptions')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('POST /v0/webhook_subscriptions', () => {
  it('creates an active subscription and shows the signing secret once', async () => {
    const res = await create(alice, {
      url: 'https://hooks.example.com/audience-pages',
      events: ['page.version.published', 'page.version.created'],
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      subscriptionId: expect.stringMatching(/^whsub_[0-9a-z]{26}$/),
      url: 'https://hooks.example.com/audience-pages',
      events: ['page.version.published', 'page.version.created'],
      active: true,
      deactivatedReason: null,
      previousSecretExpiresAt: null,
      createdAt: t.clock.now().toISOString(),
      updatedAt: t.clock.now().toISOString(),
      signingSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(body.signingSecret.slice(6), 'base64')).toHaveLength(32);

    // Stored sealed (AES-256-GCM), never in clear; the sealed value opens to the secret.
    const row = await t.database.kysely
      .selectFrom('webhook_subscriptions')
      .selectAll()
      .where('id', '=', body.subscriptionId)
      .executeTakeFirstOrThrow();
    expect(row.secret).not.toContain(body.signingSecret.slice(6));
    expect(row.secret).toMatch(/^v2\.[0-9a-f]{8}\./);
    expect(testSecretBox.open(row.secret, body.subscriptionId)).toBe(body.signingSecret);
    expect(row.tenant_id).toBe(alice.tenantId);
  });

  it('makes a different secret for every subscription', async () => {
    const a = (await create(alice, { url: 'https://a.example.com/', events: ['form.submitted'] })).json();
    const b = (await create(alice, { url: 'https://a.example.com/', events: ['form.submitted'] })).json();
    expect(a.signingSecret).not.toBe(b.signingSecret);
  });

  it('accepts active: false and collapses duplicate event names', async () => {
    const res = await create(alice, {
      url: 'http://8.8.8.8:80/hook?x=1',
      events: ['form.enriched', 'form.submitted', 'form.enriched'],
      active: false,
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ events: ['form.enriched', 'form.submitted'], active: false });
  });

  const bad: [string, unknown, string, string][] = [
    ['a URL that is not a URL', { url: 'not a url', events: ['form.submitted'] }, '/body/url', 'format'],
    ['an ftp URL', { url: 'ftp://example.com/hook', events: ['form.submitted'] }, '/body/url', 'http or https'],
    ['credentials', { url: 'http://user:pw@example.com/', events: ['form.submitted'] }, '/body/url', 'credentials'],
    ['a loopback address', { url: 'http://127.0.0.1/', events: ['form.submitted'] }, '/body/url', 'non-public'],
    ['a decimal loopback', { url: 'http://2130706433/', events: ['form.submitted'] }, '/body/url', 'non-public'],
    ['the metadata address', { url: 'http://169.254.169.254/', events: ['form.submitted'] }, '/body/url', 'non-public'],
    ['an SMTP port', { url: 'http://example.com:25/', events: ['form.submitted'] }, '/body/url', 'port 80 or 443'],
    ['port 8443 (not listed)', { url: 'https://example.com:8443/', events: ['form.submitted'] }, '/body/url', 'port'],
    ['an unknown event', { url: 'https://example.com/', events: ['page.version.deleted'] }, '/body/events/0', ''],
    ['no events', { url: 'https://example.com/', events: [] }, '/body/events', 'fewer than 1'],
    ['events missing', { url: 'https://example.com/' }, '/body/events', 'required'],
    ['url missing', { events: ['form.submitted'] }, '/body/url', 'required'],
    [
      'active "yes"',
      { url: 'https://example.com/', events: ['form.submitted'], active: 'yes' },
      '/body/active',
      'boolean',
    ],
    ['an unknown field', { url: 'https://example.com/', events: ['form.submitted'], secret: 'x' }, '/body/secret', ''],
    [
      'a URL over 2048',
      { url: `https://example.com/${'a'.repeat(2040)}`, events: ['form.submitted'] },
      '/body/url',
      '',
    ],
  ];
  it.each(bad)('refuses %s with 422 and stores nothing', async (_name, body, path, message) => {
    const before = await countSubscriptions();
    const res = await create(alice, body);
    expect(res.statusCode).toBe(422);
    const p = problem(res);
    expect(p.code).toBe('validation_failed');
    const error = p.errors.find((e) => e.path === path);
    expect(error, JSON.stringify(p.errors)).toBeDefined();
    expect(error!.message).toContain(message);
    expect(await countSubscriptions()).toBe(before);
    expect(res.body).not.toContain('whsec_');
  });

  it('needs an API key', async () => {
    const res = await create(null, { url: 'https://example.com/', events: ['form.submitted'] });
    expect(res.statusCode).toBe(401);
  });
});

describe('WEBHOOK_ALLOW_PRIVATE_NETWORKS=true', () => {
  it('accepts loopback URLs (development only)', async () => {
    const dev = await startTestApp({
      config: {
        WEBHOOK_SECRET_KEY: TEST_SECRET_KEY,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_ALLOWED_PORTS: '9000',
      },
    });
    try {
      const tenant = await dev.createTenant();
      const res = await dev.request(tenant, {
        method: 'POST',
        url: '/v0/webhook_subscriptions',
        payload: { url: 'http://127.0.0.1:9000/hook', events: ['form.submitted'] },
      });
      expect(res.statusCode).toBe(201);
      const ftp = await dev.request(tenant, {
        method: 'POST',
        url: '/v0/webhook_subscriptions',
        payload: { url: 'ftp://127.0.0.1/', events: ['form.submitted'] },
      });
      expect(ftp.statusCode).toBe(422);
      // The port rule still holds: 80, 443 and WEBHOOK_ALLOWED_PORTS only.
      const otherPort = await dev.request(tenant, {
        method: 'POST',
        url: '/v0/webhook_subscriptions',
        payload: { url: 'http://127.0.0.1:6379/hook', events: ['form.submitted'] },
      });
      expect(otherPort.statusCode).toBe(422);
      expect(problem(otherPort).errors).toEqual([{ path: '/body/url', message: expect.stringContaining('port') }]);
    } finally {
      await dev.close();
    }
  });
});
