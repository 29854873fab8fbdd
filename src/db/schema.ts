import type { ColumnType } from 'kysely';

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

/** An uploaded file: a row from `POST /v0/files`, completed when its bytes arrive and pass validation. */
export interface FilesTable {
  id: string;
  tenant_id: string;
  filename: string;
  declared_content_type: string;
  declared_size: number;
  status: 'pending' | 'completed';
  upload_expires_at: Timestamp;
  content_type: string | null;
  size: number | null;
  width: number | null;
  height: number | null;
  storage_key: string | null;
  preview_status: 'pending' | 'ready' | 'failed' | null;
  preview_key: string | null;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}

/** Blob store of FILE_STORAGE=database: bytes by storage key (not tenant data by itself). */
export interface FileBlobsTable {
  key: string;
  bytes: Buffer;
  created_at: Timestamp;
}

export interface AssetsTable {
  id: string;
  tenant_id: string;
  asset_type: string;
  name: string;
  purpose: string;
  file_id: string;
  parent_asset_id: string | null;
  hidden: boolean;
  tags: Json<string[]>;
  ai_description: string | null;
  described_at: ColumnType<Timestamp | null, Timestamp | null | undefined, Timestamp | null>;
  lifecycle_state: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  trashed_at: Timestamp | null;
  deleted_at: Timestamp | null;
}

export interface TopicsTable {
  id: string;
  tenant_id: string;
  title: string;
  purpose: string | null;
  sort_order: number;
  is_default: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface TopicEntriesTable {
  id: string;
  tenant_id: string;
  topic_id: string;
  sort_order: number;
  content_type: string;
  content: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DB {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  service_secrets: ServiceSecretsTable;
  pages: PagesTable;
  events: EventsTable;
  idempotency_keys: IdempotencyKeysTable;
  files: FilesTable;
  file_blobs: FileBlobsTable;
  assets: AssetsTable;
  topics: TopicsTable;
  topic_entries: TopicEntriesTable;
}

/** Tables whose rows belong to one tenant: only reachable through a TenantScope. */
export type TenantTable = {
  [K in keyof DB]: DB[K] extends { tenant_id: string } ? K : never;
}[keyof DB];
