import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

/**
 * What the on-page agent retrieves from (issue 25, docs/agent.md): passages of the tenant's topic
 * entries (one per entry, scope = the tenant) and of each version's page (its brief and each body
 * section, scope = the version), with a full-text index: an FTS5 table (porter stemming over
 * unicode61, kept in step by triggers) on SQLite, a stored `tsvector` (english) with a GIN index on
 * PostgreSQL. `scope_token` is the scope as one FTS token, so that SQLite's match itself is
 * limited to the tenant's and the version's passages.
 *
 * Existing topic entries and versions are indexed here (versions with a frozen copy of the
 * extraction in agent.passages.ts: the brief and the sections' text).
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  if (engine === 'sqlite') {
    await sql`create table agent_passages (
      seq integer primary key,
      id text not null unique,
      tenant_id text not null references tenants(id),
      scope_key text not null,
      scope_token text not null,
      source_kind text not null,
      source_id text not null,
      label text not null,
      body text not null
    )`.execute(db);
    await sql`create virtual table agent_passages_fts using fts5(scope_token, label, body,
      content='agent_passages', content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2')`.execute(db);
    await sql`create trigger agent_passages_fts_insert after insert on agent_passages begin
      insert into agent_passages_fts(rowid, scope_token, label, body) values (new.seq, new.scope_token, new.label, new.body);
    end`.execute(db);
    await sql`create trigger agent_passages_fts_delete after delete on agent_passages begin
      insert into agent_passages_fts(agent_passages_fts, rowid, scope_token, label, body)
        values ('delete', old.seq, old.scope_token, old.label, old.body);
    end`.execute(db);
    await sql`create trigger agent_passages_fts_update after update of scope_token, label, body on agent_passages begin
      insert into agent_passages_fts(agent_passages_fts, rowid, scope_token, label, body)
        values ('delete', old.seq, old.scope_token, old.label, old.body);
      insert into agent_passages_fts(rowid, scope_token, label, body) values (new.seq, new.scope_token, new.label, new.body);
    end`.execute(db);
  } else {
    await sql`create table agent_passages (
      id text primary key,
      tenant_id text not null references tenants(id),
      scope_key text not null,
      scope_token text not null,
      source_kind text not null,
      source_id text not null,
      label text not null,
      body text not null,
      document tsvector generated always as
        (setweight(to_tsvector('english', label), 'B') || setweight(to_tsvector('english', body), 'A')) stored
    )`.execute(db);
    await sql`create index agent_passages_document on agent_passages using gin (document)`.execute(db);
  }
  await db.schema
    .createIndex('agent_passages_scope')
    .on('agent_passages')
    .columns(['tenant_id', 'scope_key'])
    .execute();
  await db.schema
    .createIndex('agent_passages_source')
    .on('agent_passages')
    .columns(['tenant_id', 'source_id'])
    .execute();

  // Existing knowledge: one passage per topic entry, labelled with its topic's title.
  await sql`insert into agent_passages (id, tenant_id, scope_key, scope_token, source_kind, source_id, label, body)
    select e.id, e.tenant_id, e.tenant_id, 'k' || replace(e.tenant_id, '_', '') || 'z', 'topic_entry', e.id, t.title, e.content
    from topic_entries e join topics t on t.id = e.topic_id and t.tenant_id = e.tenant_id`.execute(db);

  // Existing versions with an artifact: the brief and the sections (frozen copy of the extraction).
  let after = '';
  for (;;) {
    const rows = await db
      .selectFrom('audience_versions')
      .select(['id', 'tenant_id', 'artifact'])
      .where('artifact', 'is not', null)
      .where('id', '>', after)
      .orderBy('id')
      .limit(200)
      .execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      const content = typeof row.artifact === 'string' ? JSON.parse(row.artifact) : row.artifact;
      const passages = frozenPassages(content);
      if (passages.length === 0) continue;
      await db
        .insertInto('agent_passages')
        .values(
          passages.map((p, i) => ({
            id: `${row.id}:${i}`,
            tenant_id: row.tenant_id,
            scope_key: row.id,
            scope_token: `k${String(row.id)
              .replace(/[^0-9a-z]/gi, '')
              .toLowerCase()}z`,
            source_kind: p.kind,
            source_id: row.id,
            label: p.label,
            body: p.body,
          })),
        )
        .execute();
    }
    after = rows[rows.length - 1]!.id;
  }
}

const str = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
const arr = (v: unknown): any[] => (Array.isArray(v) ? v : []);

function frozenPassages(artifact: any): { kind: string; label: string; body: string }[] {
  const content = artifact?.content ?? artifact;
  const out: { kind: string; label: string; body: string }[] = [];
  const brief = str(content?.agent?.context);
  if (brief) out.push({ kind: 'brief', label: 'About this page', body: brief.slice(0, 20_000) });
  for (const section of arr(content?.copy?.sections)) {
    const parts = [str(section?.body), str(section?.intro)];
    for (const item of arr(section?.items)) {
      parts.push(
        [str(item?.title), str(item?.text), str(item?.question), str(item?.answer), str(item?.quote)]
          .filter(Boolean)
          .join(' '),
      );
    }
    const body = parts.filter(Boolean).join('\n');
    if (body) out.push({ kind: 'section', label: str(section?.heading) || 'This page', body: body.slice(0, 20_000) });
  }
  return out;
}
