import type { ColumnType, Generated } from 'kysely';

/**
 * The tables as Kysely sees them. Names are snake_case on both engines; ids are prefixed text
 * (`page_01h…`), timestamps are ISO 8601 UTC strings with milliseconds, JSON columns are written
 * as JSON text and read back parsed (see connect.ts and sqlite-adapter.ts).
 */

/** A JSON column: read back parsed, written as JSON text (use `json()` from db/json.ts). */
export type Json<T> = ColumnType<T, string, string>;
export type Timestamp = string;

export interface TenantsTable {
  id: string;
  name: string;
  created_at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  name: string | null;
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  key_hash: string;
  /** The first characters of the key, to tell keys apart in listings. */
  key_prefix: string;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
}

export interface ServiceSecretsTable {
  name: string;
  value: string;
  created_at: Timestamp;
}

export interface PagesTable {
  id: string;
  tenant_id: string;
  name: string;
  title: string;
  page_context: string;
  page_type: string;
  status: string;
  brand_id: string;
  actions: Json<unknown[]>;
  action_card_widgets: Json<unknown[]>;
  footer_links: Json<unknown[]>;
  scripts: Json<unknown[]>;
  header_action_id: string | null;
  metadata: Json<Record<string, unknown>>;
  audiences_count: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  archived_at: Timestamp | null;
  deleted_at: Timestamp | null;
}

/** The transactional outbox: one row per domain event, written in the transaction of its cause. */
export interface EventsTable {
  id: string;
  tenant_id: string;
  type: string;
  data: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

export interface IdempotencyKeysTable {
  tenant_id: string;
  operation: string;
  key: string;
  request_hash: string;
  response_status: number;
  response_body: Json<unknown>;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface PersonsTable {
  id: string;
  tenant_id: string;
  name: string;
  /** As given (trimmed); `email_normalized` (lowercase) is the unique identity. */
  email: string | null;
  email_normalized: string | null;
  /** Canonical domain (lib/domain-name.ts). */
  domain: string | null;
  /** E.164; unique per tenant. */
  phone_number: string | null;
  social_profile_url: string | null;
  social_profile_normalized: string | null;
  slug: string;
  /** The canonical domain of the account this person belongs to (its domain, else its work email's). */
  account_domain: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PersonLogsTable {
  id: string;
  tenant_id: string;
  person_id: string;
  source: string;
  type: string;
  payload: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

export interface AccountsTable {
  id: string;
  tenant_id: string;
  /** Canonical domain, unique per tenant. */
  domain: string;
  name: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  latest_activity_at: Timestamp | null;
}

export interface DB {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  service_secrets: ServiceSecretsTable;
  pages: PagesTable;
  events: EventsTable;
  idempotency_keys: IdempotencyKeysTable;
  persons: PersonsTable;
  person_logs: PersonLogsTable;
  accounts: AccountsTable;
}

/** Tables whose rows belong to one tenant: only reachable through a TenantScope. */
export type TenantTable = {
  [K in keyof DB]: DB[K] extends { tenant_id: string } ? K : never;
}[keyof DB];

export type Seq = Generated<number>;
