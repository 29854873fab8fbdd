import { Type, type Static } from '@sinclair/typebox';
import { Envelope, PaginationQuery, ResourceId, Timestamp, strict } from '../../http/schemas.js';

export const AudienceSession = Type.Object(
  {
    audienceSessionId: Type.String(),
    analyticsSessionId: Type.String(),
    audienceId: Type.String(),
    pageId: Type.String(),
    pageTitle: Type.String(),
    pageUrl: Type.String(),
    formSubmissionId: Type.String(),
    formSubmissionIdentifier: Type.String(),
    formSubmissionEmail: Type.String(),
    formSubmissionPhone: Type.String(),
    hasConversion: Type.Boolean(),
    hasFormSubmit: Type.Boolean(),
    isBounce: Type.Boolean(),
    maxScrollDepthPercentage: Type.Number(),
    questionsAskedCount: Type.Number(),
    timeSpentSeconds: Type.Number(),
    totalClicksCount: Type.Number(),
    sessionStartedAt: Timestamp,
    sessionEndedAt: Timestamp,
    utmCampaign: Type.String(),
    utmContent: Type.String(),
    utmMedium: Type.String(),
    utmSource: Type.String(),
    utmTerm: Type.String(),
  },
  { $id: 'AudienceSession', ...strict },
);

const DateTime = Type.String({
  format: 'date-time',
  description: 'ISO 8601 date and time with a zone, e.g. 2026-11-01T00:00:00Z',
});

export const AudienceSessionParams = Type.Object({ page_id: ResourceId }, strict);
export const AudienceSessionQuery = Type.Object(
  {
    ...PaginationQuery,
    startDate: Type.Optional({ ...DateTime, description: 'Sessions started at or after this instant.' }),
    endDate: Type.Optional({ ...DateTime, description: 'Sessions started before this instant.' }),
    audienceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  strict,
);

export const AudienceSessionList = Envelope(Type.Ref('AudienceSession'), { $id: 'AudienceSessionList' });

export type AudienceSession = Static<typeof AudienceSession>;
export type AudienceSessionQuery = Static<typeof AudienceSessionQuery>;

export const audienceSessionSchemas = [AudienceSession];
