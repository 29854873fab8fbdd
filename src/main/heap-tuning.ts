import v8 from 'node:v8';

/**
 * Turns off V8's allocation-site pretenuring in the server process (ADR 0006, sixth pass).
 *
 * Under load on PostgreSQL, V8 decided within seconds to allocate pg's per-query `rows` arrays in
 * the old generation, and never changed its mind: from then on every row pushed into such an
 * array was reachable from the old generation, survived every scavenge and was promoted, so a
 * 20-row list spent 80 µs per request in GC against 11 µs for the bare stack. Nothing in a request
 * lives longer than the request, which is the case pretenuring is not for.
 *
 * Imported first by server.ts; V8 reads the flag when it decides, so setting it at startup takes
 * effect. An explicit `--allocation-site-pretenuring` on the command line wins.
 */
if (!process.execArgv.some((flag) => flag.endsWith('allocation-site-pretenuring'))) {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
