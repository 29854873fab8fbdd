import { typeid } from 'typeid-js';

/**
 * Every id is a TypeID: a lowercase prefix naming the resource, `_`, and 26 characters of
 * Crockford base32 holding a UUIDv7 (time-sortable, 74 random bits). The spec's own account id
 * pattern `^account_[a-z0-9]{26}$` is this form; every resource uses it with its own prefix.
 */
const ID_PREFIXES = {
  tenant: 'tenant',
  apiKey: 'key',
  page: 'page',
  action: 'action',
  event: 'evt',
  person: 'person',
  personLog: 'plog',
  account: 'account',
  audience: 'audience',
  audienceVersion: 'version',
  audienceSession: 'session',
  pageLink: 'link',
  tenantDomain: 'domain',
  asset: 'asset',
  file: 'file',
  topic: 'topic',
  topicEntry: 'entry',
  webhookSubscription: 'whsub',
  webhookDelivery: 'whdel',
  webhookAttempt: 'whatt',
  formSubmission: 'formsub',
  agentMessage: 'msg',
  consoleUser: 'user',
  personErasure: 'erasure',
  audienceImport: 'import',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

export function newId(kind: IdKind): string {
  return typeid(ID_PREFIXES[kind]).toString();
}
