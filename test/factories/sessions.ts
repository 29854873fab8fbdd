import type { TenantScope } from '../../src/db/tenant-scope.js';
import { seededRandom } from '../../src/lib/random.js';
import { makeSession } from '../../src/modules/audience-sessions/audience-sessions.demo.js';
import { insertSessions } from '../../src/modules/audience-sessions/audience-sessions.queries.js';

/**
 * `count` realistic sessions (the demo's mix of bounces, scrolls, forms, conversions and UTM
 * sources) of an audience, started at `startsMs[i % startsMs.length]`, written the one way
 * sessions are written (with their hourly counts).
 */
export async function makeSessions(
  scope: TenantScope,
  target: { pageId: string; audienceId: string },
  startsMs: readonly number[],
  count: number,
  seed = 1,
): Promise<void> {
  const random = seededRandom(seed);
  const rows = Array.from({ length: count }, (_, i) => {
    const row = makeSession(
      random,
      { ...target, pageTitle: 'Welcome', pageUrl: 'https://pages.example/p' },
      startsMs[i % startsMs.length]! + i * 1000,
    );
    return { ...row, questions_asked_count: i % 4 };
  });
  await insertSessions(scope, rows);
}
