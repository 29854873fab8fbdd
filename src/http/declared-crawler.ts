import { isbot } from 'isbot';
import { LRUCache } from 'lru-cache';

/** User agents whose answer is kept (isbot's one large regular expression costs ~5 µs a call). */
const AGENTS_KEPT = 1_000;
/** Longer user agents are answered anew each time (they do not fill the cache). */
const AGENT_KEPT_MAX_LENGTH = 512;
const answers = new LRUCache<string, boolean>({ max: AGENTS_KEPT });

/**
 * Whether a User-Agent says it is a bot (crawler, monitor, HTTP library): the `isbot` package's
 * answer, remembered per user agent, since a page host sees the same few browsers' strings again
 * and again.
 */
export function declaredCrawler(userAgent: string | undefined): boolean {
  const agent = userAgent ?? '';
  let answer = answers.get(agent);
  if (answer === undefined) {
    answer = isbot(agent);
    if (agent.length <= AGENT_KEPT_MAX_LENGTH) answers.set(agent, answer);
  }
  return answer;
}
