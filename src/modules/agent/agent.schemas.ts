import { Type, type Static } from '@sinclair/typebox';
import { Envelope, PaginationQuery, ResourceId, Timestamp, strict } from '../../http/schemas.js';

export const AgentMessage = Type.Object(
  {
    role: Type.Union([Type.Literal('visitor'), Type.Literal('agent')], {
      description: "`visitor`: a question as asked; `agent`: the page's answer.",
    }),
    content: Type.String({ description: 'Plain text, as asked or answered.' }),
    sources: Type.Array(
      Type.Object(
        {
          kind: Type.String({ description: '`topic_entry`, `brief` (the page brief) or `section` (of the page).' }),
          label: Type.String({ description: "The topic's title, or the section's heading." }),
        },
        strict,
      ),
      { description: 'Where the answer came from; empty for questions and for answers that found nothing.' },
    ),
    createdAt: Timestamp,
  },
  { $id: 'AgentMessage', ...strict },
);

export const AgentMessageParams = Type.Object({ page_id: ResourceId, audience_session_id: ResourceId }, strict);
export const AgentMessageListQuery = Type.Object({ ...PaginationQuery }, strict);
export const AgentMessageList = Envelope(Type.Ref('AgentMessage'), { $id: 'AgentMessageList' });

export type AgentMessage = Static<typeof AgentMessage>;

export const agentSchemas = [AgentMessage];
