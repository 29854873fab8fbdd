import { describe, expect, it } from 'vitest';
import {
  IllegalTransitionError,
  initialVersion,
  isAllowed,
  transition,
  TRANSITIONS,
  VERSION_STATUSES,
  type VersionEvent,
  type VersionStatus,
} from './audiences.version-lifecycle.js';

const NOW = '2026-11-01T09:00:00.000Z';

/** The lifecycle as docs/audience-versions.md draws it, written out independently of the table. */
const EXPECTED: Record<VersionEvent, [VersionStatus[], VersionStatus]> = {
  claim: [['queued', 'pending'], 'processing'],
  reclaim: [['processing'], 'processing'],
  generated: [['processing'], 'draft'],
  retry: [['processing'], 'pending'],
  fail: [['processing'], 'cancelled'],
  supersede: [['queued', 'pending', 'processing'], 'cancelled'],
  publish: [['draft'], 'published'],
  retire: [['draft', 'published'], 'archived'],
};

const TIMESTAMP_OF: Partial<Record<VersionStatus, string>> = {
  draft: 'became_draft_at',
  published: 'published_at',
  cancelled: 'cancelled_at',
  archived: 'archived_at',
};

describe('the version transition table', () => {
  it('is exactly the documented lifecycle', () => {
    expect(Object.keys(TRANSITIONS).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const [event, [from, to]] of Object.entries(EXPECTED)) {
      expect(TRANSITIONS[event as VersionEvent]).toEqual({ from, to });
    }
  });

  const cases = (Object.keys(EXPECTED) as VersionEvent[]).flatMap((event) =>
    VERSION_STATUSES.map((from) => ({ event, from, allowed: EXPECTED[event][0].includes(from) })),
  );

  it.each(cases.filter((c) => c.allowed))('allows $event from $from, setting the status and its timestamp', (c) => {
    const to = EXPECTED[c.event][1];
    const changes = transition(c.event, c.from, NOW);
    expect(changes.status).toBe(to);
    const column = TIMESTAMP_OF[to];
    if (column) expect((changes as Record<string, unknown>)[column]).toBe(NOW);
    expect(changes.obsolete_at).toBe(c.from === 'published' ? NOW : undefined);
    if (['draft', 'published', 'cancelled', 'archived'].includes(to)) {
      // leaves the queue
      expect(changes).toMatchObject({ available_at: null, lease_token: null });
    } else {
      expect(changes).not.toHaveProperty('available_at');
    }
  });

  it.each(cases.filter((c) => !c.allowed))('forbids $event from $from', (c) => {
    expect(isAllowed(c.event, c.from)).toBe(false);
    expect(() => transition(c.event, c.from, NOW)).toThrow(IllegalTransitionError);
  });

  it('never leaves the terminal statuses, and nothing enters queued except creation', () => {
    for (const event of Object.keys(TRANSITIONS) as VersionEvent[]) {
      expect(isAllowed(event, 'archived')).toBe(false);
      expect(isAllowed(event, 'cancelled')).toBe(false);
      expect(TRANSITIONS[event].to).not.toBe('queued');
    }
    expect(initialVersion(NOW)).toEqual({ status: 'queued', queued_at: NOW, available_at: NOW });
  });
});
