import { describe, expect, it } from 'vitest';
import { SessionTokens } from './audience-sessions.collect.js';

const ref = { sessionId: 'ses_1', pageId: 'pg_1', audienceId: 'aud_1', startedAtMs: 1_700_000_000_000 };

describe('session tokens', () => {
  it('reads a token it issued, again and again, as the same session', () => {
    const tokens = new SessionTokens('secret');
    const token = tokens.issue('ten_a', ref);
    expect(tokens.read('ten_a', token)).toEqual(ref);
    expect(tokens.read('ten_a', token)).toEqual(ref);
  });

  it('refuses a verified token for another tenant, and altered or foreign tokens', () => {
    const tokens = new SessionTokens('secret');
    const token = tokens.issue('ten_a', ref);
    expect(tokens.read('ten_a', token)).toEqual(ref);
    expect(tokens.read('ten_b', token)).toBeNull();
    expect(tokens.read('ten_a', token.replace('ses_1', 'ses_2'))).toBeNull();
    expect(tokens.read('ten_a', new SessionTokens('other secret').issue('ten_a', ref))).toBeNull();
    expect(tokens.read('ten_a', 'not.a.token')).toBeNull();
  });
});
