import { Type, type Static } from '@sinclair/typebox';
import {
  Envelope,
  Nullable,
  NullableTimestamp,
  PaginationQuery,
  ResourceId,
  Timestamp,
  strict,
  StringEnum,
} from '../../http/schemas.js';
import { MetadataPatch } from '../pages/index.js';
import { PersonEmail, PersonName, PhoneNumber, SocialProfileUrl } from '../persons/index.js';
import { VERSION_STATUSES } from './audiences.version-lifecycle.js';

const VersionStatus = StringEnum(VERSION_STATUSES, {
  description: 'See docs/audience-versions.md for what each status means and how versions move.',
});

export const AudienceVersion = Type.Object(
  {
    versionId: Type.String(),
    audienceId: Type.String(),
    versionNumber: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
    status: VersionStatus,
    isNewPageAgent: Type.Boolean(),
    supplementaryContext: Nullable(Type.String()),
    queueDurationMs: Nullable(Type.Number({ description: 'Time from queuedAt until a worker first took it.' })),
    createdAt: Timestamp,
    archivedAt: NullableTimestamp,
    becameDraftAt: NullableTimestamp,
    cancelledAt: NullableTimestamp,
    obsoleteAt: NullableTimestamp,
    publishedAt: NullableTimestamp,
    queuedAt: NullableTimestamp,
  },
  { $id: 'AudienceVersion', ...strict },
);

export const AudienceVersionDetail = Type.Object(
  {
    ...AudienceVersion.properties,
    generation: Type.Object(
      {
        generator: Nullable(
          Type.String({ description: 'The generator that made the content (builtin-writer-v1, …).' }),
        ),
        model: Nullable(Type.String({ description: 'The model a model writer called.' })),
        inputTokens: Nullable(Type.Integer({ minimum: 0 })),
        outputTokens: Nullable(Type.Integer({ minimum: 0 })),
        durationMs: Nullable(Type.Number({ minimum: 0, description: 'How long the successful attempt took.' })),
        attempts: Type.Integer({ minimum: 0 }),
        lastFailureReason: Nullable(Type.String()),
      },
      strict,
    ),
    content: Nullable(
      Type.Object(
        {
          contentType: Type.String({ description: 'application/vnd.audience-page.v2+json (or v1 for old versions).' }),
          sha256: Nullable(Type.String()),
          body: Type.Record(Type.String(), Type.Unknown(), { description: 'The generated page as stored.' }),
        },
        { ...strict, description: 'What was generated; null until the version is generated (and if it never was).' },
      ),
    ),
  },
  {
    $id: 'AudienceVersionDetail',
    description: 'Extension: an AudienceVersion with how it was made and what it generated.',
    ...strict,
  },
);

const VersionPreview = Type.Object(
  {
    previewUrl: Type.String({ description: 'Signed URL of the rendered version; the URL is the credential.' }),
    expiresAt: Timestamp,
  },
  { $id: 'VersionPreview', ...strict },
);

export const Audience = Type.Object(
  {
    audienceId: Type.String(),
    pageId: Type.String(),
    status: StringEnum(VERSION_STATUSES, {
      description: '`archived` when the audience is archived, otherwise the status of its latest version.',
    }),
    computedName: Type.String(),
    customName: Nullable(Type.String()),
    effectiveName: Type.String({ description: 'customName when set, otherwise computedName.' }),
    isNewPageAgent: Type.Boolean(),
    personId: Nullable(Type.String()),
    personRouteKey: Nullable(Type.String()),
    accountId: Type.Optional(
      Nullable(
        Type.String({
          description:
            'Extension: the account the audience addresses when it addresses no person (POST …/audiences); null otherwise.',
        }),
      ),
    ),
    actionFormIdOverride: Nullable(Type.String()),
    actionFormInstructionsOverride: Nullable(Type.String()),
    actionUrlOverride: Nullable(Type.String()),
    supplementaryContext: Nullable(Type.String()),
    createdAt: Timestamp,
    archivedAt: NullableTimestamp,
    latestVersion: Type.Ref('AudienceVersion'),
    publishedVersion: Type.Ref('AudienceVersion'),
    effectiveMetadata: Type.Optional(Type.Ref('Metadata')),
    metadataOverride: Type.Optional(Type.Ref('Metadata')),
  },
  { $id: 'Audience', ...strict },
);

export const AudienceListParams = Type.Object({ page_id: ResourceId }, strict);
export const AudienceParams = Type.Object({ page_id: ResourceId, audience_id: ResourceId }, strict);
export const VersionParams = Type.Object(
  { page_id: ResourceId, audience_id: ResourceId, version_id: ResourceId },
  strict,
);
export const VersionListQuery = Type.Object({ ...PaginationQuery }, strict);
export const VersionActionBody = Type.Object({}, { ...strict, description: 'An empty JSON object.' });
export const VersionPublishBody = Type.Object(
  {
    idempotencyKey: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          'As on POST /v0/person_logs: a retry of a rollback answers the first one, and copies nothing twice.',
      }),
    ),
  },
  strict,
);
export const AudienceListQuery = Type.Object({ ...PaginationQuery }, strict);
export const AudienceRestoreBody = Type.Object({}, { ...strict, description: 'An empty JSON object.' });
export const VersionCreateBody = Type.Object(
  {
    operationKey: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: 'Repeating a key for the same audience returns the version the first request created.',
      }),
    ),
  },
  strict,
);

export const PageRegenerateBody = Type.Object(
  {
    operationKey: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          'Repeating a key for the same page returns the versions the first request made, and makes none. ' +
          'Keys share one namespace per audience with endpoint 6.',
      }),
    ),
  },
  strict,
);

export const PageRegeneration = Type.Object(
  {
    pageId: Type.String(),
    queuedCount: Type.Integer({ minimum: 0, description: 'How many versions were queued (one per live audience).' }),
    versionIds: Type.Array(Type.String(), { description: 'The queued versions, by audience id.' }),
  },
  { $id: 'PageRegeneration', ...strict },
);

/** Limits of the audience fields a tenant writes (docs/api.md, Creating and changing audiences). */
export const AUDIENCE_LIMITS = {
  name: 255,
  text: 10_000,
  url: 2048,
  formId: 100,
  routeKey: 128,
} as const;

/**
 * A person route key is one path segment a visitor's URL ends with: unreserved URL characters
 * only, not starting with `.` (so never `.` or `..`: docs/pages-runtime.md, Routing).
 */
const ROUTE_KEY_PATTERN = '^[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,127}$';

/** The fields both create and PATCH accept (one definition, one set of limits). */
const audienceContent = {
  customName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: AUDIENCE_LIMITS.name }))),
  supplementaryContext: Type.Optional(Nullable(Type.String({ maxLength: AUDIENCE_LIMITS.text }))),
  actionUrlOverride: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: AUDIENCE_LIMITS.url }))),
  actionFormIdOverride: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: AUDIENCE_LIMITS.formId }))),
  actionFormInstructionsOverride: Type.Optional(Nullable(Type.String({ maxLength: AUDIENCE_LIMITS.text }))),
  metadataOverride: Type.Optional(MetadataPatch),
  isNewPageAgent: Type.Optional(Type.Boolean()),
};

/** What a create body names: whom the audience addresses, its route key, its content. */
const audienceCreateFields = {
  personId: Type.Optional(Nullable(ResourceId)),
  accountId: Type.Optional(Nullable(ResourceId)),
  personRouteKey: Type.Optional(
    Nullable(
      Type.String({
        pattern: ROUTE_KEY_PATTERN,
        description:
          'The last segment of the person’s own URL under a link of the page. Omitted or null: a random, ' +
          'unguessable key (22 characters, 128 bits) is generated.',
      }),
    ),
  ),
  ...audienceContent,
};

export const AudienceCreateBody = Type.Object(
  { ...audienceCreateFields, idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) },
  strict,
);

/** Limits of the batch endpoint and the CSV import (docs/api.md, Importing audiences). */
const BATCH_LIMITS = { items: 1000, accountName: 255, domain: 2048 } as const;

/**
 * One item of `POST …/audiences/batch` (and one row of a CSV import): a create body plus whom it
 * addresses by identity, found or created with the rules of `POST /v0/person_logs`.
 */
export const AudienceBatchItem = Type.Object(
  {
    ...audienceCreateFields,
    person: Type.Optional(
      Type.Object(
        {
          email: Type.Optional(PersonEmail),
          name: Type.Optional(PersonName),
          phoneNumber: Type.Optional(PhoneNumber),
          socialProfileUrl: Type.Optional(SocialProfileUrl),
        },
        {
          ...strict,
          description:
            'Found or created exactly as by POST /v0/person_logs: by email, else phone number, else social ' +
            'profile; a match only gains the identities it lacks (its name is never changed).',
        },
      ),
    ),
    account: Type.Optional(
      Type.Object(
        {
          domain: Type.Optional(Type.String({ minLength: 1, maxLength: BATCH_LIMITS.domain })),
          name: Type.Optional(Type.String({ minLength: 1, maxLength: BATCH_LIMITS.accountName })),
        },
        {
          ...strict,
          description:
            'The account of `domain` (else of the person’s work email), created when there is none; `name` ' +
            'names it only when it has no name yet. Without a person, the audience addresses this account.',
        },
      ),
    ),
  },
  strict,
);

export const AudienceBatchBody = Type.Object(
  { items: Type.Array(AudienceBatchItem, { minItems: 1, maxItems: BATCH_LIMITS.items }) },
  strict,
);

const BATCH_OUTCOMES = ['created', 'existing', 'error'] as const;

/** A problem document of one item: as every problem, without the request's `instance` and `requestId`. */
const BatchItemProblem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String(),
    errors: Type.Array(Type.Object({ path: Type.String(), message: Type.String() })),
  },
  { additionalProperties: true },
);

export const AudienceBatchResult = Type.Object(
  {
    pageId: Type.String(),
    createdCount: Type.Integer({ minimum: 0 }),
    existingCount: Type.Integer({ minimum: 0 }),
    errorCount: Type.Integer({ minimum: 0 }),
    items: Type.Array(
      Type.Object(
        {
          index: Type.Integer({ minimum: 0, description: 'The item’s position in the request.' }),
          outcome: StringEnum(BATCH_OUTCOMES, {
            description:
              '`created`: a new audience; `existing`: the audience this identity already has on the page, ' +
              'unchanged; `error`: nothing of this item was written (see `problem`).',
          }),
          audienceId: Nullable(Type.String()),
          personId: Nullable(Type.String()),
          accountId: Nullable(Type.String()),
          audience: Type.Union([Type.Ref('Audience'), Type.Null()]),
          problem: Type.Union([BatchItemProblem, Type.Null()]),
        },
        strict,
      ),
    ),
  },
  { $id: 'AudienceBatchResult', ...strict },
);

export const AudiencePatchBody = Type.Object(audienceContent, strict);
export const AudienceArchiveBody = Type.Object({}, { ...strict, description: 'An empty JSON object.' });

export const AudienceList = Envelope(Type.Ref('Audience'), { $id: 'AudienceList' });
export const AudienceVersionList = Envelope(Type.Ref('AudienceVersion'), { $id: 'AudienceVersionList' });

export type AudienceVersion = Static<typeof AudienceVersion>;
export type Audience = Static<typeof Audience>;
export type AudienceVersionDetail = Static<typeof AudienceVersionDetail>;
export type AudienceCreateBody = Static<typeof AudienceCreateBody>;
export type AudiencePatchBody = Static<typeof AudiencePatchBody>;
export type VersionCreateBody = Static<typeof VersionCreateBody>;
export type PageRegenerateBody = Static<typeof PageRegenerateBody>;
export type PageRegeneration = Static<typeof PageRegeneration>;
export type AudienceBatchItem = Static<typeof AudienceBatchItem>;
export type AudienceBatchResult = Static<typeof AudienceBatchResult>;

export const audienceSchemas = [
  AudienceVersion,
  AudienceVersionDetail,
  VersionPreview,
  Audience,
  PageRegeneration,
  AudienceBatchResult,
];
