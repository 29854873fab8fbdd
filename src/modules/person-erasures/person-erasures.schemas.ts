import { Type, type Static } from '@sinclair/typebox';
import { Count, Nullable, NullableTimestamp, ResourceId, Timestamp, strict } from '../../http/schemas.js';

/** Erasing and exporting a person (docs/privacy.md): `DELETE /v0/persons/{id}`, `GET /v0/persons/{id}/export`. */

export const PersonErasureParams = Type.Object({ person_id: ResourceId }, strict);

const ExportedLog = Type.Object(
  {
    personLogId: Type.String(),
    source: Type.String(),
    type: Type.String(),
    payload: Type.Record(Type.String(), Type.Unknown()),
    createdAt: Timestamp,
  },
  strict,
);

const ExportedSubmission = Type.Object(
  {
    formSubmissionId: Type.String(),
    pageId: Type.String(),
    audienceId: Type.String(),
    pageLinkId: Type.String(),
    actionId: Type.String(),
    formId: Type.String(),
    analyticsSessionId: Nullable(Type.String()),
    email: Type.String(),
    name: Nullable(Type.String()),
    phoneNumber: Nullable(Type.String()),
    company: Nullable(Type.String()),
    message: Nullable(Type.String()),
    pageUrl: Type.String(),
    createdAt: Timestamp,
  },
  strict,
);

const ExportedEnrichmentJob = Type.Object(
  {
    formSubmissionId: Type.String(),
    email: Type.String(),
    name: Nullable(Type.String()),
    company: Nullable(Type.String()),
    status: Type.String(),
    provider: Nullable(Type.String()),
    failureReason: Nullable(Type.String()),
    createdAt: Timestamp,
    completedAt: NullableTimestamp,
  },
  strict,
);

const ExportedAudience = Type.Object(
  {
    audienceId: Type.String(),
    pageId: Type.String(),
    personRouteKey: Nullable(Type.String()),
    name: Type.String(),
    createdAt: Timestamp,
    archivedAt: NullableTimestamp,
  },
  strict,
);

const ExportedSession = Type.Object(
  {
    audienceSessionId: Type.String(),
    analyticsSessionId: Type.String(),
    pageId: Type.String(),
    audienceId: Type.String(),
    pageTitle: Type.String(),
    pageUrl: Type.String(),
    formSubmissionId: Type.String(),
    formSubmissionIdentifier: Type.String(),
    formSubmissionEmail: Type.String(),
    formSubmissionPhone: Type.String(),
    sessionStartedAt: Timestamp,
    sessionEndedAt: Timestamp,
    timeSpentSeconds: Type.Number(),
    utmSource: Type.String(),
    utmMedium: Type.String(),
    utmCampaign: Type.String(),
    utmTerm: Type.String(),
    utmContent: Type.String(),
  },
  strict,
);

const ExportedAgentMessage = Type.Object(
  {
    messageId: Type.String(),
    audienceSessionId: Type.String(),
    pageId: Type.String(),
    position: Type.Integer(),
    role: Type.String(),
    content: Type.String(),
    createdAt: Timestamp,
  },
  strict,
);

export const PersonExport = Type.Object(
  {
    exportedAt: Timestamp,
    person: Type.Ref('Person'),
    personLogs: Type.Array(ExportedLog),
    formSubmissions: Type.Array(ExportedSubmission),
    enrichmentJobs: Type.Array(ExportedEnrichmentJob),
    audiences: Type.Array(ExportedAudience, {
      description: 'The audiences addressed to the person (their 1:1 pages).',
    }),
    audienceSessions: Type.Array(ExportedSession, {
      description: 'Visits marked by one of their form submissions, and visits to their own pages.',
    }),
    agentMessages: Type.Array(ExportedAgentMessage, { description: 'Questions and answers of those visits.' }),
  },
  { $id: 'PersonExport', ...strict },
);

/** What the CLI's `person erase` prints (the API answers 204). */
export const PersonErasure = Type.Object(
  {
    personId: Type.String(),
    erasedAt: Timestamp,
    alreadyErased: Type.Boolean(),
    counts: Type.Record(Type.String(), Count),
  },
  strict,
);

export type PersonExport = Static<typeof PersonExport>;
export type PersonErasure = Static<typeof PersonErasure>;

export const personErasureSchemas = [PersonExport];
