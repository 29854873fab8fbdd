import { describe, expect, it } from 'vitest';
import { isoTimestamp } from './pg-adapter.js';

describe('isoTimestamp (timestamptz as the API returns it)', () => {
  it('gives what Date gives for every fraction PostgreSQL prints', () => {
    const texts = [
      '2026-11-23 07:04:53+00',
      '2026-11-23 07:04:53.5+00',
      '2026-11-23 07:04:53.05+00',
      '2026-11-23 07:04:53.934+00',
      '2026-11-23 07:04:53.9349+00',
      '2026-12-31 23:59:59.999999+00',
      '2000-02-29 00:00:00.000001+00',
    ];
    for (const text of texts) expect(isoTimestamp(text)).toBe(new Date(text).toISOString());
    expect(isoTimestamp('2026-12-31 23:59:59.999999+00')).toBe('2026-12-31T23:59:59.999Z');
  });

  it('converts other session time zones through Date', () => {
    expect(isoTimestamp('2026-11-23 08:04:53.25+01')).toBe('2026-11-23T07:04:53.250Z');
    expect(isoTimestamp('2026-11-23 02:34:53+04:30')).toBe('2026-11-22T22:04:53.000Z');
  });
});
