import type { Insertable } from 'kysely';
import { json } from '../../db/json.js';
import { keysetAfter } from '../../db/keyset.js';
import type { DB } from '../../db/schema.js';
import type { TenantScope } from '../../db/tenant-scope.js';
import type { KeysetWindow } from '../../http/pagination.js';

type MessageRow = Omit<Insertable<DB['agent_messages']>, 'tenant_id' | 'sources'> & {
  sources: { kind: string; label: string }[];
};

export async function insertMessages(scope: TenantScope, rows: MessageRow[]) {
  await scope
    .insertInto(
      'agent_messages',
      rows.map((r) => ({ ...r, sources: json(r.sources) })),
    )
    .execute();
}

/** Writes a message's final text and sources (an answer being written was stored empty first). */
export async function completeMessage(
  scope: TenantScope,
  id: string,
  content: string,
  sources: { kind: string; label: string }[],
) {
  await scope
    .updateTable('agent_messages')
    .set({ content, sources: json(sources) })
    .where('agent_messages.id', '=', id)
    .execute();
}

const OLDEST_FIRST = [{ ref: 'agent_messages.position', direction: 'asc' as const }];

/** A session's messages, oldest first (by position), up to `limit + 1` (see Pager). */
export async function listMessages(scope: TenantScope, sessionId: string, window: KeysetWindow) {
  let query = scope
    .selectFrom('agent_messages')
    .select([
      'agent_messages.position',
      'agent_messages.role',
      'agent_messages.content',
      'agent_messages.sources',
      'agent_messages.created_at',
    ])
    .where('agent_messages.session_id', '=', sessionId);
  if (window.after) query = query.where(keysetAfter(OLDEST_FIRST, window.after));
  return query
    .orderBy('agent_messages.position')
    .limit(window.limit + 1)
    .execute();
}

export async function countMessages(scope: TenantScope, sessionId: string): Promise<number> {
  const row = await scope
    .selectFrom('agent_messages')
    .where('agent_messages.session_id', '=', sessionId)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
