import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './config.js';

describe('parseConfig', () => {
  it('has documented defaults', () => {
    const config = parseConfig({}, '/srv/app');
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      dataDir: path.resolve('/srv/app/data'),
      databaseUrl: null,
      logLevel: 'info',
      rateLimitPerSecond: 50,
      rateLimitBurst: 100,
      bodyLimitBytes: 1024 * 1024,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reports every bad value at once', () => {
    try {
      parseConfig({ PORT: '99999', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x', RATE_LIMIT_PER_SECOND: '-1' });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems.join('\n');
      expect(problems).toContain('PORT');
      expect(problems).toContain('LOG_LEVEL');
      expect(problems).toContain('DATABASE_URL');
      expect(problems).toContain('RATE_LIMIT_PER_SECOND');
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

  it('sizes the PostgreSQL pool with PG_POOL_SIZE (10 by default) and refuses a pool of none', () => {
    expect(parseConfig({}).pgPoolSize).toBe(10);
    expect(parseConfig({ PG_POOL_SIZE: '24' }).pgPoolSize).toBe(24);
    expect(() => parseConfig({ PG_POOL_SIZE: '0' })).toThrow(/PG_POOL_SIZE/);
    expect(() => parseConfig({ PG_POOL_SIZE: 'lots' })).toThrow(/PG_POOL_SIZE/);
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
    });
    expect(
      parseConfig({ LLM_BASE_URL: 'http://localhost:11434/v1/', LLM_MODEL: 'llama3.1:8b', LLM_TIMEOUT_MS: '90000' }),
    ).toMatchObject({
      llmBaseUrl: 'http://localhost:11434/v1',
      llmModel: 'llama3.1:8b',
      llmApiKey: null,
      llmTimeoutMs: 90_000,
    });
    expect(() => parseConfig({ LLM_BASE_URL: 'http://localhost:11434/v1' })).toThrow(/LLM_MODEL must name the model/);
    expect(() => parseConfig({ LLM_BASE_URL: 'ftp://x', LLM_MODEL: 'm' })).toThrow(/LLM_BASE_URL must be an http/);
    expect(() => parseConfig({ LLM_BASE_URL: 'https://k:s@api.example/v1', LLM_MODEL: 'm' })).toThrow(
      /without credentials/,
    );
    expect(() => parseConfig({ LLM_CONCURRENCY: '0' })).toThrow(/LLM_CONCURRENCY/);
  });
});
