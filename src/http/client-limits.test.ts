import { describe, expect, it } from 'vitest';
import { clientKey } from './client-address.js';
import { TokenBuckets } from './token-buckets.js';

describe('clientKey: the address a client is limited by', () => {
  it('groups IPv6 addresses by /64, keeps IPv4 (and IPv4-mapped IPv6) as they are', () => {
    expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe(clientKey('2001:db8:1:2:ffff::1'));
    expect(clientKey('2001:db8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:3::1')).not.toBe(clientKey('2001:db8:1:2::1'));
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('not an address')).toBe('not an address');
  });
});

describe('TokenBuckets past its size', () => {
  it('forgets the least recently used bucket, never everyone’s: a client rotating addresses cannot reset a limit', () => {
    let now = 0;
    const buckets = new TokenBuckets(1 / 60, 2, () => now);
    expect(buckets.take('abuser').ok).toBe(true);
    expect(buckets.take('abuser').ok).toBe(true);
    expect(buckets.take('abuser').ok).toBe(false);
    // 100,000 other keys (the default bound), while the limited client keeps trying.
    for (let i = 0; i < 100_000; i++) {
      buckets.take(`rotating-${i}`);
      if (i % 1000 === 0) expect(buckets.take('abuser').ok).toBe(false);
      now += 0.001;
    }
    expect(buckets.take('abuser').ok).toBe(false);
    // The oldest idle keys were the ones forgotten.
    expect(buckets.allows('rotating-0')).toBe(true);
  });

  it('keeps at most maxKeys buckets', () => {
    const buckets = new TokenBuckets(1, 1, () => 0, 3);
    for (const key of ['a', 'b', 'c']) buckets.take(key);
    expect(['a', 'b', 'c'].map((k) => buckets.allows(k))).toEqual([false, false, false]);
    buckets.take('a'); // a is now the most recently used
    buckets.take('d'); // evicts b
    expect(['a', 'b', 'c', 'd'].map((k) => buckets.allows(k))).toEqual([false, true, false, false]);
  });
});
