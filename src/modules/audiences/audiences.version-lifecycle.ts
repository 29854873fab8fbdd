import type { Updateable } from 'kysely';
import type { AudienceVersionsTable } from '../../db/schema.js';

/**
 * The lifecycle of an audience version (docs/audience-versions.md draws it). `TRANSITIONS` is the
 * only place where a status change is allowed: every write of `status` is built by `transition()`
 * and applied with a guard on the status it starts from, so a change that raced with another one
 * touches nothing.
 */
export const VERSION_STATUSES = [
  'archived',
  'cancelled',
  'draft',
  'pending',
  'processing',
  'published',
  'queued',
] as const;
export type VersionStatus = (typeof VERSION_STATUSES)[number];

/** Statuses in which the version is still a generation job (the worker's queue). */
export const RUNNABLE_STATUSES = ['queued', 'pending', 'processing'] as const satisfies readonly VersionStatus[];

export type VersionEvent =
  /** The worker takes a queued version, or a pending one whose retry time has come. */
  | 'claim'
  /** The worker takes a version whose previous worker's lease ran out (it crashed or hung). */
  | 'reclaim'
  /** Generation succeeded: the artifact is stored, the version is a draft. */
  | 'generated'
  /** Generation failed and attempts remain: the version waits for its retry. */
  | 'retry'
  /** Generation failed for the last time. */
  | 'fail'
  /** A newer version of the audience was created before this one produced a draft. */
  | 'supersede'
  /** The version goes live (its page is published). */
  | 'publish'
  /** A newer version replaced this draft, or this published version, as the current one. */
  | 'retire';

interface Transition {
  from: readonly VersionStatus[];
  to: VersionStatus;
}

/** The transition table. */
export const TRANSITIONS: Readonly<Record<VersionEvent, Transition>> = {
  claim: { from: ['queued', 'pending'], to: 'processing' },
  reclaim: { from: ['processing'], to: 'processing' },
  generated: { from: ['processing'], to: 'draft' },
  retry: { from: ['processing'], to: 'pending' },
  fail: { from: ['processing'], to: 'cancelled' },
  supersede: { from: ['queued', 'pending', 'processing'], to: 'cancelled' },
  publish: { from: ['draft'], to: 'published' },
  retire: { from: ['draft', 'published'], to: 'archived' },
};

/** The timestamp column set when a version enters a status (the job statuses set none). */
const ENTERED_AT: Partial<Record<VersionStatus, keyof AudienceVersionsTable>> = {
  queued: 'queued_at',
  draft: 'became_draft_at',
  published: 'published_at',
  cancelled: 'cancelled_at',
  archived: 'archived_at',
};

export class IllegalTransitionError extends Error {
  constructor(
    readonly event: VersionEvent,
    readonly from: string,
  ) {
    super(`Audience version transition "${event}" is not allowed from status "${from}".`);
    this.name = 'IllegalTransitionError';
  }
}

export function isAllowed(event: VersionEvent, from: string): boolean {
  return (TRANSITIONS[event].from as readonly string[]).includes(from);
}

export function isRunnable(status: string): boolean {
  return (RUNNABLE_STATUSES as readonly string[]).includes(status);
}

export type VersionChanges = Updateable<AudienceVersionsTable>;

/**
 * The column changes of `event` on a version in status `from` at `now`: the new status, the
 * timestamp of the status entered, `obsolete_at` when a published version stops being live, and
 * the job columns cleared when the version leaves the queue. Throws when the table forbids it.
 */
export function transition(event: VersionEvent, from: string, now: string): VersionChanges {
  if (!isAllowed(event, from)) throw new IllegalTransitionError(event, from);
  const to = TRANSITIONS[event].to;
  const changes: VersionChanges = { status: to };
  const enteredAt = ENTERED_AT[to];
  if (enteredAt !== undefined) (changes as Record<string, unknown>)[enteredAt] = now;
  if (from === 'published') changes.obsolete_at = now;
  if (!isRunnable(to)) {
    changes.available_at = null;
    changes.lease_token = null;
  }
  return changes;
}

/** The columns of a new version: every version starts queued. */
export function initialVersion(now: string): { status: 'queued'; queued_at: string; available_at: string } {
  return { status: 'queued', queued_at: now, available_at: now };
}
