import { renderInsight } from './console.analytics.views.js';
import { Badge, Csrf, PostForm, TableRegion, type Viewer, When } from './console.views.js';

export interface DomainView {
  tenantDomainId: string;
  hostname: string;
  status: string;
  verification: { type: string; name: string; value: string };
  verifiedAt: string | null;
  lastCheck: { checkedAt: string; result: string; detail: string } | null;
  nextCheckAt: string | null;
  pendingUntil: string | null;
}

export interface SubscriptionView {
  subscriptionId: string;
  url: string;
  events: string[] | null;
  active: boolean;
  deactivatedReason: string | null;
  createdAt: string;
}

export interface DeliveryView {
  deliveryId: string;
  eventType: string;
  status: string;
  attempts: number;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

export interface ApiKeyView {
  keyId: string;
  name: string | null;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
  active: boolean;
}

export interface Notice {
  text: string;
  error?: boolean;
}

function NoticeBox({ notice }: { notice: Notice | undefined }) {
  if (notice === undefined) return null;
  return (
    <p class={notice.error ? 'notice error' : 'notice'} role={notice.error ? 'alert' : 'status'}>
      {notice.text}
    </p>
  );
}

/** Settings: the tenant's domains and their DNS proof, webhook subscriptions, API keys. */
export function renderSettings(options: {
  viewer: Viewer;
  domains: DomainView[];
  subscriptions: SubscriptionView[];
  apiKeys: ApiKeyView[];
  notice?: Notice;
  createdKey?: { apiKey: string; name: string | null };
}): string {
  const { viewer } = options;
  return renderInsight({
    title: 'Settings',
    viewer,
    section: 'settings',
    body: (
      <>
        <h1>Settings</h1>
        <NoticeBox notice={options.notice} />
        <h2 id="domains">Domains</h2>
        <p class="lead">
          A domain serves the tenant’s pages once proven: publish its TXT record at your DNS provider, then check it.
        </p>
        {options.domains.length === 0 ? (
          <p>No domains yet (they are added through the API: POST /v0/tenant_domains).</p>
        ) : (
          options.domains.map((d) => (
            <section class="card" key={d.tenantDomainId} aria-labelledby={`domain-${d.tenantDomainId}`}>
              <h3 id={`domain-${d.tenantDomainId}`}>
                {d.hostname} <Badge value={d.status} />
              </h3>
              <dl class="dns">
                <dt>Type</dt>
                <dd>{d.verification.type}</dd>
                <dt>Name</dt>
                <dd>{d.verification.name}</dd>
                <dt>Value</dt>
                <dd>{d.verification.value}</dd>
              </dl>
              <p class="hint">
                {d.verifiedAt !== null && (
                  <>
                    Verified <When at={d.verifiedAt} />.{' '}
                  </>
                )}
                {d.lastCheck !== null && (
                  <>
                    Last check <When at={d.lastCheck.checkedAt} />: {d.lastCheck.detail}{' '}
                  </>
                )}
                {d.nextCheckAt !== null && (
                  <>
                    Next check <When at={d.nextCheckAt} />.
                  </>
                )}
              </p>
              <div class="actions">
                <button type="button" class="secondary" data-copy={d.verification.value}>
                  Copy value
                </button>
                {d.status !== 'superseded' && (
                  <PostForm viewer={viewer} action={`/console/settings/domains/${d.tenantDomainId}/verify`}>
                    <button type="submit">{d.status === 'verified' ? 'Check again' : 'Verify now'}</button>
                  </PostForm>
                )}
              </div>
            </section>
          ))
        )}

        <h2 id="webhooks">Webhooks</h2>
        {options.subscriptions.length === 0 ? (
          <p>No webhook subscriptions (they are added through the API: POST /v0/webhook_subscriptions).</p>
        ) : (
          <TableRegion label="Webhook subscriptions">
            <table>
              <thead>
                <tr>
                  <th scope="col">Receiver</th>
                  <th scope="col">State</th>
                  <th scope="col" class="hide-small">
                    Events
                  </th>
                </tr>
              </thead>
              <tbody>
                {options.subscriptions.map((s) => (
                  <tr key={s.subscriptionId}>
                    <td class="wrap">
                      <a href={`/console/settings/webhooks/${s.subscriptionId}`}>{s.url}</a>
                    </td>
                    <td>
                      <Badge value={s.active ? 'active' : 'inactive'} />
                      {s.deactivatedReason ? <span class="hint"> ({s.deactivatedReason})</span> : null}
                    </td>
                    <td class="hide-small">{s.events === null ? 'all' : s.events.join(', ')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}

        <h2 id="api-keys">API keys</h2>
        {options.createdKey && (
          <div class="notice" role="status">
            <p>
              The new key{options.createdKey.name ? ` “${options.createdKey.name}”` : ''}. It is shown this once: copy
              it now.
            </p>
            <p class="secret" data-api-key>
              {options.createdKey.apiKey}
            </p>
            <button type="button" class="secondary" data-copy={options.createdKey.apiKey}>
              Copy key
            </button>
          </div>
        )}
        <form method="post" action="/console/settings/api-keys" class="search">
          <Csrf viewer={viewer} />
          <label for="key-name" class="skip">
            Name of the new key
          </label>
          <input id="key-name" type="text" name="name" maxLength={100} placeholder="Name (optional)" />
          <button type="submit">Create a key</button>
        </form>
        {options.apiKeys.length === 0 ? (
          <p>No API keys.</p>
        ) : (
          <TableRegion label="API keys">
            <table>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">State</th>
                  <th scope="col" class="hide-small">
                    Created
                  </th>
                  <th scope="col">
                    <span class="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {options.apiKeys.map((k) => (
                  <tr key={k.keyId}>
                    <td>
                      <code>{k.prefix}…</code>
                      {k.name ? (
                        <>
                          <br />
                          <span class="hint">{k.name}</span>
                        </>
                      ) : null}
                    </td>
                    <td>
                      <Badge value={k.active ? 'active' : 'revoked'} />
                    </td>
                    <td class="hide-small">
                      <When at={k.createdAt} />
                    </td>
                    <td>
                      {k.active && (
                        <PostForm
                          viewer={viewer}
                          action={`/console/settings/api-keys/${k.keyId}/revoke`}
                          confirm="Revoke this key? Requests made with it will be refused."
                        >
                          <button type="submit" class="danger" aria-label={`Revoke key ${k.prefix}`}>
                            Revoke
                          </button>
                        </PostForm>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
      </>
    ),
  });
}

/** A webhook subscription's deliveries, newest first, with a replay button for the closed ones. */
export function renderDeliveries(options: {
  viewer: Viewer;
  subscription: SubscriptionView;
  deliveries: DeliveryView[];
  nextHref: string | null;
  notice?: Notice;
}): string {
  const { viewer, subscription } = options;
  return renderInsight({
    title: 'Webhook deliveries',
    viewer,
    section: 'settings',
    body: (
      <>
        <nav aria-label="Breadcrumb">
          <a href="/console/settings#webhooks">Settings</a>
        </nav>
        <h1>Webhook deliveries</h1>
        <p class="lead wrap">
          To <code>{subscription.url}</code> · <Badge value={subscription.active ? 'active' : 'inactive'} />
        </p>
        <NoticeBox notice={options.notice} />
        {options.deliveries.length === 0 ? (
          <p>No deliveries yet.</p>
        ) : (
          <TableRegion label="Deliveries">
            <table>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col" class="num">
                    Attempts
                  </th>
                  <th scope="col" class="hide-small">
                    Last attempt
                  </th>
                  <th scope="col">
                    <span class="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {options.deliveries.map((d) => (
                  <tr key={d.deliveryId}>
                    <td>
                      {d.eventType}
                      <br />
                      <span class="hint">
                        <When at={d.createdAt} />
                      </span>
                    </td>
                    <td>
                      <Badge value={d.status} />
                    </td>
                    <td class="num">{d.attempts}</td>
                    <td class="hide-small">
                      <When at={d.lastAttemptAt} />
                      {d.lastStatusCode !== null ? ` · HTTP ${d.lastStatusCode}` : ''}
                      {d.lastError !== null ? ` · ${d.lastError}` : ''}
                    </td>
                    <td>
                      {d.status !== 'pending' && subscription.active && (
                        <PostForm
                          viewer={viewer}
                          action={`/console/settings/webhooks/deliveries/${d.deliveryId}/replay`}
                        >
                          <button type="submit" class="secondary" aria-label={`Replay delivery ${d.deliveryId}`}>
                            Replay
                          </button>
                        </PostForm>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
        {options.nextHref && (
          <nav class="pager" aria-label="More deliveries">
            <a href={options.nextHref}>Older deliveries</a>
          </nav>
        )}
      </>
    ),
  });
}
