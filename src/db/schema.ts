import type { ColumnType } from 'kysely';

/**
 * The tables as Kysely sees them. Names are snake_case on both engines; ids are prefixed text
 * (`page_01h…`), timestamps are ISO 8601 UTC strings with milliseconds, JSON columns are written
 * as JSON text and read back parsed (see connect.ts and sqlite-adapter.ts).
 */

/** A JSON column: read back parsed, written as JSON text (use `json()` from db/json.ts). */
type Json<T> = ColumnType<T, string, string>;
type Timestamp = string;

interface TenantsTable {
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

interface ServiceSecretsTable {
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
  /** The status a restore returns the page to (`draft`/`published`); null unless archived (migration 0070). */
  status_before_archive: ColumnType<string | null, string | null | undefined, string | null>;
  /** Generated versions wait as drafts on a published page (0075; docs/api.md). */
  review_before_publish: ColumnType<boolean, boolean | undefined, boolean>;
}

/** The transactional outbox: one row per domain event, written in the transaction of its cause. */
interface EventsTable {
  id: string;
  tenant_id: string;
  type: string;
  data: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

interface IdempotencyKeysTable {
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
  /** `purged`: its bytes were removed with the last asset that used it (docs/api.md, Assets). */
  status: 'pending' | 'completed' | 'purged';
  upload_expires_at: Timestamp;
  content_type: string | null;
  size: number | null;
  width: number | null;
  height: number | null;
  storage_key: string | null;
  preview_status: 'pending' | 'ready' | 'failed' | null;
  preview_key: string | null;
  /** `PUT`s the upload URL has had, whatever their outcome (docs/api.md, Files). */
  upload_attempts: ColumnType<number, number | undefined, number>;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}

/** Blob store of FILE_STORAGE=database: bytes by storage key (not tenant data by itself). */
interface FileBlobsTable {
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

/** A passage the on-page agent retrieves from (0050, docs/agent.md); `seq` is SQLite's FTS rowid. */
interface AgentPassagesTable {
  id: string;
  tenant_id: string;
  /** The tenant id (topic entries) or a version id (that version's page). */
  scope_key: string;
  scope_token: string;
  source_kind: string;
  source_id: string;
  label: string;
  body: string;
}

/** A question or an answer of a visit (0051, docs/agent.md); `sources` a JSON array. */
interface AgentMessagesTable {
  id: string;
  tenant_id: string;
  session_id: string;
  page_id: string;
  position: number;
  role: string;
  content: string;
  sources: ColumnType<AgentMessageSource[], string, string>;
  created_at: Timestamp;
}

export interface AgentMessageSource {
  kind: string;
  label: string;
}

export interface AudiencesTable {
  id: string;
  tenant_id: string;
  page_id: string;
  computed_name: string;
  custom_name: string | null;
  is_new_page_agent: boolean;
  person_id: string | null;
  person_route_key: string | null;
  /** The account the audience addresses when it addresses no person (0040); null otherwise. */
  account_id: ColumnType<string | null, string | null | undefined, string | null>;
  action_form_id_override: string | null;
  action_form_instructions_override: string | null;
  action_url_override: string | null;
  supplementary_context: string | null;
  metadata_override: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  created_at: Timestamp;
  archived_at: Timestamp | null;
}

/** A version of an audience's page; while runnable (queued, pending, processing) it is also the generation job. */
export interface AudienceVersionsTable {
  id: string;
  tenant_id: string;
  audience_id: string;
  version_number: number;
  status: string;
  is_new_page_agent: boolean;
  supplementary_context: string | null;
  operation_key: string | null;
  queue_duration_ms: number | null;
  created_at: Timestamp;
  queued_at: Timestamp | null;
  became_draft_at: Timestamp | null;
  published_at: Timestamp | null;
  cancelled_at: Timestamp | null;
  obsolete_at: Timestamp | null;
  archived_at: Timestamp | null;
  available_at: Timestamp | null;
  attempts: ColumnType<number, number | undefined, number>;
  lease_token: string | null;
  failure_reason: string | null;
  artifact: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  /** Who made the artifact and what it cost (0025): docs/audience-versions.md#what-is-stored. */
  generator: string | null;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  generation_ms: number | null;
}

export interface AudienceSessionsTable {
  id: string;
  tenant_id: string;
  page_id: string;
  audience_id: string;
  analytics_session_id: string;
  page_title: string;
  page_url: string;
  form_submission_id: string;
  form_submission_identifier: string;
  form_submission_email: string;
  form_submission_phone: string;
  has_conversion: boolean;
  has_form_submit: boolean;
  is_bounce: boolean;
  max_scroll_depth_percentage: number;
  questions_asked_count: number;
  time_spent_seconds: number;
  total_clicks_count: number;
  session_started_at: Timestamp;
  session_ended_at: Timestamp;
  utm_campaign: string;
  utm_content: string;
  utm_medium: string;
  utm_source: string;
  utm_term: string;
}

/** Sessions per page (audience_id '') or audience and hour: the counts behind totalCount. */
interface AudienceSessionHoursTable {
  tenant_id: string;
  page_id: string;
  audience_id: string;
  hour: Timestamp;
  sessions: number;
}

/**
 * A host name a tenant claims for its pages (e.g. go.northwind-traders.com); page links may live on
 * one. It serves only once proven (`verified`) by a DNS TXT record (modules/tenant-domains,
 * tenant-domains.verification.ts); several tenants may hold claims on one name, one verified.
 */
/**
 * The leased-job queue of domain checks (migration 0031): one row per domain; `available_at` is
 * when the next check is due (`due`) or the lease's end (`checking`); `idle`: none planned.
 */
export interface TenantDomainChecksTable {
  tenant_domain_id: string;
  tenant_id: string;
  status: 'due' | 'checking' | 'idle';
  attempts: number;
  lease_token: string | null;
  available_at: Timestamp | null;
}

export interface TenantDomainsTable {
  id: string;
  tenant_id: string;
  /** Lowercase, IDN as punycode (lib/domain-name.ts canonicalHostname). */
  hostname: string;
  created_at: Timestamp;
  /** Removed: its links were deleted with it and its host name is free again. */
  deleted_at: ColumnType<Timestamp | null, Timestamp | null | undefined, Timestamp | null>;
  /** `pending` | `verified` | `expired` | `superseded`; unique among live `verified` rows by host name. */
  status: 'pending' | 'verified' | 'expired' | 'superseded';
  /** The claim's random token: the proof is a TXT record holding it. */
  verification_token: string;
  /** When the claim was last proven after being unverified; null while never proven. */
  verified_at: Timestamp | null;
  /** The last check of the proof: when, its result (`found` | `no_record` | `other_values` | `dns_error`), what was found. */
  checked_at: Timestamp | null;
  check_result: 'found' | 'no_record' | 'other_values' | 'dns_error' | null;
  check_detail: string | null;
  /** A verified domain whose proof was not found since then: it stops serving at this + the grace period. */
  proof_missing_since: Timestamp | null;
  /** A pending claim is checked until then, and expires after. */
  pending_until: Timestamp | null;
  /** The job's due time (null: no check scheduled); checks made in a row without finding the proof. */
  next_check_at: Timestamp | null;
  check_attempts: ColumnType<number, number | undefined, number>;
  /** The leased-job runner's lease on the next check (issue 22), when it holds one. */
  check_lease_token: string | null;
  /** Bumped by every change of whether the row serves (status, deleted_at): the host maps' reload stamp. */
  revision: ColumnType<number, number | undefined, number>;
}

export interface PageLinksTable {
  id: string;
  tenant_id: string;
  tenant_domain_id: string | null;
  /** `tenant_domain_id ?? ''`: the uniqueness key of a path (NULLs are distinct in unique indexes). */
  domain_key: string;
  path: string;
  target_type: string;
  audience_id: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookSubscriptionsTable {
  id: string;
  tenant_id: string;
  url: string;
  events: Json<string[]>;
  active: boolean;
  /** The signing secret, encrypted (src/modules/webhooks/webhooks.secret-box.ts); never stored in clear. */
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
  /** Deleted over the API: invisible everywhere, and inactive (the row stays for its deliveries). */
  deleted_at: Timestamp | null;
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

interface WebhookAttemptsTable {
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

type EnrichmentJobStatus = 'queued' | 'processing' | 'enriched' | 'failed';

/** One enrichment job per form submission (modules/enrichment). */
export interface EnrichmentJobsTable {
  form_submission_id: string;
  tenant_id: string;
  person_id: string;
  page_id: string;
  audience_id: string;
  /** What the visitor typed, as submitted: the job's input even if the person changes meanwhile. */
  email: string;
  name: string | null;
  company: string | null;
  /** The submission created the person (0092): the only person whose empty fields the job may fill. */
  person_created: ColumnType<boolean, boolean | undefined, boolean>;
  status: EnrichmentJobStatus;
  /** Runs started, including ones lost to a crash. */
  attempts: number;
  lease_token: string | null;
  /** While queued: when the next run is due; while processing: the end of the worker's lease. */
  available_at: Timestamp;
  provider: string | null;
  failure_reason: string | null;
  last_error: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  completed_at: Timestamp | null;
}

/**
 * A tenant's language-model tokens on one UTC day (src/llm/token-budget.ts). bigint columns: read
 * as a number on SQLite, as a string on PostgreSQL (use Number()).
 */
interface LlmTokenDaysTable {
  tenant_id: string;
  /** `2026-11-26`: the UTC day. */
  day: string;
  /** What the provider reported (`usage`) for the calls of the day that have ended. */
  used_tokens: ColumnType<number | string, number, number>;
  /** The estimates of the calls still in flight. */
  reserved_tokens: ColumnType<number | string, number, number>;
  calls: ColumnType<number | string, number, number>;
  updated_at: Timestamp;
}

/** src/db/daily-caps.ts: the places handed out per tenant, UTC day and kind. */
interface TenantDailyCountsTable {
  tenant_id: string;
  /** `2026-11-26`: the UTC day. */
  day: string;
  kind: 'sessions' | 'form_submissions';
  granted: ColumnType<number | string, number, number>;
  updated_at: Timestamp;
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

/** A form filled in on a served page (docs/forms.md). */
export interface FormSubmissionsTable {
  id: string;
  tenant_id: string;
  page_id: string;
  audience_id: string;
  page_link_id: string;
  action_id: string;
  /** The action's form id (the audience's `actionFormIdOverride`), else the action id. */
  form_id: string;
  /** The visitor's audience session, when the page script knew it. */
  analytics_session_id: string | null;
  person_id: string;
  email: string;
  name: string | null;
  phone_number: string | null;
  company: string | null;
  message: string | null;
  /** Origin and path of the page the form was on. */
  page_url: string;
  /** `t:<token>` or `c:<content hash>:<window number>`; unique per tenant. */
  dedupe_key: string;
  content_hash: string;
  created_at: Timestamp;
}

/** The audit trail of erased persons (migration 0090, docs/privacy.md): no personal data. */
interface PersonErasuresTable {
  id: string;
  tenant_id: string;
  /** The erased person's id: random, meaningless once the person is gone. */
  person_id: string;
  erased_at: Timestamp;
  /** How many rows of each kind were erased or scrubbed, by table. */
  counts: Json<Record<string, number>>;
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

/** A person who signs in to the console (migration 0065): one tenant, one e-mail address (lower case). */
interface ConsoleUsersTable {
  id: string;
  tenant_id: string;
  email: string;
  /** The console user who invited this one; null when the operator did (CLI, demo). */
  invited_by: string | null;
  created_at: Timestamp;
  last_sign_in_at: Timestamp | null;
}

/** A one-time sign-in link: the SHA-256 of its token, used at most once before it expires. */
interface ConsoleSignInLinksTable {
  token_hash: string;
  tenant_id: string;
  user_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

/** A console session behind its cookie: the SHA-256 of the cookie's token; ends on sign-out or inactivity. */
type AudienceImportStatus = 'queued' | 'running' | 'done' | 'failed';

/** An import the console started (0100): its file until it ends, its progress, its job's lease. */
export interface AudienceImportsTable {
  id: string;
  tenant_id: string;
  page_id: string;
  /** The console user who uploaded the file. */
  user_id: string;
  file_name: string;
  /** The uploaded CSV; null once the import has ended. */
  csv: string | null;
  status: AudienceImportStatus;
  /** Runs started, including ones lost to a crash. */
  attempts: number;
  lease_token: string | null;
  /** While queued: when the next run is due; while running: the end of the worker's lease. */
  available_at: Timestamp | null;
  /** Data rows in the file, once it has been read. */
  rows: number | null;
  /** Rows dealt with: refused while reading, or run through the batch service. */
  rows_done: number;
  /** Rows run through the batch service, in file order: a resumed run starts after them. */
  items_done: number;
  created: number;
  existing: number;
  failed: number;
  /** The refused rows, by line (at most the first 1,000; `failed` counts them all). */
  errors: Json<{ line: number; column: string | null; code: string; message: string }[]>;
  /** Why the whole file was refused (unknown column, archived page) or the job given up. */
  failure: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  finished_at: Timestamp | null;
}

interface ConsoleSessionsTable {
  token_hash: string;
  tenant_id: string;
  user_id: string;
  /** The session's anti-CSRF token, sent back with every form and state-changing request. */
  csrf_token: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  ended_at: Timestamp | null;
}

/** Visible pages per tenant, kept by triggers (migration 0009): the exact count of GET /v0/pages. */
/** A counter per tenant, bumped whenever what its hosts serve changes (modules/serving). */
interface ServingRevisionsTable {
  tenant_id: string;
  revision: number;
}

interface PageCountsTable {
  tenant_id: string;
  visible: number;
}

export interface DB {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  service_secrets: ServiceSecretsTable;
  pages: PagesTable;
  page_counts: PageCountsTable;
  serving_revisions: ServingRevisionsTable;
  persons: PersonsTable;
  person_logs: PersonLogsTable;
  person_erasures: PersonErasuresTable;
  accounts: AccountsTable;
  events: EventsTable;
  idempotency_keys: IdempotencyKeysTable;
  files: FilesTable;
  file_blobs: FileBlobsTable;
  assets: AssetsTable;
  topics: TopicsTable;
  topic_entries: TopicEntriesTable;
  agent_passages: AgentPassagesTable;
  agent_messages: AgentMessagesTable;
  audiences: AudiencesTable;
  audience_versions: AudienceVersionsTable;
  audience_sessions: AudienceSessionsTable;
  audience_session_hours: AudienceSessionHoursTable;
  tenant_domains: TenantDomainsTable;
  tenant_domain_checks: TenantDomainChecksTable;
  page_links: PageLinksTable;
  form_submissions: FormSubmissionsTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  enrichment_jobs: EnrichmentJobsTable;
  console_users: ConsoleUsersTable;
  console_sign_in_links: ConsoleSignInLinksTable;
  console_sessions: ConsoleSessionsTable;
  audience_imports: AudienceImportsTable;
  llm_token_days: LlmTokenDaysTable;
  tenant_daily_counts: TenantDailyCountsTable;
}

/** Tables whose rows belong to one tenant: only reachable through a TenantScope. */
export type TenantTable = {
  [K in keyof DB]: DB[K] extends { tenant_id: string } ? K : never;
}[keyof DB];
