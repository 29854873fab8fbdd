import type { AddressPolicy } from '../../net/address-policy.js';
import { SafeHttpClient, type AttemptOutcome, type Resolver } from '../../net/http-client.js';
import type { Enricher, EnricherOutcome, EnrichmentFindings, EnrichmentInput } from './enrichment.enricher.js';

/** The largest provider answer read; a longer one is unusable (the connection is dropped). */
export const PROVIDER_RESPONSE_MAX_BYTES = 64 * 1024;
/** Names longer than this (persons' and accounts' limit) are not taken from a provider. */
const MAX_NAME = 255;

export interface HttpEnricherOptions {
  url: string;
  token: string | null;
  timeoutMs: number;
  /** The webhooks' SSRF policy (WEBHOOK_ALLOW_PRIVATE_NETWORKS): tests call a loopback alias public. */
  policy: AddressPolicy;
  resolver?: Resolver;
  /** Production: an `http:` URL is refused at start (config) and at every request. */
  httpsOnly?: boolean;
}

/**
 * The `http` enricher (ENRICHMENT_URL): POSTs `{ email, domain, name, company }` as JSON to a
 * provider in the style of Clearbit or Apollo and reads `{ person: { name }, company: { name } }`
 * back (either part may be missing or null). Requests go through the webhooks' SSRF-safe client:
 * the provider's address must pass the same policy, redirects are not followed, the answer is
 * capped. One call is one attempt; the job schedules the retries (enrichment.jobs.ts).
 */
export function httpEnricher(options: HttpEnricherOptions): Enricher {
  const client = new SafeHttpClient({
    policy: options.policy,
    // ENRICHMENT_URL is the operator's configuration, not a tenant's: any port it names is meant.
    ports: () => true,
    httpsOnly: options.httpsOnly,
    resolver: options.resolver,
    timeoutMs: options.timeoutMs,
    maxResponseBytes: PROVIDER_RESPONSE_MAX_BYTES,
    userAgent: 'audience-pages-enrichment/1',
  });
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.token !== null) headers.authorization = `Bearer ${options.token}`;
  return {
    name: 'http',
    async enrich(input: EnrichmentInput) {
      const body = JSON.stringify({
        email: input.email,
        domain: input.domain,
        name: input.name,
        company: input.company,
      });
      return interpret(await client.post(options.url, headers, body));
    },
    close: () => client.close(),
  };
}

const THROTTLING = new Set([408, 425, 429, 500, 502, 503, 504]);

/** Turns one HTTP attempt into an enricher outcome (docs/forms.md lists the cases). */
function interpret(outcome: AttemptOutcome): EnricherOutcome {
  const status = outcome.statusCode;
  const retryAfterMs = (outcome.retryAfterSeconds ?? 0) * 1000;
  if (status === null) {
    // A URL the policy refuses, or one that is not http(s), will not get better by waiting.
    const final = outcome.error !== null && /^(blocked_address|invalid URL|unsupported scheme)/.test(outcome.error);
    return unavailable(outcome.error ?? 'no answer', final ? null : 0);
  }
  if (THROTTLING.has(status) || status >= 500) return unavailable(`HTTP ${status}`, retryAfterMs);
  if (status >= 400) return { ok: false, reason: 'provider_rejected', retry: null, detail: `HTTP ${status}` };
  if (status < 200 || status >= 300) return unavailable(`HTTP ${status} (redirects are not followed)`, null);
  if (outcome.bodyTruncated) return unavailable(`answer over ${PROVIDER_RESPONSE_MAX_BYTES} bytes`, null);
  if (status === 204 || (outcome.body ?? '').trim() === '') {
    return { ok: true, findings: { personName: null, companyName: null } };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(outcome.body!);
  } catch {
    return unavailable('answer is not JSON', null);
  }
  const findings = readFindings(parsed);
  return findings === null ? unavailable('answer is not { person, company }', null) : { ok: true, findings };
}

function unavailable(detail: string, retryAfterMs: number | null): EnricherOutcome {
  return {
    ok: false,
    reason: 'provider_unavailable',
    retry: retryAfterMs === null ? null : { afterMs: retryAfterMs },
    detail,
  };
}

/** `{ person?: { name? }, company?: { name? } }`; null when the shape is something else. */
function readFindings(value: unknown): EnrichmentFindings | null {
  if (!isObject(value)) return null;
  const personName = nameIn(value.person);
  const companyName = nameIn(value.company);
  if (personName === undefined || companyName === undefined) return null;
  return { personName, companyName };
}

/** The usable `name` of a part: null when absent or empty, undefined when malformed. */
function nameIn(part: unknown): string | null | undefined {
  if (part === undefined || part === null) return null;
  if (!isObject(part)) return undefined;
  const name = part.name;
  if (name === undefined || name === null) return null;
  if (typeof name !== 'string') return undefined;
  const trimmed = name.trim();
  return trimmed.length === 0 || trimmed.length > MAX_NAME ? null : trimmed;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
