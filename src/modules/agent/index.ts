/** What other modules may use of the on-page agent: keeping its knowledge in step, and asking. */
export { forgetTopicEntries, indexTopicEntry, indexVersionPage, relabelTopicEntries } from './agent.knowledge.js';
export { askQuestion, type AgentModel, type AnswerStream, type AskedPage } from './agent.service.js';
export type { Answer } from './agent.answer.js';
