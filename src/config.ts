import { Type, type Static } from '@sinclair/typebox';
import {
  absolutePath,
  addressOrNetwork,
  base64Bytes,
  either,
  group,
  hostName,
  listOf,
  nameServer,
  oneOf,
  optional,
  readSettings,
  setting,
  text,
  trueOrFalse,
  url,
  wholeNumber,
} from './lib/env-settings.js';

/**
 * The whole configuration of the service: environment variables, each declared once below (its
 * kind, bounds, default and description). The `Config` type, the checks `parseConfig` makes and
 * docs/configuration.md (`npm run config:doc`) all come from these declarations. The environment
 * is read once, in `src/main/*`; the frozen Config is passed down: nothing else reads `process.env`.
 *
 * A default computed from other settings (`{ from, text }`) sees the settings of earlier groups.
 */

const MILLION = 1_000_000;

const database = group('Database', {
  dataDir: setting(text('a directory path (relative to the working directory)'), {
    env: 'DATA_DIR',
    default: './data',
    description: 'Where the SQLite file and other local state (uploaded files on `disk`, the generated key) live.',
    resolve: absolutePath,
  }),
  databaseUrl: setting(
    optional(
      text('a postgres:// or postgresql:// URL (leave it unset for the embedded SQLite database)', '^postgres(ql)?://'),
    ),
    {
      env: 'DATABASE_URL',
      default: null,
      secret: true,
      description: '`postgres://…` runs on PostgreSQL; unset: the embedded SQLite database under `DATA_DIR`.',
    },
  ),
  pgPoolSize: setting(wholeNumber(1, 1_000), {
    env: 'PG_POOL_SIZE',
    default: 10,
    description: "Connections of each process's PostgreSQL pool (requests and background workers share it).",
  }),
});
type Database = Static<typeof database>;

const server = group('Server', {
  nodeEnv: setting(optional(text('any text; only production changes anything')), {
    env: 'NODE_ENV',
    default: null,
    description:
      '`production`: the service refuses to start (exit 78) without the settings marked **Required** with `NODE_ENV=production`.',
  }),
  port: setting(wholeNumber(0, 65535), { env: 'PORT', default: 3000, description: 'HTTP port.' }),
  host: setting(text('an address or host name'), {
    env: 'HOST',
    default: '0.0.0.0',
    description: 'Interface to listen on.',
  }),
  publicBaseUrl: setting(
    optional(
      url('an http(s) URL without query or fragment', (u) => /^https?:$/.test(u.protocol) && !u.search && !u.hash),
    ),
    {
      env: 'PUBLIC_BASE_URL',
      default: null,
      description:
        "The origin the service is reached at (`https://pages.example.com`), used in signed file URLs. Unset: the request's own Host and protocol.",
      // Without it, signed file URLs would be built from the request's Host header, which any client
      // can set: a URL pointing at the client's own host could be handed out to someone else.
      requiredInProduction: 'the https origin the service is reached at',
      resolve: (value) => value?.replace(/\/+$/, '') ?? null,
    },
  ),
  secretKeys: setting(listOf('key', base64Bytes(32, 'base64 of 32 bytes (openssl rand -base64 32)')), {
    env: 'SECRET_KEY',
    // The older name, still read so that deployments that set it keep their sealed webhook secrets readable.
    legacyEnv: 'WEBHOOK_SECRET_KEY',
    default: [],
    secret: true,
    description:
      "The service's own keys, newest first (`new,old` during rotation), kept apart from the database and its backups. The first seals webhook signing secrets (AES-256-GCM; all of them open: rotation) and is the root the HMAC keys of cursors, file URLs and page sessions are derived from (HKDF). Unset (development only): webhook secrets are sealed with a key generated into `DATA_DIR/webhook-secret.key`, and the HMAC keys are random rows of the database. Set it when several hosts share one PostgreSQL.",
    requiredInProduction:
      'base64 of 32 bytes: openssl rand -base64 32, kept apart from the database and its backups: it seals webhook secrets and signs cursors, file URLs and page sessions',
  }),
  trustProxy: setting(
    either(
      'true, false, the number of proxies in front (0 to 99), or the addresses/networks of the trusted proxies, comma-separated (10.0.0.2, 10.1.0.0/16)',
      wholeNumber(0, 99),
      either('true or false, or addresses', trueOrFalse, listOf('proxy address', addressOrNetwork)),
    ),
    {
      env: 'TRUST_PROXY',
      default: false,
      description:
        'Whether (and how far) to trust `X-Forwarded-For` for the client address: a hop count, or better the addresses of your proxies (only their `X-Forwarded-For` entries are believed). `true` believes any client that sends the header: use it only when every request comes through a proxy that overwrites it. The address only feeds rate limits; it is never stored.',
    },
  ),
  metricsToken: setting(optional(text('at least 16 characters', '^.{16,}$')), {
    env: 'METRICS_TOKEN',
    default: null,
    secret: true,
    description:
      '`GET /metrics` (Prometheus text) answers scrapes that send `Authorization: Bearer <this>`; unset, the endpoint is off (404). Never served on tenant domains.',
  }),
  logLevel: setting(oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), {
    env: 'LOG_LEVEL',
    default: 'info',
    description: 'JSON logs on stdout, one line per request.',
  }),
  bodyLimitBytes: setting(wholeNumber(1024, 64 * 1024 * 1024), {
    env: 'BODY_LIMIT_BYTES',
    default: 1024 * 1024,
    description: 'Largest accepted request body (413 above).',
  }),
  requestTimeoutMs: setting(wholeNumber(1, 600_000), {
    env: 'REQUEST_TIMEOUT_MS',
    default: 30_000,
    description: 'A request taking longer is cut off.',
  }),
  shutdownGraceMs: setting(wholeNumber(0, 600_000), {
    env: 'SHUTDOWN_GRACE_MS',
    default: 20_000,
    description: 'How long shutdown waits for in-flight requests and webhook attempts.',
  }),
});

const processes = group('Processes and background workers', {
  webConcurrency: setting(wholeNumber(1, 64), {
    env: 'WEB_CONCURRENCY',
    default: 1,
    description:
      'Server processes sharing the port (node:cluster), each with its own database pool and background workers; wake-ups between processes use LISTEN/NOTIFY. PostgreSQL only.',
    check: (processCount, { databaseUrl }: Database) =>
      processCount > 1 && databaseUrl === null
        ? 'needs PostgreSQL (DATABASE_URL): the embedded SQLite database has one writer, and its group commit ' +
          'works inside one process. Leave WEB_CONCURRENCY unset (or 1) with SQLite.'
        : undefined,
  }),
  runWorkers: setting(trueOrFalse, {
    env: 'RUN_WORKERS',
    default: true,
    description: 'Whether this process runs the background workers (version generation, webhook delivery, …).',
  }),
  workersThread: setting(trueOrFalse, {
    env: 'WORKERS_THREAD',
    default: {
      from: ({ databaseUrl }: Database) => databaseUrl === null,
      text: '`true` on SQLite, `false` on PostgreSQL',
    },
    description:
      'Run the background workers on a thread of their own with their own connection, so that their synchronous SQLite work and commits never hold the thread that answers requests (PostgreSQL I/O is asynchronous already).',
  }),
});

const apiLimits = group('API limits', {
  rateLimitPerSecond: setting(wholeNumber(0, MILLION), {
    env: 'RATE_LIMIT_PER_SECOND',
    default: 50,
    description: 'Sustained requests per second per API key; `0` turns rate limiting off.',
  }),
  rateLimitBurst: setting(wholeNumber(1, MILLION), {
    env: 'RATE_LIMIT_BURST',
    default: 100,
    description: 'Requests a key may send at once after being idle.',
  }),
  authFailuresPerMinute: setting(wholeNumber(0, MILLION), {
    env: 'AUTH_FAILURES_PER_MINUTE',
    default: 30,
    description:
      'Failed authentications (unknown or revoked keys) per client address per minute; above it 429 without a key look-up. `0` turns it off.',
  }),
});

const files = group('Files', {
  fileStorage: setting(oneOf(['disk', 'database']), {
    env: 'FILE_STORAGE',
    default: {
      from: ({ databaseUrl }: Database) => (databaseUrl === null ? 'disk' : 'database'),
      text: '`disk` on SQLite, `database` on PostgreSQL',
    },
    description: 'Where uploaded file bytes live: a folder under `DATA_DIR`, or a table every node shares.',
  }),
  fileDecodeConcurrency: setting(wholeNumber(1, 64), {
    env: 'FILE_DECODE_CONCURRENCY',
    default: 2,
    description:
      'Full image decodes (upload checks, previews) at once per process; the others wait in line ([api.md](api.md), Files).',
  }),
  assetBytesGraceHours: setting(wholeNumber(0, 24 * 365), {
    env: 'ASSET_BYTES_GRACE_HOURS',
    default: 168,
    description:
      'How long the bytes of a deleted asset stay stored (when no other asset uses its file) before they are removed ([api.md](api.md), Assets).',
  }),
});

const webhooks = group('Webhooks', {
  webhookAllowPrivateNetworks: setting(trueOrFalse, {
    env: 'WEBHOOK_ALLOW_PRIVATE_NETWORKS',
    default: false,
    description:
      'Lets webhooks reach loopback, private and link-local addresses: development only, never in production.',
  }),
  webhookAllowedPorts: setting(listOf('port', wholeNumber(1, 65535)), {
    env: 'WEBHOOK_ALLOWED_PORTS',
    default: [],
    description: 'Ports a webhook URL may name besides 80 and 443 (`8443,9000`).',
  }),
  webhookTimeoutMs: setting(wholeNumber(100, 60_000), {
    env: 'WEBHOOK_TIMEOUT_MS',
    default: 15_000,
    description: 'How long one delivery attempt may take, connection to last byte.',
  }),
  webhookConcurrency: setting(wholeNumber(1, 1_000), {
    env: 'WEBHOOK_CONCURRENCY',
    default: 128,
    description: 'Delivery attempts in flight per process.',
  }),
  webhookRetentionDays: setting(wholeNumber(1, 3_650), {
    env: 'WEBHOOK_RETENTION_DAYS',
    default: 30,
    description: 'Days that events, deliveries and attempts are kept.',
  }),
  webhookSubscriptionsPerTenant: setting(wholeNumber(1, 1_000), {
    env: 'WEBHOOK_SUBSCRIPTIONS_PER_TENANT',
    default: 20,
    description:
      'The most webhook subscriptions (not deleted, active or not) a tenant may have; one more is 422 `webhook_subscription_limit`.',
  }),
});

const enrichment = group('Enrichment', {
  enrichmentUrl: setting(
    optional(
      url('an http(s) URL without credentials', (u) => /^https?:$/.test(u.protocol) && !u.username && !u.password),
    ),
    {
      env: 'ENRICHMENT_URL',
      default: null,
      secret: true,
      description:
        "The provider form submissions are POSTed to (`http` enricher, [forms.md](forms.md#enrichment)), reached through the webhooks' SSRF policy. Unset: the built-in `domain` enricher alone. `https:` only with `NODE_ENV=production` (it carries visitors' emails and the token).",
      check: (value, { nodeEnv }: { nodeEnv: string | null }) =>
        value !== null && nodeEnv === 'production' && !value.startsWith('https:')
          ? 'must be an https URL in production: it carries visitors’ emails and ENRICHMENT_TOKEN'
          : undefined,
    },
  ),
  enrichmentToken: setting(optional(text('any text')), {
    env: 'ENRICHMENT_TOKEN',
    default: null,
    secret: true,
    description: 'Sent to the provider as `Authorization: Bearer …`.',
  }),
  enrichmentTimeoutMs: setting(wholeNumber(100, 60_000), {
    env: 'ENRICHMENT_TIMEOUT_MS',
    default: 5_000,
    description:
      'How long one provider request may take, DNS to last byte; failed requests are retried 10 s, 1 min, 5 min and 30 min later.',
  }),
  enrichmentJobRetentionDays: setting(wholeNumber(1, 36_500), {
    env: 'ENRICHMENT_JOB_RETENTION_DAYS',
    default: 30,
    description:
      'Days that a finished enrichment job (enriched or failed), with its copy of the email, name and company, is kept after it finished ([privacy.md](privacy.md)).',
  }),
});

const pages = group('Pages and forms', {
  pageEventsPerSecond: setting(wholeNumber(0, MILLION), {
    env: 'PAGE_EVENTS_PER_SECOND',
    default: 20,
    description:
      'Visit events (page script → `/_ap/collect`) per second per client address, bursts of 5×; `0` turns the limit off.',
  }),
  pageEventsPerPagePerSecond: setting(wholeNumber(0, MILLION), {
    env: 'PAGE_EVENTS_PER_PAGE_PER_SECOND',
    default: 500,
    description: 'Visit events per second per audience page, over all visitors, bursts of 5×; `0`: off.',
  }),
  pageCacheMegabytes: setting(wholeNumber(1, 65_536), {
    env: 'PAGE_CACHE_MB',
    default: 64,
    description:
      'Memory each server process keeps published pages in (their HTML, gzip and br bytes), in MiB; the least recently used go first ([performance.md](performance.md#page-cache)).',
  }),
  previewUrlMinutes: setting(wholeNumber(1, 10_080), {
    env: 'PREVIEW_URL_MINUTES',
    default: 60,
    description:
      'How long a version preview URL (`POST …/versions/{version_id}/preview`) works, in minutes ([api.md](api.md#publishing-previewing-and-rolling-back-versions-extension-of-the-interface)).',
  }),
  pageMissesPerMinute: setting(wholeNumber(0, MILLION), {
    env: 'PAGE_MISSES_PER_MINUTE',
    default: 120,
    description:
      'Requests for pages that do not exist (404/410) per minute per client address on page hosts, then 429; `0`: off.',
  }),
  formSubmissionsPerMinute: setting(wholeNumber(0, MILLION), {
    env: 'FORM_SUBMISSIONS_PER_MINUTE',
    default: 10,
    description:
      'Page form submissions per minute per client address, bursts of as many ([forms.md](forms.md)); `0`: off.',
  }),
  sessionsPerTenantPerDay: setting(wholeNumber(0, 1_000_000_000), {
    env: 'SESSIONS_PER_TENANT_PER_DAY',
    default: 1_000_000,
    description:
      'New audience sessions (visits) a tenant may record per UTC day, across all processes; then visits are served but not recorded ([pages-runtime.md](pages-runtime.md#daily-caps)); `0`: no cap.',
  }),
  formSubmissionsPerTenantPerDay: setting(wholeNumber(0, 1_000_000_000), {
    env: 'FORM_SUBMISSIONS_PER_TENANT_PER_DAY',
    default: 20_000,
    description:
      'Form submissions a tenant may receive per UTC day, across all processes; then forms are refused with 429 ([forms.md](forms.md#abuse-controls)); `0`: no cap.',
  }),
  agentQuestionsPerMinute: setting(wholeNumber(0, MILLION), {
    env: 'AGENT_QUESTIONS_PER_MINUTE',
    default: 10,
    description:
      "Questions to a page's agent per minute per client address, bursts of as many ([agent.md](agent.md)); `0`: off.",
  }),
  agentQuestionsPerPagePerSecond: setting(wholeNumber(0, MILLION), {
    env: 'AGENT_QUESTIONS_PER_PAGE_PER_SECOND',
    default: 5,
    description:
      "Questions to one page's agent per second, bursts of five seconds' worth ([agent.md](agent.md)); `0`: off.",
  }),
  agentQuestionsPerSession: setting(wholeNumber(1, 10_000), {
    env: 'AGENT_QUESTIONS_PER_SESSION',
    default: 20,
    description: 'Questions one visit (audience session) may ask the agent ([agent.md](agent.md)).',
  }),
  agentQuestionMaxChars: setting(wholeNumber(10, 10_000), {
    env: 'AGENT_QUESTION_MAX_CHARS',
    default: 500,
    description: 'The longest question a visitor may ask, in characters ([agent.md](agent.md)).',
  }),
  agentAnswerMaxChars: setting(wholeNumber(100, 20_000), {
    env: 'AGENT_ANSWER_MAX_CHARS',
    default: 1200,
    description: 'The longest answer the agent gives, in characters; longer ones are cut ([agent.md](agent.md)).',
  }),
  formMinFillMs: setting(wholeNumber(0, 600_000), {
    env: 'FORM_MIN_FILL_MS',
    default: 1500,
    description:
      'A form sent sooner than this (ms) after the service handed it to the visitor (its signed form stamp) is refused until the time has passed ([forms.md](forms.md#fill-time)); `0`: off.',
  }),
  formDedupeWindowSeconds: setting(wholeNumber(1, 86_400), {
    env: 'FORM_DEDUPE_WINDOW_SECONDS',
    default: 600,
    description: "Identical form submissions without the script's token within this many seconds are one submission.",
  }),
  sessionRetentionDays: setting(wholeNumber(1, 36_500), {
    env: 'SESSION_RETENTION_DAYS',
    default: 400,
    description: 'Days that audience sessions recorded by pages are kept (older whole hours are deleted).',
  }),
  formCreatesAccounts: setting(trueOrFalse, {
    env: 'FORM_CREATES_ACCOUNTS',
    default: false,
    description:
      "Whether a form submission's email domain may create an account (and count as that company's activity) when enriched; off: visitors cannot make accounts or activity, only existing accounts are shown ([forms.md](forms.md#identity)).",
  }),
  formSubmissionRetentionDays: setting(wholeNumber(1, 36_500), {
    env: 'FORM_SUBMISSION_RETENTION_DAYS',
    default: 730,
    description:
      "Days that form submissions are kept; older ones are deleted with their enrichment job, and the sessions they marked lose the visitor's identity ([privacy.md](privacy.md)).",
  }),
});

const languageModel = group('Language model', {
  llmBaseUrl: setting(
    optional(
      url(
        'an http(s) URL without credentials (e.g. http://localhost:11434/v1)',
        (u) => /^https?:$/.test(u.protocol) && !u.username && !u.password,
      ),
    ),
    {
      env: 'LLM_BASE_URL',
      default: null,
      description:
        "An OpenAI-compatible endpoint (`…/v1`: OpenAI, Ollama, vLLM, llama.cpp's server) that writes versions ([audience-versions.md](audience-versions.md#generators)). Chosen by the operator, so not held to the webhooks' SSRF policy (a local model on loopback is the common case). Unset: the built-in writer.",
      // Checked here, where the variable a reader set is named; llmModel is read by then.
      check: (baseUrl, { llmModel }: { llmModel: string | null }) =>
        baseUrl !== null && llmModel === null ? 'needs LLM_MODEL: the model to use (e.g. gpt-4o-mini)' : undefined,
      resolve: (value) => value?.replace(/\/+$/, '') ?? null,
    },
  ),
  llmApiKey: setting(optional(text('any text')), {
    env: 'LLM_API_KEY',
    default: null,
    secret: true,
    description: 'Sent as `Authorization: Bearer …`. Unset (local servers): no Authorization header at all.',
  }),
  llmModel: setting(optional(text('a model name')), {
    env: 'LLM_MODEL',
    default: null,
    description: 'The model the endpoint knows (`gpt-4o-mini`, `llama3.1:8b`). Required with `LLM_BASE_URL`.',
  }),
  llmAgentModel: setting(optional(text('a model name')), {
    env: 'LLM_AGENT_MODEL',
    default: null,
    description:
      "The model the on-page agent's answers use, when it should differ from `LLM_MODEL` (a smaller, faster one); same endpoint and key ([agent.md](agent.md#answers)). Unset: `LLM_MODEL`.",
  }),
  llmTimeoutMs: setting(wholeNumber(1_000, 600_000), {
    env: 'LLM_TIMEOUT_MS',
    default: 60_000,
    description: 'How long one provider call may take, connection to last byte.',
  }),
  llmMaxOutputTokens: setting(wholeNumber(256, 128_000), {
    env: 'LLM_MAX_OUTPUT_TOKENS',
    default: 4_096,
    description: 'The cap on the tokens of one answer (`max_completion_tokens`).',
  }),
  llmConcurrency: setting(wholeNumber(1, 256), {
    env: 'LLM_CONCURRENCY',
    default: 4,
    description:
      "Provider calls in flight at once in each process (generation and the on-page agent share them; a visitor's answer goes first). Versions a model writes at once, all processes together (tenants take turns for them): this plus `LLM_CLAIM_AHEAD`.",
  }),
  llmClaimAhead: setting(optional(wholeNumber(0, 256)), {
    env: 'LLM_CLAIM_AHEAD',
    default: null,
    description:
      'Versions a model writes that each process claims beyond `LLM_CONCURRENCY`, their inputs read, so that the next call starts the moment one returns rather than after its result is stored ([audience-versions.md](audience-versions.md#concurrency-and-turns)). A process never has more than `LLM_CONCURRENCY` calls in flight; several processes together at most `LLM_CONCURRENCY` + this. Unset: a tenth of `LLM_CONCURRENCY`, rounded up; `0`: all processes together never more than `LLM_CONCURRENCY`.',
  }),
  llmDailyTokenBudget: setting(wholeNumber(0, 1_000_000_000_000), {
    env: 'LLM_DAILY_TOKEN_BUDGET',
    default: 2_000_000,
    description:
      "Tokens (prompt + answer, as the provider reports them) each tenant's provider calls may use per UTC day, generation and the on-page agent together; over it, versions wait for the next day with the reason shown ([audience-versions.md](audience-versions.md#the-daily-token-budget)). `0`: no budget (a local model).",
  }),
});

const domains = group('Tenant domains and DNS', {
  dnsServers: setting(optional(listOf('name server', nameServer)), {
    env: 'DNS_SERVERS',
    default: null,
    description:
      "The name servers of every look-up the service makes itself (domain ownership proofs, webhook and enrichment hosts), comma-separated; a bare address means port 53. Unset: the system's (`/etc/resolv.conf`). Tests point it at a name server they start ([pages-runtime.md](pages-runtime.md#domains)).",
  }),
  apiHostnames: setting(listOf('host name', hostName), {
    env: 'API_HOSTNAMES',
    default: [],
    description:
      'Host names the API is reached at besides the host of `PUBLIC_BASE_URL`, comma-separated. No tenant may claim them or any name under them, and `GET /_ap/tls-ask` answers 200 for them.',
  }),
});

const consoleSettings = group('Console', {
  consoleSessionIdleMinutes: setting(wholeNumber(1, 10_080), {
    env: 'CONSOLE_SESSION_IDLE_MINUTES',
    default: 60,
    description:
      'A console session unused for this many minutes is over: the next request asks to sign in again ([console.md](console.md#sign-in)). A session never lasts more than 12 hours in any case.',
  }),
  smtpUrl: setting(
    optional(
      url(
        'an smtp:// or smtps:// URL, credentials in it (smtps://user:password@mail.example.com)',
        (u) => /^smtps?:$/.test(u.protocol) && u.hostname !== '' && !u.hash,
      ),
    ),
    {
      env: 'SMTP_URL',
      default: null,
      secret: true,
      description:
        'The mail server console invitations are also sent through ([console.md](console.md#invitations-by-e-mail)): `smtps://` is TLS from the start (port 465), `smtp://` upgrades with STARTTLS when the server offers it (add `?requireTLS=true` to insist). Unset: no mail; the CLI prints the link and the Users screen shows it, to pass on.',
      check: (value, { mailFrom }: { mailFrom: string | null }) =>
        value !== null && mailFrom === null ? 'is set without MAIL_FROM (the sender of the invitations)' : undefined,
    },
  ),
  mailFrom: setting(
    optional(text('an address, or a name and an address (Acme Pages <pages@acme.com>)', '^[^\\r\\n]{3,300}$')),
    {
      env: 'MAIL_FROM',
      default: null,
      description: "The sender of the console's mail (`Acme Pages <pages@acme.com>`). Required with `SMTP_URL`.",
      check: (value) =>
        value === null || /^[^<>@\s]+@[^<>@\s]+$|<[^<>@\s]+@[^<>@\s]+>$/.test(value.trim())
          ? undefined
          : 'must be an e-mail address, or a name followed by one in <…>',
    },
  ),
});

/** Every setting, by group (the groups are the sections of docs/configuration.md). */
export const ConfigSchema = Type.Intersect([
  database,
  server,
  processes,
  apiLimits,
  files,
  webhooks,
  enrichment,
  pages,
  languageModel,
  domains,
  consoleSettings,
]);

type Frozen<T> = { readonly [K in keyof T]: T[K] extends readonly (infer Item)[] ? readonly Item[] : T[K] };
export type Config = Frozen<Static<typeof ConfigSchema>>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** The configuration `env` sets, frozen; every bad value is reported at once (ConfigError). */
export function parseConfig(env: Record<string, string | undefined>, cwd = process.cwd()): Config {
  const { settings, problems } = readSettings(ConfigSchema, env, {
    cwd,
    production: (read) => read.nodeEnv === 'production',
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return settings;
}
