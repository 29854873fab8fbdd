/** What other modules may use of the on-page agent: keeping its knowledge in step, and retrieval. */
export { forgetTopicEntries, indexTopicEntry, indexVersionPage, relabelTopicEntries } from './agent.knowledge.js';
