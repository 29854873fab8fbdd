import { describe, expect, it } from 'vitest';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CollectTurns } from './site.collect.turns.js';
import { PageSigner } from './site.tokens.js';

const turnOf = (turns: CollectTurns) => new Promise<void>((go) => turns.wait(go));

describe('collect requests take turns behind page requests', () => {
  it('lets at most `perTurn` requests go on per event-loop turn, in arrival order', async () => {
    const turns = new CollectTurns(3);
    const went: number[] = [];
    const all = Array.from({ length: 7 }, (_, i) => turnOf(turns).then(() => went.push(i)));
    expect(turns.waiting).toBe(7);
    await nextTurn();
    expect(went).toEqual([0, 1, 2]);
    await nextTurn();
    expect(went).toEqual([0, 1, 2, 3, 4, 5]);
    await Promise.all(all);
    expect(went).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(turns.waiting).toBe(0);
  });

  it('answers what arrives between turns (a page request read in the poll phase) before the requests still waiting', async () => {
    const turns = new CollectTurns(2);
    const order: string[] = [];
    const handlers = Array.from({ length: 6 }, (_, i) => turnOf(turns).then(() => order.push(`collect ${i}`)));
    // A page request read after the first turn: answered before the later turns' handlers.
    await nextTurn();
    setImmediate(() => order.push('page'));
    await Promise.all(handlers);
    expect(order.indexOf('page')).toBeLessThan(order.indexOf('collect 4'));
    expect(order.indexOf('page')).toBeGreaterThan(order.indexOf('collect 1'));
  });
});

describe('view tokens', () => {
  it('reads a verified token again from memory, and still refuses it for another tenant or altered', () => {
    const signer = new PageSigner('secret');
    const token = signer.viewToken('ten_a', 'aud_1');
    expect(signer.readViewToken('ten_a', token)).toBe('aud_1');
    expect(signer.readViewToken('ten_a', token)).toBe('aud_1');
    expect(signer.readViewToken('ten_b', token)).toBeNull();
    expect(signer.readViewToken('ten_a', token.replace('aud_1', 'aud_2'))).toBeNull();
    expect(signer.readViewToken('ten_a', new PageSigner('other').viewToken('ten_a', 'aud_1'))).toBeNull();
  });
});
