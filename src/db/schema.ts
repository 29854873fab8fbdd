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

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookSubscriptionsTable {
  id: string;
  tenant_id: string;
  url: string;
  events: Json<string[]>;
  active: boolean;
  /** The signing secret, encrypted (src/outbox/secret-box.ts); never stored in clear. */
  secret: string;
  /** After a rotation: the old secret, still signing until `previous_secret_expires_at`. */
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  /** Why it was deactivated: `api`, `operator`, `gone` (410), `failing` (5 days of failures). */
  deactivated_reason: string | null;
  /** Since when every attempt has failed (null after any success). */
  failing_since: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookDeliveriesTable {
  id: string;
  tenant_id: string;
  subscription_id: string;
  /** The event, and the `webhook-id` of every attempt. */
  event_id: string;
  event_type: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** When the next attempt is due; while a worker holds the row, the end of its lease. */
  next_attempt_at: Timestamp;
  last_attempt_at: Timestamp | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}

export interface WebhookAttemptsTable {
  id: string;
  tenant_id: string;
  delivery_id: string;
  attempted_at: Timestamp;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  /** The first bytes of the response body (see RESPONSE_BODY_STORED_BYTES). */
  response_body: string | null;
}

export interface DB {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  service_secrets: ServiceSecretsTable;
  pages: PagesTable;
  events: EventsTable;
  idempotency_keys: IdempotencyKeysTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}

/** Tables whose rows belong to one tenant: only reachable through a TenantScope. */
export type TenantTable = {
  [K in keyof DB]: DB[K] extends { tenant_id: string } ? K : never;
}[keyof DB];

export type Seq = Generated<number>;
