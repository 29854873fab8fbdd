import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, ConfigSchema, parseConfig } from './config.js';
import { describeSettings } from './lib/env-settings.js';

/** The problems `env` is refused for (none: an empty list). */
function problemsOf(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
}

const KEY = Buffer.alloc(32, 7).toString('base64');

describe('parseConfig', () => {
  it('has documented defaults', () => {
    const config = parseConfig({}, '/srv/app');
    expect(config).toEqual({
      dataDir: path.resolve('/srv/app/data'),
      databaseUrl: null,
      pgPoolSize: 10,
      nodeEnv: null,
      port: 3000,
      host: '0.0.0.0',
      publicBaseUrl: null,
      secretKeys: [],
      trustProxy: false,
      metricsToken: null,
      logLevel: 'info',
      bodyLimitBytes: 1024 * 1024,
      requestTimeoutMs: 30_000,
      shutdownGraceMs: 20_000,
      webConcurrency: 1,
      runWorkers: true,
      workersThread: true,
      rateLimitPerSecond: 50,
      rateLimitBurst: 100,
      authFailuresPerMinute: 30,
      fileStorage: 'disk',
      fileDecodeConcurrency: 2,
      assetBytesGraceHours: 168,
      webhookAllowPrivateNetworks: false,
      webhookAllowedPorts: [],
      webhookTimeoutMs: 15_000,
      webhookConcurrency: 128,
      webhookRetentionDays: 30,
      webhookSubscriptionsPerTenant: 20,
      enrichmentUrl: null,
      enrichmentToken: null,
      enrichmentTimeoutMs: 5_000,
      enrichmentJobRetentionDays: 30,
      pageEventsPerSecond: 20,
      pageEventsPerPagePerSecond: 500,
      pageCacheMegabytes: 64,
      previewUrlMinutes: 60,
      pageMissesPerMinute: 120,
      formSubmissionsPerMinute: 10,
      sessionsPerTenantPerDay: 1_000_000,
      formSubmissionsPerTenantPerDay: 20_000,
      agentQuestionsPerMinute: 10,
      agentQuestionsPerPagePerSecond: 5,
      agentQuestionsPerSession: 20,
      agentQuestionMaxChars: 500,
      agentAnswerMaxChars: 1200,
      consoleSessionIdleMinutes: 60,
      smtpUrl: null,
      mailFrom: null,
      formMinFillMs: 1500,
      formDedupeWindowSeconds: 600,
      sessionRetentionDays: 400,
      formCreatesAccounts: false,
      formSubmissionRetentionDays: 730,
      llmBaseUrl: null,
      llmApiKey: null,
      llmModel: null,
      llmAgentModel: null,
      llmTimeoutMs: 60_000,
      llmMaxOutputTokens: 4_096,
      llmConcurrency: 4,
      llmClaimAhead: null,
      llmDailyTokenBudget: 2_000_000,
      dnsServers: null,
      apiHostnames: [],
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.secretKeys)).toBe(true);
  });

  it('treats blank variables as unset and trims values', () => {
    expect(parseConfig({ PORT: '  ', HOST: ' 127.0.0.1 ', DATA_DIR: ' x ' }, '/srv')).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      dataDir: path.resolve('/srv/x'),
    });
  });

  it('reports every bad value at once', () => {
    const problems = problemsOf({
      PORT: '99999',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'mysql://x',
      RATE_LIMIT_PER_SECOND: '-1',
    }).join('\n');
    expect(problems).toContain('PORT');
    expect(problems).toContain('LOG_LEVEL');
    expect(problems).toContain('DATABASE_URL');
    expect(problems).toContain('RATE_LIMIT_PER_SECOND');
  });

  it('refuses a bad value of each kind, naming the variable and what it accepts', () => {
    expect(problemsOf({ PORT: '80.5' })).toEqual(['PORT must be a whole number from 0 to 65535, got "80.5"']);
    expect(problemsOf({ RUN_WORKERS: 'maybe' })).toEqual([
      'RUN_WORKERS must be true or false (or 1/0, yes/no, on/off), got "maybe"',
    ]);
    expect(problemsOf({ FILE_STORAGE: 's3' })).toEqual(['FILE_STORAGE must be one of disk, database, got "s3"']);
    expect(problemsOf({ PUBLIC_BASE_URL: 'https://pages.example.com/?x=1' })).toEqual([
      'PUBLIC_BASE_URL must be an http(s) URL without query or fragment, got "https://pages.example.com/?x=1"',
    ]);
    expect(problemsOf({ WEBHOOK_ALLOWED_PORTS: '8443,http' })).toEqual([
      'WEBHOOK_ALLOWED_PORTS port 2 must be a whole number from 1 to 65535, got "http"',
    ]);
    expect(problemsOf({ TRUST_PROXY: 'all' })).toEqual([
      'TRUST_PROXY must be true, false, the number of proxies in front (0 to 99), or the addresses/networks of the trusted proxies, comma-separated (10.0.0.2, 10.1.0.0/16), got "all"',
    ]);
  });

  it('never repeats a secret value in an error', () => {
    const problems = problemsOf({
      DATABASE_URL: 'mysql://root:hunter2@db',
      ENRICHMENT_URL: 'https://user:hunter2@enrich.example',
      SECRET_KEY: `${KEY},hunter2`,
    });
    expect(problems).toEqual([
      'DATABASE_URL must be a postgres:// or postgresql:// URL (leave it unset for the embedded SQLite database)',
      'SECRET_KEY key 2 must be base64 of 32 bytes (openssl rand -base64 32)',
      'ENRICHMENT_URL must be an http(s) URL without credentials',
    ]);
  });

  it('accepts every whole number at its bounds and refuses it just outside them', () => {
    const bounds: Record<string, [number, number]> = {
      PG_POOL_SIZE: [1, 1_000],
      PORT: [0, 65535],
      BODY_LIMIT_BYTES: [1024, 64 * 1024 * 1024],
      REQUEST_TIMEOUT_MS: [1, 600_000],
      SHUTDOWN_GRACE_MS: [0, 600_000],
      WEB_CONCURRENCY: [1, 64],
      RATE_LIMIT_PER_SECOND: [0, 1_000_000],
      RATE_LIMIT_BURST: [1, 1_000_000],
      AUTH_FAILURES_PER_MINUTE: [0, 1_000_000],
      FILE_DECODE_CONCURRENCY: [1, 64],
      ASSET_BYTES_GRACE_HOURS: [0, 24 * 365],
      WEBHOOK_TIMEOUT_MS: [100, 60_000],
      WEBHOOK_CONCURRENCY: [1, 1_000],
      WEBHOOK_RETENTION_DAYS: [1, 3_650],
      WEBHOOK_SUBSCRIPTIONS_PER_TENANT: [1, 1_000],
      ENRICHMENT_TIMEOUT_MS: [100, 60_000],
      PAGE_EVENTS_PER_SECOND: [0, 1_000_000],
      PAGE_EVENTS_PER_PAGE_PER_SECOND: [0, 1_000_000],
      PAGE_MISSES_PER_MINUTE: [0, 1_000_000],
      PAGE_CACHE_MB: [1, 65_536],
      PREVIEW_URL_MINUTES: [1, 10_080],
      FORM_SUBMISSIONS_PER_MINUTE: [0, 1_000_000],
      AGENT_QUESTIONS_PER_MINUTE: [0, 1_000_000],
      AGENT_QUESTIONS_PER_PAGE_PER_SECOND: [0, 1_000_000],
      AGENT_QUESTIONS_PER_SESSION: [1, 10_000],
      AGENT_QUESTION_MAX_CHARS: [10, 10_000],
      AGENT_ANSWER_MAX_CHARS: [100, 20_000],
      CONSOLE_SESSION_IDLE_MINUTES: [1, 10_080],
      FORM_MIN_FILL_MS: [0, 600_000],
      SESSIONS_PER_TENANT_PER_DAY: [0, 1_000_000_000],
      FORM_SUBMISSIONS_PER_TENANT_PER_DAY: [0, 1_000_000_000],
      FORM_DEDUPE_WINDOW_SECONDS: [1, 86_400],
      SESSION_RETENTION_DAYS: [1, 36_500],
      FORM_SUBMISSION_RETENTION_DAYS: [1, 36_500],
      ENRICHMENT_JOB_RETENTION_DAYS: [1, 36_500],
      LLM_TIMEOUT_MS: [1_000, 600_000],
      LLM_MAX_OUTPUT_TOKENS: [256, 128_000],
      LLM_CONCURRENCY: [1, 256],
      LLM_CLAIM_AHEAD: [0, 256],
      LLM_DAILY_TOKEN_BUDGET: [0, 1_000_000_000_000],
    };
    const wholeNumbers = describeSettings(ConfigSchema)
      .flatMap((group) => group.settings)
      .filter((setting) => setting.accepts.startsWith('a whole number'));
    expect(wholeNumbers.map((setting) => setting.env).sort()).toEqual(Object.keys(bounds).sort());

    const postgres = { DATABASE_URL: 'postgres://u@h/db' }; // WEB_CONCURRENCY above 1 needs it
    for (const [env, [min, max]] of Object.entries(bounds)) {
      expect(problemsOf({ ...postgres, [env]: String(min) }), env).toEqual([]);
      expect(problemsOf({ ...postgres, [env]: String(max) }), env).toEqual([]);
      const refused = (value: string) => [`${env} must be a whole number from ${min} to ${max}, got "${value}"`];
      expect(problemsOf({ ...postgres, [env]: String(max + 1) }), env).toEqual(refused(String(max + 1)));
      expect(problemsOf({ ...postgres, [env]: String(min - 1) }), env).toEqual(refused(String(min - 1)));
    }
  });

  it('turns rate limiting off with 0 and accepts PostgreSQL URLs', () => {
    const config = parseConfig({ RATE_LIMIT_PER_SECOND: '0', DATABASE_URL: 'postgres://u@h/db' });
    expect(config.rateLimitPerSecond).toBe(0);
    expect(config.databaseUrl).toBe('postgres://u@h/db');
  });

  it('runs the background workers on their own thread by default with SQLite only', () => {
    expect(parseConfig({}).workersThread).toBe(true);
    expect(parseConfig({ DATABASE_URL: 'postgres://u@h/db' }).workersThread).toBe(false);
    expect(parseConfig({ WORKERS_THREAD: 'false' }).workersThread).toBe(false);
  });

  it('stores files on disk with SQLite and in the database with PostgreSQL, unless told', () => {
    expect(parseConfig({}).fileStorage).toBe('disk');
    expect(parseConfig({ DATABASE_URL: 'postgres://u@h/db' }).fileStorage).toBe('database');
    expect(parseConfig({ DATABASE_URL: 'postgres://u@h/db', FILE_STORAGE: 'Disk' }).fileStorage).toBe('disk');
  });

  it('sizes the PostgreSQL pool with PG_POOL_SIZE (10 by default) and refuses a pool of none', () => {
    expect(parseConfig({}).pgPoolSize).toBe(10);
    expect(parseConfig({ PG_POOL_SIZE: '24' }).pgPoolSize).toBe(24);
    expect(() => parseConfig({ PG_POOL_SIZE: '0' })).toThrow(/PG_POOL_SIZE/);
    expect(() => parseConfig({ PG_POOL_SIZE: 'lots' })).toThrow(/PG_POOL_SIZE/);
  });

  it('refuses more than one server process on SQLite', () => {
    expect(problemsOf({ WEB_CONCURRENCY: '2' })).toEqual([
      expect.stringMatching(/^WEB_CONCURRENCY=2 needs PostgreSQL \(DATABASE_URL\)/),
    ]);
    expect(parseConfig({ WEB_CONCURRENCY: '2', DATABASE_URL: 'postgres://u@h/db' }).webConcurrency).toBe(2);
  });

  it('reads TRUST_PROXY as a flag or a number of proxies', () => {
    expect(parseConfig({ TRUST_PROXY: 'yes' }).trustProxy).toBe(true);
    expect(parseConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(parseConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(parseConfig({ TRUST_PROXY: '10.0.0.2, 10.1.0.0/16,fd00::/8' }).trustProxy).toEqual([
      '10.0.0.2',
      '10.1.0.0/16',
      'fd00::/8',
    ]);
    expect(() => parseConfig({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/TRUST_PROXY/);
  });

  it('reads lists comma-separated, each value once', () => {
    expect(parseConfig({ WEBHOOK_ALLOWED_PORTS: '8443, 9000,8443,' }).webhookAllowedPorts).toEqual([8443, 9000]);
  });

  it('keeps PUBLIC_BASE_URL without trailing slashes', () => {
    expect(parseConfig({ PUBLIC_BASE_URL: 'https://pages.example.com//' }).publicBaseUrl).toBe(
      'https://pages.example.com',
    );
  });

  // ── Language model (issue 24) ──
  it('uses no model by default, and needs LLM_MODEL with an http(s) LLM_BASE_URL', () => {
    expect(parseConfig({})).toMatchObject({
      llmBaseUrl: null,
      llmApiKey: null,
      llmModel: null,
      llmTimeoutMs: 60_000,
      llmMaxOutputTokens: 4_096,
      llmConcurrency: 4,
      llmDailyTokenBudget: 2_000_000,
    });
    expect(parseConfig({ LLM_DAILY_TOKEN_BUDGET: '0' }).llmDailyTokenBudget).toBe(0);
    expect(() => parseConfig({ LLM_DAILY_TOKEN_BUDGET: '-1' })).toThrow(/LLM_DAILY_TOKEN_BUDGET/);
    expect(
      parseConfig({ LLM_BASE_URL: 'http://localhost:11434/v1/', LLM_MODEL: 'llama3.1:8b', LLM_TIMEOUT_MS: '90000' }),
    ).toMatchObject({
      llmBaseUrl: 'http://localhost:11434/v1',
      llmModel: 'llama3.1:8b',
      llmApiKey: null,
      llmTimeoutMs: 90_000,
    });
    expect(() => parseConfig({ LLM_BASE_URL: 'http://localhost:11434/v1' })).toThrow(
      /LLM_BASE_URL=http:\/\/localhost:11434\/v1 needs LLM_MODEL/,
    );
    expect(() => parseConfig({ LLM_BASE_URL: 'ftp://x', LLM_MODEL: 'm' })).toThrow(/LLM_BASE_URL must be an http/);
    expect(() => parseConfig({ LLM_BASE_URL: 'https://k:s@api.example/v1', LLM_MODEL: 'm' })).toThrow(
      /without credentials/,
    );
    expect(() => parseConfig({ LLM_CONCURRENCY: '0' })).toThrow(/LLM_CONCURRENCY/);
    // the on-page agent may use another model of the same endpoint (issue 25)
    expect(parseConfig({ LLM_BASE_URL: 'http://h/v1', LLM_MODEL: 'big', LLM_AGENT_MODEL: 'small' })).toMatchObject({
      llmModel: 'big',
      llmAgentModel: 'small',
    });
  });

  it('reads DNS_SERVERS as address:port entries (the system resolver when unset)', () => {
    expect(parseConfig({}).dnsServers).toBeNull();
    expect(parseConfig({ DNS_SERVERS: ' 127.0.0.1:5353, 10.0.0.2 ,[::1]:53,2001:db8::53' }).dnsServers).toEqual([
      '127.0.0.1:5353',
      '10.0.0.2',
      '[::1]:53',
      '2001:db8::53',
    ]);
    for (const bad of ['ns1.example.com:53', '127.0.0.1:0', '127.0.0.1:99999', '127.0.0.1:x', '[::1]:']) {
      expect(() => parseConfig({ DNS_SERVERS: bad }), bad).toThrow(/DNS_SERVERS/);
    }
  });
  it('takes an http ENRICHMENT_URL in development only (production: https, issue 26)', () => {
    const production = { NODE_ENV: 'production', SECRET_KEY: KEY, PUBLIC_BASE_URL: 'https://api.pages.test' };
    expect(parseConfig({ ENRICHMENT_URL: 'http://localhost:9000/enrich' }).enrichmentUrl).toBe(
      'http://localhost:9000/enrich',
    );
    expect(problemsOf({ ...production, ENRICHMENT_URL: 'http://enrich.example/x' })).toEqual([
      'ENRICHMENT_URL must be an https URL in production: it carries visitors’ emails and ENRICHMENT_TOKEN',
    ]);
    expect(problemsOf({ ...production, ENRICHMENT_URL: 'https://enrich.example/x' })).toEqual([]);
  });

  it('sends no mail by default; SMTP_URL is smtp(s):// and needs MAIL_FROM, and is never repeated (issue 28)', () => {
    const smtp = { SMTP_URL: 'smtps://pages:s3cret@mail.acme.test', MAIL_FROM: 'Acme Pages <pages@acme.test>' };
    expect(parseConfig(smtp)).toMatchObject({ smtpUrl: smtp.SMTP_URL, mailFrom: smtp.MAIL_FROM });
    expect(parseConfig({ ...smtp, MAIL_FROM: 'pages@acme.test' }).mailFrom).toBe('pages@acme.test');
    expect(problemsOf({ SMTP_URL: smtp.SMTP_URL })).toEqual([
      'SMTP_URL is set without MAIL_FROM (the sender of the invitations)',
    ]);
    const refused = problemsOf({ SMTP_URL: 'https://pages:s3cret@mail.acme.test', MAIL_FROM: 'nobody' }).join('\n');
    expect(refused).toContain('SMTP_URL must be an smtp:// or smtps:// URL');
    expect(refused).toContain('MAIL_FROM=nobody must be an e-mail address');
    expect(refused).not.toContain('s3cret');
  });

  it('reads API_HOSTNAMES as host names, lowercase, without a trailing dot', () => {
    expect(parseConfig({}).apiHostnames).toEqual([]);
    expect(parseConfig({ API_HOSTNAMES: 'API.pages.example.com., api2.pages.example.com' }).apiHostnames).toEqual([
      'api.pages.example.com',
      'api2.pages.example.com',
    ]);
    for (const bad of ['https://api.pages.example.com', 'api.pages.example.com:443', 'api/x', 'a b']) {
      expect(() => parseConfig({ API_HOSTNAMES: bad }), bad).toThrow(/API_HOSTNAMES/);
    }
  });
});
