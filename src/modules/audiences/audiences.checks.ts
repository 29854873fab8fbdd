import type { TenantScope } from '../../db/tenant-scope.js';
import { conflict, notFound } from '../../http/errors.js';
import { findPage } from '../pages/index.js';

/** The checks shared by the audience and version services: the page exists, nothing is archived. */

export async function visiblePage(scope: TenantScope, pageId: string, options: { lock?: boolean } = {}) {
  const page = await findPage(scope, pageId, options);
  if (page === undefined) throw notFound('page', pageId);
  return page;
}

export function pageArchived(pageId: string) {
  return conflict('page_archived', `Page "${pageId}" is archived and cannot be changed.`);
}

export function audienceArchived(audienceId: string) {
  return conflict('audience_archived', `Audience "${audienceId}" is archived; restore it first.`);
}
