import { afterEach, describe, expect, it } from 'vitest';
import { enrichmentEvents, enrichmentRunner, jobOf, submitForEnrichment } from '../../../test/factories/enrichment.js';
import { CANARY, PUBLIC_ALIAS, startReceiver, testPolicy, type Receiver } from '../../../test/factories/webhooks.js';
import { useTestApp } from '../../../test/harness.js';
import { isGlobalUnicast } from '../../net/address-policy.js';
import type { Enricher } from './enrichment.enricher.js';
import { httpEnricher, PROVIDER_RESPONSE_MAX_BYTES } from './enrichment.http-enricher.js';
import { retryDelayMs } from '../../workers/leased-jobs.js';

const t = useTestApp({ tenants: ['Alice'] });
const [alice] = t.tenants;

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const x of open.splice(0)) await x.close();
});

type Respond = Parameters<typeof startReceiver>[1];

/** A provider on the loopback alias the test policy calls public, and the enricher pointed at it. */
async function provider(
  respond: Respond,
  options: { timeoutMs?: number; policy?: (ip: string) => boolean; host?: string } = {},
) {
  const receiver: Receiver = await startReceiver(options.host ?? PUBLIC_ALIAS, respond);
  open.push(receiver);
  const enricher: Enricher = httpEnricher({
    url: receiver.url,
    token: 'provider-token',
    timeoutMs: options.timeoutMs ?? 2_000,
    policy: options.policy ?? testPolicy,
  });
  open.push({ close: () => enricher.close?.() });
  return {
    receiver,
    jobs: enrichmentRunner(t.database, t.clock, { enricher, settings: { leaseMs: 10_000 } }),
    limitedTo: (maxAttempts: number) =>
      enrichmentRunner(t.database, t.clock, { enricher, settings: { leaseMs: 10_000, maxAttempts } }),
  };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});
const found = json(200, { person: { name: 'Jane Provider' }, company: { name: 'Provider Corp' } });

async function failureOf(formSubmissionId: string) {
  const events = await enrichmentEvents(t.database, formSubmissionId);
  expect(events.map((e) => e.type)).toEqual(['form.enrichment_failed']);
  return (events[0]!.data as { failure: unknown }).failure;
}

describe('the http enricher', () => {
  it('posts { email, domain, name, company } with the bearer token and merges what it learns', async () => {
    const { receiver, jobs } = await provider(() => found);
    const { personId, formSubmissionId } = await submitForEnrichment(alice, t.clock, 'jane@provider-corp.example', {
      name: null,
      company: 'Typed Company',
    });
    expect(await jobs.drain()).toEqual([{ key: formSubmissionId, outcome: 'completed' }]);

    expect(receiver.requests).toHaveLength(1);
    const request = receiver.requests[0]!;
    expect(request.headers.authorization).toBe('Bearer provider-token');
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({
      email: 'jane@provider-corp.example',
      domain: 'provider-corp.example',
      name: null,
      company: 'Typed Company',
    });
    const [event] = await enrichmentEvents(t.database, formSubmissionId);
    expect(event!.data).toMatchObject({
      person: { personId, name: 'Jane Provider', domain: 'provider-corp.example' },
      account: { domain: 'provider-corp.example', name: 'Provider Corp' },
      enrichment: { provider: 'http', fieldsFilled: ['account', 'account.name', 'person.domain', 'person.name'] },
    });
  });

  it('never replaces a name someone gave', async () => {
    const { jobs } = await provider(() => found);
    const { personId, formSubmissionId } = await submitForEnrichment(alice, t.clock, 'kim@named-corp.example');
    await alice.scope.updateTable('persons').set({ name: 'Kim Given' }).where('id', '=', personId).execute();
    await jobs.drain();
    const [event] = await enrichmentEvents(t.database, formSubmissionId);
    expect(event!.data).toMatchObject({
      person: { name: 'Kim Given' },
      enrichment: { fieldsFilled: ['account', 'account.name', 'person.domain'] },
    });
  });

  it('a 500 then a success: retried after the schedule’s first delay, one event', async () => {
    const { receiver, jobs } = await provider((_req, i) => (i === 0 ? { status: 500 } : found));
    const { formSubmissionId } = await submitForEnrichment(alice, t.clock, 'ann@retry-corp.example');
    expect(await jobs.drain()).toEqual([{ key: formSubmissionId, outcome: 'retried' }]);
    const job = await jobOf(t.database, formSubmissionId);
    expect(job).toMatchObject({ status: 'queued', attempts: 1, last_error: 'HTTP 500' });
    expect(Date.parse(job.available_at) - t.clock.now().getTime()).toBe(retryDelayMs(1));

    t.clock.advance(retryDelayMs(1));
    expect(await jobs.drain()).toEqual([{ key: formSubmissionId, outcome: 'completed' }]);
    expect(receiver.requests).toHaveLength(2);
    expect(await enrichmentEvents(t.database, formSubmissionId)).toHaveLength(1);
    expect(await jobOf(t.database, formSubmissionId)).toMatchObject({ status: 'enriched', attempts: 2 });
  });

  it('a 429 with Retry-After waits as long as the provider asks', async () => {
    const { receiver, jobs } = await provider((_req, i) => (i === 0 ? json(429, {}, { 'retry-after': '120' }) : found));
    const { formSubmissionId } = await submitForEnrichment(alice, t.clock, 'bo@throttled-corp.example');
    await jobs.drain();
    const job = await jobOf(t.database, formSubmissionId);
    expect(Date.parse(job.available_at) - t.clock.now().getTime()).toBe(120_000);

    t.clock.advance(119_000);
    expect(await jobs.runDue(1)).toEqual([]);
    t.clock.advance(1_000);
    expect(await jobs.drain()).toEqual([{ key: formSubmissionId, outcome: 'completed' }]);
    expect(receiver.requests).toHaveLength(2);
  });

  it('a provider that never answers: retried, then failed provider_unavailable with the attempt count', async () => {
    const { receiver, limitedTo } = await provider(() => 'hang', { timeoutMs: 150 });
    const limited = limitedTo(2);
    const { formSubmissionId } = await submitForEnrichment(alice, t.clock, 'cy@slow-provider.example');
    expect(await limited.drain()).toEqual([{ key: formSubmissionId, outcome: 'retried' }]);
    expect((await jobOf(t.database, formSubmissionId)).last_error).toBe('timeout');
    t.clock.advance(retryDelayMs(1));
    expect(await limited.drain()).toEqual([{ key: formSubmissionId, outcome: 'failed' }]);
    expect(receiver.requests).toHaveLength(2);
    expect(await failureOf(formSubmissionId)).toEqual({
      reason: 'provider_unavailable',
      attempts: 2,
      provider: 'http',
    });
  });

  it('a 4xx fails at once with provider_rejected', async () => {
    const { receiver, jobs } = await provider(() => json(422, { error: 'unknown email' }));
    const { formSubmissionId } = await submitForEnrichment(alice, t.clock, 'di@rejected-corp.example');
    await jobs.drain();
    expect(receiver.requests).toHaveLength(1);
    expect(await failureOf(formSubmissionId)).toEqual({ reason: 'provider_rejected', attempts: 1, provider: 'http' });
  });

  it.each([
    [
      'a huge answer',
      () => ({ status: 200, body: `{"person":{"name":"${'x'.repeat(PROVIDER_RESPONSE_MAX_BYTES)}"}}` }),
    ],
    ['a non-JSON answer', () => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html>oops</html>' })],
    ['JSON of another shape', () => json(200, { person: { name: 42 } })],
    ['a redirect', () => ({ status: 302, headers: { location: 'http://127.0.0.1/' } })],
  ])('%s fails at once with provider_unavailable', async (_name, respond) => {
    const { receiver, jobs } = await provider(respond as Respond);
    const { formSubmissionId } = await submitForEnrichment(alice, t.clock, `ed${Math.random()}@unusable.example`);
    await jobs.drain();
    expect(receiver.requests).toHaveLength(1);
    expect(await failureOf(formSubmissionId)).toEqual({
      reason: 'provider_unavailable',
      attempts: 1,
      provider: 'http',
    });
  });

  it('a provider URL on a private address is refused: nothing is sent, the job fails', async () => {
    // The canary is a loopback address the test policy keeps blocked; the service's own policy
    // (WEBHOOK_ALLOW_PRIVATE_NETWORKS unset) refuses every loopback address.
    for (const policy of [testPolicy, isGlobalUnicast]) {
      const { receiver, jobs } = await provider(() => found, { host: CANARY, policy });
      const { formSubmissionId } = await submitForEnrichment(alice, t.clock, `fay${Math.random()}@private.example`);
      await jobs.drain();
      expect(receiver.requests).toHaveLength(0);
      expect(await failureOf(formSubmissionId)).toEqual({
        reason: 'provider_unavailable',
        attempts: 1,
        provider: 'http',
      });
      expect((await jobOf(t.database, formSubmissionId)).last_error).toMatch(/^blocked_address/);
    }
  });

  it('free-mail addresses never reach the provider', async () => {
    const { receiver, jobs } = await provider(() => found);
    const { formSubmissionId } = await submitForEnrichment(alice, t.clock, 'gil@gmail.com');
    await jobs.drain();
    expect(receiver.requests).toHaveLength(0);
    expect(await failureOf(formSubmissionId)).toEqual({ reason: 'free_mail_domain', attempts: 1, provider: 'domain' });
  });
});
