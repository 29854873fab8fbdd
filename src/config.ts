import { isIP, isIPv6 } from 'node:net';
import path from 'node:path';

/**
 * The whole configuration of the service. It is read from the environment once, in
 * `src/main/*`, validated here, and then passed down frozen: nothing else reads `process.env`.
 */
export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** `postgres://…` selects PostgreSQL; unset means the embedded SQLite file under `dataDir`. */
  readonly databaseUrl: string | null;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Sustained requests per second per API key; 0 turns rate limiting off. */
  readonly rateLimitPerSecond: number;
  /** Bucket size: how many requests a key may send at once after being idle. */
  readonly rateLimitBurst: number;
  /** Failed authentications a client address may make per minute (then 429); 0 turns it off. */
  readonly authFailuresPerMinute: number;
  readonly bodyLimitBytes: number;
  readonly requestTimeoutMs: number;
  readonly shutdownGraceMs: number;
  /**
   * Server processes sharing the port (node:cluster), each with its own database pool and
   * background workers. PostgreSQL only: SQLite has one writer and its group commit lives in one
   * process, so more than 1 is refused there.
   */
  readonly webConcurrency: number;
  /** Connections of each process's PostgreSQL pool (requests and workers share it). */
  readonly pgPoolSize: number;
  /** Whether this process runs the background workers (version generation, webhook delivery). */
  readonly runWorkers: boolean;
  /**
   * Run the background workers on their own thread (worker_threads) with their own database
   * connection, so that their synchronous SQLite work and commits never hold the event loop that
   * answers requests. Defaults to on with SQLite; PostgreSQL I/O is asynchronous already.
   */
  readonly workersThread: boolean;
  /**
   * Where uploaded file bytes live: `disk` (a folder under `dataDir`) or `database` (a table every
   * node shares). Defaults to `database` on PostgreSQL and `disk` on SQLite.
   */
  readonly fileStorage: 'disk' | 'database';
  /** Full image decodes (upload checks, previews) at once per process; more wait in line. */
  readonly fileDecodeConcurrency: number;
  /**
   * The origin the service is reached at (`https://pages.example.com`), used in signed file URLs.
   * Unset: the URLs are built from the request's own Host and protocol.
   */
  readonly publicBaseUrl: string | null;
  /**
   * The service's own keys (`SECRET_KEY`, 32 bytes each), newest first. The first seals webhook
   * signing secrets (all open them: rotation) and is the root every HMAC key (cursors, file URLs,
   * page sessions) is derived from. Empty (development only): webhook secrets are sealed with a key
   * generated into `dataDir`, and the HMAC keys are random rows of `service_secrets`.
   */
  readonly secretKeys: readonly Buffer[];
  /** Lets webhooks reach loopback/private/link-local addresses. Unsafe outside development. */
  readonly webhookAllowPrivateNetworks: boolean;
  /** Ports a webhook URL may name besides 80 and 443 (`WEBHOOK_ALLOWED_PORTS`). */
  readonly webhookAllowedPorts: readonly number[];
  /** How long one delivery attempt may take, connection to last byte. */
  readonly webhookTimeoutMs: number;
  /** How many deliveries one process has in flight at once. */
  readonly webhookConcurrency: number;
  /** Days that events, deliveries and attempts are kept. */
  readonly webhookRetentionDays: number;
  /** The most (not deleted) webhook subscriptions one tenant may have. */
  readonly webhookSubscriptionsPerTenant: number;
  /**
   * The enrichment provider (`http` enricher) form submissions are sent to; null: the built-in
   * `domain` enricher alone. Reached through the webhooks' SSRF policy.
   */
  readonly enrichmentUrl: string | null;
  /** Sent to the provider as `Authorization: Bearer …` when set. */
  readonly enrichmentToken: string | null;
  /** How long one provider request may take, connection to last byte. */
  readonly enrichmentTimeoutMs: number;
  /**
   * Page visit events (collection endpoint) per second per client address; bursts of 5× are
   * allowed. 0 turns the limit off.
   */
  readonly pageEventsPerSecond: number;
  /** Page visit events per second per audience page, over all visitors (bursts of 5×). 0: off. */
  readonly pageEventsPerPagePerSecond: number;
  /** Requests for pages that do not exist (404/410) per minute per client address on page hosts. 0: off. */
  readonly pageMissesPerMinute: number;
  /** Form submissions per minute per client address on page hosts (bursts of as many). 0: off. */
  readonly formSubmissionsPerMinute: number;
  /** A form the page script saw filled faster than this (ms since it became visible) is refused as a bot. */
  readonly formMinFillMs: number;
  /** Identical submissions without the script's token within this many seconds are one submission. */
  readonly formDedupeWindowSeconds: number;
  /**
   * Whether (and how far) to trust X-Forwarded-For for the client address: false, true (any
   * proxy), or the number of proxies in front. The address only feeds rate limits; it is never stored.
   */
  readonly trustProxy: boolean | number;
  /** Days that audience sessions recorded by pages are kept (older whole hours are deleted). */
  readonly sessionRetentionDays: number;

  // ---- Tenant domains and DNS (issue 26), parsed by `parseDomainSettings` below ----
  /**
   * The name servers of every look-up the service makes itself (domain ownership proofs, webhook
   * and enrichment hosts), as `address:port` (`DNS_SERVERS`, comma-separated; a bare address means
   * port 53). Null: the system's (`/etc/resolv.conf`).
   */
  readonly dnsServers: readonly string[] | null;
  /**
   * Host names the API is reached at besides the host of PUBLIC_BASE_URL (`API_HOSTNAMES`,
   * comma-separated). No tenant may claim them or any name under them, and the TLS `ask` endpoint
   * answers 200 for them.
   */
  readonly apiHostnames: readonly string[];
  // ---- end of tenant domains and DNS ----
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

type Env = Record<string, string | undefined>;

export function parseConfig(env: Env, cwd = process.cwd()): Config {
  const problems: string[] = [];

  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    if (!/^\d+$/.test(raw.trim())) {
      problems.push(`${name} must be a whole number between ${min} and ${max}, got "${raw}"`);
      return fallback;
    }
    const value = Number(raw.trim());
    if (value < min || value > max) problems.push(`${name} must be between ${min} and ${max}, got ${value}`);
    return value;
  };

  const bool = (name: string, fallback: boolean): boolean => {
    const raw = env[name]?.trim().toLowerCase();
    if (raw === undefined || raw === '') return fallback;
    if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
    if (['0', 'false', 'no', 'off'].includes(raw)) return false;
    problems.push(`${name} must be true or false, got "${env[name]}"`);
    return fallback;
  };

  const databaseUrl = env.DATABASE_URL?.trim() || null;
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push(
      'DATABASE_URL must start with postgres:// or postgresql:// (leave it unset for the embedded SQLite database)',
    );
  }

  const logLevel = (env.LOG_LEVEL?.trim() || 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);

  const production = env.NODE_ENV?.trim() === 'production';

  // SECRET_KEY is the one root secret; WEBHOOK_SECRET_KEY is its older name, still honoured so that
  // deployments that set it keep their sealed webhook secrets readable.
  const keyVariable = env.SECRET_KEY?.trim() ? 'SECRET_KEY' : 'WEBHOOK_SECRET_KEY';
  if (
    env.SECRET_KEY?.trim() &&
    env.WEBHOOK_SECRET_KEY?.trim() &&
    env.SECRET_KEY.trim() !== env.WEBHOOK_SECRET_KEY.trim()
  ) {
    problems.push(
      'SECRET_KEY and WEBHOOK_SECRET_KEY (its older name) are both set, to different values: keep SECRET_KEY only',
    );
  }
  const secretKeys: Buffer[] = [];
  for (const [i, raw] of (env[keyVariable] ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean)
    .entries()) {
    const key = Buffer.from(raw, 'base64');
    if (key.length !== 32 || !/^[A-Za-z0-9+/_-]+=*$/.test(raw))
      problems.push(`${keyVariable} key ${i + 1} must be 32 bytes in base64 (openssl rand -base64 32)`);
    else secretKeys.push(key);
  }
  if (production && secretKeys.length === 0 && !problems.some((p) => p.startsWith(keyVariable))) {
    problems.push(
      'NODE_ENV=production needs SECRET_KEY (base64 of 32 bytes: openssl rand -base64 32), kept apart from the ' +
        'database and its backups: it seals webhook secrets and signs cursors, file URLs and page sessions',
    );
  }

  const webhookAllowedPorts: number[] = [];
  for (const raw of (env.WEBHOOK_ALLOWED_PORTS ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const port = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
    if (!(port >= 1 && port <= 65535))
      problems.push(`WEBHOOK_ALLOWED_PORTS must be a comma-separated list of ports (1-65535), got "${raw}"`);
    else if (!webhookAllowedPorts.includes(port)) webhookAllowedPorts.push(port);
  }

  const host = env.HOST?.trim() || '0.0.0.0';

  const fileStorage = (env.FILE_STORAGE?.trim().toLowerCase() || (databaseUrl ? 'database' : 'disk')) as
    'disk' | 'database';
  if (fileStorage !== 'disk' && fileStorage !== 'database') {
    problems.push(`FILE_STORAGE must be disk or database, got "${env.FILE_STORAGE}"`);
  }

  let publicBaseUrl = env.PUBLIC_BASE_URL?.trim() || null;
  if (publicBaseUrl !== null) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(publicBaseUrl);
    } catch {
      // reported below
    }
    if (parsed === null || !/^https?:$/.test(parsed.protocol) || parsed.search || parsed.hash) {
      problems.push(`PUBLIC_BASE_URL must be an http(s) URL without query or fragment, got "${publicBaseUrl}"`);
    } else publicBaseUrl = publicBaseUrl.replace(/\/+$/, '');
  } else if (production) {
    // Without it, signed file URLs would be built from the request's Host header, which any client
    // can set: a URL pointing at the client's own host could be handed out to someone else.
    problems.push('NODE_ENV=production needs PUBLIC_BASE_URL (the https origin the service is reached at)');
  }

  const enrichmentUrl = env.ENRICHMENT_URL?.trim() || null;
  if (enrichmentUrl !== null) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(enrichmentUrl);
    } catch {
      // reported below
    }
    if (parsed === null || !/^https?:$/.test(parsed.protocol) || parsed.username || parsed.password) {
      problems.push(`ENRICHMENT_URL must be an http(s) URL without credentials, got "${enrichmentUrl}"`);
    }
  }

  const trustRaw = env.TRUST_PROXY?.trim().toLowerCase() ?? '';
  let trustProxy: boolean | number = false;
  if (/^\d{1,2}$/.test(trustRaw)) trustProxy = Number(trustRaw);
  else if (trustRaw !== '') trustProxy = bool('TRUST_PROXY', false);

  const config: Config = {
    port: int('PORT', 3000, 0, 65535),
    host,
    dataDir: path.resolve(cwd, env.DATA_DIR?.trim() || './data'),
    databaseUrl,
    logLevel,
    rateLimitPerSecond: int('RATE_LIMIT_PER_SECOND', 50, 0, 1_000_000),
    rateLimitBurst: int('RATE_LIMIT_BURST', 100, 1, 1_000_000),
    authFailuresPerMinute: int('AUTH_FAILURES_PER_MINUTE', 30, 0, 1_000_000),
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    requestTimeoutMs: int('REQUEST_TIMEOUT_MS', 30_000, 1, 600_000),
    shutdownGraceMs: int('SHUTDOWN_GRACE_MS', 20_000, 0, 600_000),
    webConcurrency: int('WEB_CONCURRENCY', 1, 1, 64),
    pgPoolSize: int('PG_POOL_SIZE', 10, 1, 1_000),
    runWorkers: bool('RUN_WORKERS', true),
    workersThread: bool('WORKERS_THREAD', databaseUrl === null),
    fileStorage,
    fileDecodeConcurrency: int('FILE_DECODE_CONCURRENCY', 2, 1, 64),
    publicBaseUrl,
    secretKeys: Object.freeze(secretKeys),
    webhookAllowPrivateNetworks: bool('WEBHOOK_ALLOW_PRIVATE_NETWORKS', false),
    webhookAllowedPorts: Object.freeze(webhookAllowedPorts),
    webhookTimeoutMs: int('WEBHOOK_TIMEOUT_MS', 15_000, 100, 60_000),
    webhookConcurrency: int('WEBHOOK_CONCURRENCY', 128, 1, 1_000),
    webhookRetentionDays: int('WEBHOOK_RETENTION_DAYS', 30, 1, 3_650),
    webhookSubscriptionsPerTenant: int('WEBHOOK_SUBSCRIPTIONS_PER_TENANT', 20, 1, 1_000),
    enrichmentUrl,
    enrichmentToken: env.ENRICHMENT_TOKEN?.trim() || null,
    enrichmentTimeoutMs: int('ENRICHMENT_TIMEOUT_MS', 5_000, 100, 60_000),
    pageEventsPerSecond: int('PAGE_EVENTS_PER_SECOND', 20, 0, 1_000_000),
    pageEventsPerPagePerSecond: int('PAGE_EVENTS_PER_PAGE_PER_SECOND', 500, 0, 1_000_000),
    pageMissesPerMinute: int('PAGE_MISSES_PER_MINUTE', 120, 0, 1_000_000),
    formSubmissionsPerMinute: int('FORM_SUBMISSIONS_PER_MINUTE', 10, 0, 1_000_000),
    formMinFillMs: int('FORM_MIN_FILL_MS', 1500, 0, 600_000),
    formDedupeWindowSeconds: int('FORM_DEDUPE_WINDOW_SECONDS', 600, 1, 86_400),
    trustProxy,
    sessionRetentionDays: int('SESSION_RETENTION_DAYS', 400, 1, 36_500),
    ...parseDomainSettings(env, problems),
  };

  if (config.webConcurrency > 1 && databaseUrl === null) {
    problems.push(
      `WEB_CONCURRENCY=${config.webConcurrency} needs PostgreSQL (DATABASE_URL): the embedded SQLite database has ` +
        'one writer, and its group commit works inside one process. Leave WEB_CONCURRENCY unset (or 1) with SQLite.',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

// ---- Tenant domains and DNS (issue 26): DNS_SERVERS, API_HOSTNAMES ----

/** `address:port`, `address`, `[ipv6]:port` or a bare IPv6 address, as c-ares' setServers takes them. */
function nameServerProblem(entry: string): string | null {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  const [address, port] = bracketed
    ? [bracketed[1]!, bracketed[2]]
    : isIPv6(entry)
      ? [entry, undefined]
      : (entry.split(/:(?=[^:]*$)/) as [string, string | undefined]);
  if (isIP(address) === 0) return 'is not an IP address';
  if (port !== undefined && !(/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535)) {
    return 'has a port that is not 1-65535';
  }
  return null;
}

function parseDomainSettings(env: Env, problems: string[]): Pick<Config, 'dnsServers' | 'apiHostnames'> {
  const list = (name: string) =>
    (env[name] ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean);

  const dnsServers = list('DNS_SERVERS');
  for (const entry of dnsServers) {
    const problem = nameServerProblem(entry);
    if (problem !== null)
      problems.push(`DNS_SERVERS entry "${entry}" ${problem} (expected address:port, e.g. 10.0.0.2:53)`);
  }

  const apiHostnames: string[] = [];
  for (const entry of list('API_HOSTNAMES')) {
    const hostname = entry.toLowerCase().replace(/\.$/, '');
    if (!/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(hostname)) {
      problems.push(
        `API_HOSTNAMES entry "${entry}" must be a host name (no scheme, port or path), e.g. api.pages.example.com`,
      );
    } else if (!apiHostnames.includes(hostname)) apiHostnames.push(hostname);
  }

  return {
    dnsServers: dnsServers.length > 0 ? Object.freeze(dnsServers) : null,
    apiHostnames: Object.freeze(apiHostnames),
  };
}
// ---- end of tenant domains and DNS ----
