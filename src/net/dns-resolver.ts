import dns from 'node:dns';
import PQueue from 'p-queue';
import { isLocalhostName } from '../lib/domain-name.js';

/**
 * Turns a host name into the addresses to judge and dial. It is handed the attempt's deadline
 * (`signal`) and must give up when it fires.
 */
export type Resolver = (hostname: string, signal: AbortSignal) => Promise<string[]>;

/** Look-ups in flight at once per resolver; more wait in line (inside their own deadline). */
const DNS_MAX_IN_FLIGHT = 32;
/** c-ares: how long one query waits for a name server before trying again, and how often it tries. */
const DNS_QUERY_TIMEOUT_MS = 2_000;
const DNS_QUERY_TRIES = 3;

export interface DnsResolverOptions {
  /** Name servers (`ip`, `ip:port`, `[ipv6]:port`: DNS_SERVERS); the system's (`/etc/resolv.conf`) when unset. */
  servers?: readonly string[];
  maxInFlight?: number;
  queryTimeoutMs?: number;
  tries?: number;
}

/**
 * Looks up the TXT records at a name: each record's strings joined (RFC 7208 style). Rejects with
 * the c-ares error (`code` ENODATA: the name has no TXT record; ENOTFOUND: the name does not exist;
 * ESERVFAIL, EREFUSED, ETIMEOUT, …) or the signal's reason at the deadline.
 */
export type TxtResolver = (name: string, signal: AbortSignal) => Promise<string[]>;

/**
 * Look-ups with c-ares (`dns.Resolver`), never with `dns.lookup`: `getaddrinfo` runs on libuv's
 * small thread pool (4 threads, shared with file I/O, sharp and zlib), cannot be cancelled, and a
 * name server that never answers would hold a thread per look-up for as long as the C library
 * likes. c-ares queries are sockets on the event loop; each look-up gets its own channel so that
 * `cancel()` at the deadline ends exactly its own queries. At most `maxInFlight` run at once; the
 * ones waiting in line still end at their deadline.
 */
function lookups(options: DnsResolverOptions) {
  const queue = new PQueue({ concurrency: options.maxInFlight ?? DNS_MAX_IN_FLIGHT });
  const servers = options.servers ? [...options.servers] : undefined;
  const resolverOptions = {
    timeout: options.queryTimeoutMs ?? DNS_QUERY_TIMEOUT_MS,
    tries: options.tries ?? DNS_QUERY_TRIES,
  };

  const runNow = async <T>(signal: AbortSignal, query: (resolver: dns.promises.Resolver) => Promise<T>) => {
    signal.throwIfAborted();
    const resolver = new dns.promises.Resolver(resolverOptions);
    if (servers) resolver.setServers(servers);
    const cancel = () => resolver.cancel();
    signal.addEventListener('abort', cancel, { once: true });
    try {
      const answer = await query(resolver);
      signal.throwIfAborted();
      return answer;
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  };

  return <T>(signal: AbortSignal, query: (resolver: dns.promises.Resolver) => Promise<T>): Promise<T> => {
    // p-queue only notices an abort when the waiting task's turn comes: race it so that a look-up
    // waiting in line still ends at the deadline.
    const task = queue.add(() => runNow(signal, query), { signal, throwOnTimeout: true });
    task.catch(() => undefined); // when the race below ends first, its late rejection is expected
    return Promise.race([task as Promise<T>, aborted(signal)]);
  };
}

/**
 * Resolves addresses (`resolve4` and `resolve6` side by side) for the SSRF-safe HTTP client.
 * `localhost` and `*.localhost` are loopback by definition (RFC 6761) and never asked of DNS;
 * `/etc/hosts` is not read (a webhook URL names a host on the public DNS).
 */
export function dnsResolver(options: DnsResolverOptions = {}): Resolver {
  const lookUp = lookups(options);
  return async (hostname, signal) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (isLocalhostName(name)) return ['127.0.0.1', '::1'];
    return lookUp(signal, async (resolver) => {
      const answers = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
      signal.throwIfAborted();
      const addresses = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
      if (addresses.length > 0) return addresses;
      const failure = answers.find((a): a is PromiseRejectedResult => a.status === 'rejected');
      throw failure ? (failure.reason as Error) : new Error(`${hostname} has no address`);
    });
  };
}

/** Resolves TXT records (domain ownership proofs), with the same channels, line and deadline as addresses. */
export function txtResolver(options: DnsResolverOptions = {}): TxtResolver {
  const lookUp = lookups(options);
  return (name, signal) =>
    lookUp(signal, async (resolver) => (await resolver.resolveTxt(name)).map((chunks) => chunks.join('')));
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    else signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
}
