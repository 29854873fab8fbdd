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
