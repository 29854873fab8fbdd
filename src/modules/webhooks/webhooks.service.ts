import { json } from '../../db/json.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import { validationFailed } from '../../http/errors.js';
import { isoNow, type Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { webhookUrlProblem, type AddressPolicy, type PortRule } from '../../net/address-policy.js';
import type { SecretBox } from '../../outbox/secret-box.js';
import { newSigningSecret } from '../../outbox/signing.js';
import * as q from './webhooks.queries.js';
import type {
  WebhookSubscription,
  WebhookSubscriptionCreateBody,
  WebhookSubscriptionCreated,
} from './webhooks.schemas.js';

export interface WebhookDeps {
  secretBox: SecretBox;
  /** The creation-time address check (WEBHOOK_ALLOW_PRIVATE_NETWORKS lifts it). */
  policy: AddressPolicy;
  /** The ports a URL may name (80, 443 and WEBHOOK_ALLOWED_PORTS). */
  ports: PortRule;
}

export type SubscriptionRow = Awaited<ReturnType<typeof q.listSubscriptions>>[number];

export function toSubscription(row: SubscriptionRow): WebhookSubscription {
  return {
    subscriptionId: row.id,
    url: row.url,
    events: row.events as WebhookSubscription['events'],
    active: row.active,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Endpoint 21. The URL must be http(s), without credentials, and not an IP literal in a blocked
 * range (422 at /body/url); the same rule is enforced again on every connection. Duplicate event
 * names are collapsed (first occurrence kept). The secret is returned here once and stored sealed.
 */
export async function createSubscription(
  scope: TenantScope,
  clock: Clock,
  deps: WebhookDeps,
  body: WebhookSubscriptionCreateBody,
): Promise<WebhookSubscriptionCreated> {
  const problem = webhookUrlProblem(body.url, deps.policy, deps.ports);
  if (problem !== null) throw validationFailed('/body/url', problem);
  const events = [...new Set(body.events)];
  const signingSecret = newSigningSecret();
  const now = isoNow(clock);
  const id = newId('webhookSubscription');
  const active = body.active ?? true;
  await q.insertSubscription(scope, {
    id,
    url: body.url,
    events: json(events),
    active,
    secret: deps.secretBox.seal(signingSecret, id),
    previous_secret: null,
    previous_secret_expires_at: null,
    deactivated_reason: active ? null : 'api',
    failing_since: null,
    created_at: now,
    updated_at: now,
  });
  return { subscriptionId: id, url: body.url, events, active, createdAt: now, updatedAt: now, signingSecret };
}
