import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { portOf, portRule, type AddressPolicy, type PortRule } from './address-policy.js';
import { dnsResolver, type Resolver } from './dns-resolver.js';

export type { Resolver } from './dns-resolver.js';

/** How much of a response body is read before the connection is dropped. */
const RESPONSE_BODY_READ_BYTES = 64 * 1024;
/** How much of it is kept in the attempt record. */
const RESPONSE_BODY_STORED_BYTES = 2 * 1024;

export interface AttemptOutcome {
  /** The HTTP status, or null when no response came (timeout, refused, blocked, …). */
  statusCode: number | null;
  /** Why there was no usable response: `timeout`, `blocked_address`, `dns: …`, `connection: …`. */
  error: string | null;
  timedOut: boolean;
  durationMs: number;
  /** The first RESPONSE_BODY_STORED_BYTES of the body (UTF-8, possibly cut mid-character). */
  body: string | null;
  /** Retry-After in seconds, when the receiver sent one. */
  retryAfterSeconds: number | null;
  /** The body was longer than what is kept (`body` is its beginning). */
  bodyTruncated: boolean;
}

export interface SafeHttpClientOptions {
  policy: AddressPolicy;
  /** Defaults to a c-ares resolver (`dnsResolver()`): never libuv's thread pool. */
  resolver?: Resolver;
  /** The one deadline of an attempt: waiting for a look-up slot, DNS, connect, the whole answer. */
  timeoutMs: number;
  maxSockets?: number;
  /**
   * Callers that read the answer (not webhooks, which only look at the status) keep up to this
   * many bytes of the body, and the connection is dropped past it. Default: the webhook sizes.
   */
  maxResponseBytes?: number;
  userAgent?: string;
  /** The ports a request may reach (default: 80 and 443 only). */
  ports?: PortRule;
  /** Refuse plain `http:` URLs (production: see `httpsOnlyIn`). */
  httpsOnly?: boolean;
}

/**
 * The one HTTP client every delivery goes through. It resolves the host itself, keeps only the
 * addresses the policy allows, and connects to the first of them by IP (TLS server name and Host
 * header stay the original name), so no second lookup exists that DNS rebinding could answer
 * differently. IP-literal hosts are judged the same way (Node would skip a `lookup` hook for
 * them). Redirects are never followed: a 3xx is an answer like any other non-2xx. The body is
 * read up to RESPONSE_BODY_READ_BYTES and never interpreted.
 */
export class SafeHttpClient {
  readonly #policy: AddressPolicy;
  readonly #ports: PortRule;
  readonly #httpsOnly: boolean;
  readonly #resolver: Resolver;
  readonly #timeoutMs: number;
  readonly #readBytes: number;
  readonly #storedBytes: number;
  readonly #userAgent: string;
  readonly #httpAgent: http.Agent;
  readonly #httpsAgent: https.Agent;

  constructor(options: SafeHttpClientOptions) {
    this.#policy = options.policy;
    this.#ports = options.ports ?? portRule([]);
    this.#httpsOnly = options.httpsOnly ?? false;
    this.#resolver = options.resolver ?? dnsResolver();
    this.#timeoutMs = options.timeoutMs;
    // One byte past the cap proves the answer is longer than the cap.
    this.#readBytes = options.maxResponseBytes === undefined ? RESPONSE_BODY_READ_BYTES : options.maxResponseBytes + 1;
    this.#storedBytes = options.maxResponseBytes ?? RESPONSE_BODY_STORED_BYTES;
    this.#userAgent = options.userAgent ?? 'audience-pages-webhooks/1';
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 64, scheduling: 'lifo' as const };
    this.#httpAgent = new http.Agent(agentOptions);
    this.#httpsAgent = new https.Agent(agentOptions);
  }

  async post(target: string, headers: Record<string, string>, body: string): Promise<AttemptOutcome> {
    const started = performance.now();
    // One deadline for the whole attempt: the look-up counts inside it, it has no time of its own.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error('timeout')), this.#timeoutMs);
    try {
      return await this.#attempt(target, headers, body, deadline.signal, started);
    } finally {
      clearTimeout(timer);
    }
  }

  async #attempt(
    target: string,
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
    started: number,
  ): Promise<AttemptOutcome> {
    const done = (partial: Partial<AttemptOutcome>): AttemptOutcome => ({
      statusCode: null,
      error: null,
      timedOut: false,
      body: null,
      retryAfterSeconds: null,
      bodyTruncated: false,
      ...partial,
      durationMs: Math.round(performance.now() - started),
    });
    const timedOut = () => done({ error: 'timeout', timedOut: true });

    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return done({ error: 'invalid URL' });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return done({ error: 'unsupported scheme' });
    // A URL stored before production refused plain http (or by an older version) is refused here.
    if (this.#httpsOnly && url.protocol !== 'https:') return done({ error: 'insecure_scheme: https is required' });
    // Checked again at send time: a URL stored before the rule (or the port list) changed.
    if (!this.#ports(portOf(url))) return done({ error: `blocked_port: ${portOf(url)} is not an allowed port` });
    const hostname = url.hostname.replace(/^\[|\]$/g, '');

    let candidates: string[];
    if (net.isIP(hostname) !== 0) candidates = [hostname];
    else {
      try {
        candidates = await this.#resolver(hostname, signal);
      } catch (err) {
        if (signal.aborted) return timedOut();
        return done({ error: `dns: ${(err as Error).message}` });
      }
      if (signal.aborted) return timedOut();
    }
    const address = candidates.find((ip) => this.#policy(ip));
    if (address === undefined) {
      return done({ error: `blocked_address: ${hostname} resolves only to non-public addresses` });
    }

    const secure = url.protocol === 'https:';
    const options: https.RequestOptions = {
      method: 'POST',
      host: address,
      family: net.isIP(address),
      port: portOf(url),
      path: `${url.pathname}${url.search}`,
      headers: {
        ...headers,
        host: url.host,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': this.#userAgent,
      },
      agent: secure ? this.#httpsAgent : this.#httpAgent,
      // Never let Node look the name up again: we dial the address we checked.
      lookup: (_host, _opts, cb) => cb(null, address, net.isIP(address)),
    };
    if (secure && net.isIP(hostname) === 0) options.servername = hostname;

    return new Promise<AttemptOutcome>((resolve) => {
      let settled = false;
      const finish = (outcome: AttemptOutcome) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onDeadline);
        resolve(outcome);
      };
      const onDeadline = () => {
        finish(timedOut());
        request.destroy();
      };
      const request = (secure ? https : http).request(options, (response) => {
        const chunks: Buffer[] = [];
        let read = 0;
        const complete = () =>
          finish(
            done({
              statusCode: response.statusCode ?? null,
              body: Buffer.concat(chunks).subarray(0, this.#storedBytes).toString('utf8'),
              retryAfterSeconds: parseRetryAfter(response.headers['retry-after']),
              bodyTruncated: read > this.#storedBytes,
            }),
          );
        response.on('data', (chunk: Buffer) => {
          if (read < this.#storedBytes) chunks.push(chunk);
          read += chunk.length;
          if (read >= this.#readBytes) {
            complete();
            response.destroy();
          }
        });
        response.on('end', complete);
        response.on('error', () => complete());
      });
      signal.addEventListener('abort', onDeadline, { once: true });
      request.on('error', (err) => finish(done({ error: `connection: ${err.message}` })));
      request.end(body);
    });
  }

  close(): void {
    this.#httpAgent.destroy();
    this.#httpsAgent.destroy();
  }
}

/** `Retry-After` as delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return null;
  if (/^\d+$/.test(text.trim())) return Number(text.trim());
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, Math.round((date - now) / 1000));
}
