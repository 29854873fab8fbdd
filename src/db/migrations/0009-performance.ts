import { sql, type Kysely } from 'kysely';
import type { Engine } from '../connect.js';

/**
 * An exact count of each tenant's visible pages that costs one primary-key read (issue 13):
 * `page_counts` is kept by triggers in the same transaction as every insert, delete, or change
 * of `deleted_at` on `pages`, whoever writes (the API, the CLI, the demo, a bulk import), so it
 * is exact whenever a transaction can see it. A tenant without a row has no visible pages.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await sql`create table page_counts (
      tenant_id text primary key references tenants(id),
      visible integer not null
    )`.execute(db);

  if (engine === 'sqlite') {
    const plus = (row: 'new' | 'old') =>
      `insert into page_counts (tenant_id, visible) values (${row}.tenant_id, 1)
         on conflict (tenant_id) do update set visible = visible + 1;`;
    const minus = (row: 'new' | 'old') =>
      `update page_counts set visible = visible - 1 where tenant_id = ${row}.tenant_id;`;
    await sql
      .raw(
        `create trigger page_counts_insert after insert on pages when new.deleted_at is null begin ${plus('new')} end`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger page_counts_delete after delete on pages when old.deleted_at is null begin ${minus('old')} end`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger page_counts_update after update of deleted_at, tenant_id on pages
           when old.deleted_at is null or new.deleted_at is null
         begin
           update page_counts set visible = visible - 1
             where old.deleted_at is null and tenant_id = old.tenant_id;
           insert into page_counts (tenant_id, visible) select new.tenant_id, 1 where new.deleted_at is null
             on conflict (tenant_id) do update set visible = visible + 1;
         end`,
      )
      .execute(db);
  } else {
    await sql
      .raw(
        `create function page_counts_maintain() returns trigger language plpgsql as $$
         begin
           if tg_op <> 'INSERT' then
             if old.deleted_at is null then
               update page_counts set visible = visible - 1 where tenant_id = old.tenant_id;
             end if;
           end if;
           if tg_op <> 'DELETE' then
             if new.deleted_at is null then
               insert into page_counts (tenant_id, visible) values (new.tenant_id, 1)
                 on conflict (tenant_id) do update set visible = page_counts.visible + 1;
             end if;
           end if;
           return null;
         end $$`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger page_counts_maintain after insert or delete or update of deleted_at, tenant_id on pages
           for each row execute function page_counts_maintain()`,
      )
      .execute(db);
  }

  await sql`insert into page_counts (tenant_id, visible)
      select tenant_id, count(*) from pages where deleted_at is null group by tenant_id`.execute(db);
}
