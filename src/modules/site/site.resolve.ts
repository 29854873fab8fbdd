import type { Database } from '../../db/connect.js';
import { normalizePath } from '../page-links/index.js';
import { findCandidates, type Candidate } from './site.queries.js';

/**
 * Which page a request for `path` on a tenant host gets (docs/pages-runtime.md, Routing):
 *
 * 1. the live link at the path on the host's domain, else the tenant's link at the path on no
 *    domain: its audience's published version;
 * 2. else, for `/{link path}/{personRouteKey}`, the link at the parent path (domain first, then no
 *    domain) and the audience of the same page with that route key.
 *
 * A link whose audience or page is archived answers 410 Gone; a deleted page, an unknown path,
 * an unknown or archived key and anything unparseable answer 404 — the same 404 in every case,
 * after the same two statements, so route keys cannot be told from missing pages.
 */
export type Resolution =
  | {
      status: 200;
      tenantId: string;
      versionId: string;
      audienceId: string;
      pageId: string;
      pageLinkId: string;
      /** A 1:1 page: its audience addresses a person (or has a person route key). */
      personal: boolean;
    }
  | { status: 404 }
  | { status: 410 };

const NOT_FOUND: Resolution = { status: 404 };

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The normalized path, its parent and its last segment (decoded), or null when it is no link path. */
function splitPath(rawPath: string): { path: string; parent: string; key: string } | null {
  let path: string;
  try {
    path = normalizePath(rawPath, '/path');
  } catch {
    return null;
  }
  if (path === '/') return { path, parent: '', key: '' };
  const slash = path.lastIndexOf('/');
  return { path, parent: slash === 0 ? '/' : path.slice(0, slash), key: safeDecode(path.slice(slash + 1)) };
}

const rank = (c: Candidate) => (c.kind === 'exact' ? 0 : 2) + (c.domain_key === '' ? 1 : 0);

const servable = (c: Candidate) =>
  c.page_deleted_at === null &&
  c.page_status !== 'archived' &&
  c.audience_archived_at === null &&
  c.version_id !== null;

/** The answer from the candidate rows (pure; see the rules above). */
function choose(candidates: Candidate[]): Resolution {
  const sorted = [...candidates].sort(
    (a, b) => rank(a) - rank(b) || (a.audience_id < b.audience_id ? -1 : a.audience_id > b.audience_id ? 1 : 0),
  );
  const exact = sorted.find((c) => c.kind === 'exact');
  // A person's page that is archived is simply not there: no hint that the key ever existed.
  const chosen = exact ?? sorted.find((c) => c.kind === 'key' && servable(c));
  if (chosen === undefined || chosen.page_deleted_at !== null) return NOT_FOUND;
  if (chosen.page_status === 'archived' || chosen.audience_archived_at !== null) return { status: 410 };
  if (chosen.version_id === null) return NOT_FOUND;
  return {
    status: 200,
    tenantId: chosen.tenant_id,
    versionId: chosen.version_id,
    audienceId: chosen.audience_id,
    pageId: chosen.page_id,
    pageLinkId: chosen.link_id,
    personal: chosen.person_id !== null || chosen.person_route_key !== null,
  };
}

export async function resolvePage(database: Database, host: string, rawPath: string): Promise<Resolution> {
  const parts = splitPath(rawPath);
  if (parts === null) return NOT_FOUND;
  return choose(await findCandidates(database.kysely, database.engine, { host, ...parts }));
}
