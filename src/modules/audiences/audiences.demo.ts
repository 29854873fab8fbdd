import type { DemoContext } from '../module.js';
import * as q from './audiences.queries.js';
import { archiveAudience, seedAudience, type NewAudience } from './audiences.service.js';
import { generateNow } from './audiences.generation.js';
import type { VersionGenerator } from './audiences.generator.js';
import { createVersionIn } from './audiences.versions.js';

/** The audiences' people, in the order the person-logs demo creates them (Jane, Sam, Pat, Alex). */
const PEOPLE = [
  {
    computedName: 'Acme Corp · VP Sales',
    personRouteKey: 'jane-doe-acme',
    customName: null,
    supplementaryContext:
      'Your sales team already sends a page per account by hand. Northwind keeps that personal touch and takes the copying and pasting off their plate.',
  },
  {
    computedName: 'Globex · Head of RevOps',
    personRouteKey: 'sam-lee-globex',
    customName: 'Globex expansion',
    supplementaryContext:
      'Globex is opening three regional sales teams. Each region gets its own pages, its own pricing notes and its own reports, on one shared brand.',
  },
  { computedName: 'Initech · CFO', personRouteKey: 'pat-kim-initech', customName: null, supplementaryContext: null },
  {
    computedName: 'Umbrella · IT Director',
    personRouteKey: 'alex-ray-umbrella',
    customName: null,
    supplementaryContext:
      'Single sign-on, audit logs and data kept in the EU are part of every plan Umbrella can choose.',
  },
];

/**
 * A new version of the audience; with `generate`, generated in the same transaction, before a
 * running service's worker (woken by the commit) could take it.
 */
async function newVersion(
  ctx: DemoContext,
  pageId: string,
  audienceId: string,
  generate?: { generator?: VersionGenerator },
) {
  return ctx.scope.transaction(async (tx) => {
    await q.findAudience(tx, pageId, audienceId, { lock: true });
    const version = await createVersionIn(tx, ctx.clock, { pageId, audienceId, operationKey: null });
    if (generate !== undefined) await generateNow(tx, ctx.clock, version.versionId, generate);
    return version;
  });
}

/**
 * Audiences on the demo pages with versions in every state a tenant meets: published only, a
 * newer draft or queued version, a superseded (cancelled) one, one waiting for a retry (pending),
 * and an archived audience.
 */
export async function audiencesDemo(ctx: DemoContext) {
  const pageIds = (ctx.created.pages?.pageIds as string[] | undefined) ?? [];
  // The persons demo runs first (modules/index.ts): each demo person gets audiences that address them.
  const personIds = (ctx.created.personLogs?.personIds as string[] | undefined) ?? [];
  const audienceIds: string[] = [];
  const livePages = pageIds.slice(0, 5); // the last demo page is archived
  for (const [p, pageId] of livePages.entries()) {
    for (const [i, person] of PEOPLE.entries()) {
      if ((p + i) % 3 === 2) continue;
      const input: NewAudience = {
        pageId,
        ...person,
        personId: personIds[i] ?? null,
        isNewPageAgent: i % 2 === 0,
        actionUrlOverride: i === 1 ? `https://northwind.example/book?ref=${person.personRouteKey}` : null,
        metadataOverride: i === 1 ? { title: `Northwind for ${person.computedName.split(' ·')[0]}` } : null,
      };
      const { audienceId } = await seedAudience(ctx.scope, ctx.clock, input);
      audienceIds.push(audienceId);
      switch (audienceIds.length % 6) {
        case 2: {
          // a newer version generated: draft on a draft page, published on a published page
          await newVersion(ctx, pageId, audienceId, {});
          break;
        }
        case 3: {
          // a superseded version (cancelled) and the one that replaced it, waiting in the queue
          await newVersion(ctx, pageId, audienceId);
          await newVersion(ctx, pageId, audienceId);
          break;
        }
        case 4: {
          // a failed first attempt: pending, retried by the worker
          const timedOut = { name: 'demo', generate: () => Promise.reject(new Error('demo: the generator timed out')) };
          await newVersion(ctx, pageId, audienceId, { generator: timedOut });
          break;
        }
        case 0:
          await archiveAudience(ctx.scope, ctx.clock, audienceId);
          break;
      }
    }
  }
  return { audienceIds };
}
