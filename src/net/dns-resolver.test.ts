import dgram from 'node:dgram';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { allowEverything, isGlobalUnicast } from './address-policy.js';
import { startTestNameServer } from '../../test/dns-server.js';
import { dnsResolver, txtResolver } from './dns-resolver.js';
import { SafeHttpClient } from './http-client.js';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const x of open.splice(0)) await x.close();
});

/** A "name server" on a local UDP port that records the names asked and never answers. */
async function silentNameServer() {
  const socket = dgram.createSocket('udp4');
  const names: string[] = [];
  socket.on('message', (msg) => names.push(questionName(msg)));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const server = { address: `127.0.0.1:${(socket.address() as AddressInfo).port}`, names, close: () => socket.close() };
  open.push(server);
  return server;
}

function questionName(msg: Buffer): string {
  const labels: string[] = [];
  for (let at = 12; at < msg.length && msg[at] !== 0; at += msg[at]! + 1) {
    labels.push(msg.toString('latin1', at + 1, at + 1 + msg[at]!));
  }
  return labels.join('.');
}

async function receiver(host: string, delayMs = 0) {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => setTimeout(() => res.writeHead(204).end(), delayMs));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  open.push({ close });
  return (server.address() as AddressInfo).port;
}

function client(options: ConstructorParameters<typeof SafeHttpClient>[0]) {
  // The receivers here listen on ephemeral ports; the port rule has tests of its own.
  const c = new SafeHttpClient({ ports: () => true, ...options });
  open.push(c);
  return c;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('webhook DNS', () => {
  it('gives up on a name server that never answers at the attempt deadline, and cancels its queries', async () => {
    const ns = await silentNameServer();
    const http = client({ policy: allowEverything, resolver: dnsResolver({ servers: [ns.address] }), timeoutMs: 800 });
    const started = performance.now();
    const outcome = await http.post('http://hooks.never-answers.test/hook', {}, '{}');
    const elapsed = performance.now() - started;
    expect(outcome).toMatchObject({ statusCode: null, error: 'timeout', timedOut: true });
    expect(elapsed).toBeGreaterThanOrEqual(790);
    expect(elapsed).toBeLessThan(1_500);
    // c-ares asked our server (A and AAAA) ...
    expect(ns.names.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ns.names)).toEqual(new Set(['hooks.never-answers.test']));
    // ... and was cancelled: no retry of the query comes after the deadline (the next would be
    // due 2 s after the first).
    const asked = ns.names.length;
    await sleep(2_500);
    expect(ns.names.length).toBe(asked);
  });

  it('leaves the thread pool free: file reads stay fast while many look-ups hang', async () => {
    const ns = await silentNameServer();
    const http = client({
      policy: allowEverything,
      resolver: dnsResolver({ servers: [ns.address] }),
      timeoutMs: 1_500,
    });
    const file = path.join(os.tmpdir(), `dns-pool-${process.pid}.bin`);
    await fs.writeFile(file, Buffer.alloc(64 * 1024, 1));
    // Far more hanging look-ups than libuv has threads (4): with dns.lookup these would hold them all.
    const hanging = Array.from({ length: 16 }, (_, i) => http.post(`http://h${i}.never-answers.test/`, {}, '{}'));
    await sleep(100);
    const reads: number[] = [];
    for (let i = 0; i < 10; i++) {
      const started = performance.now();
      await fs.readFile(file);
      await fs.stat(file);
      reads.push(performance.now() - started);
    }
    expect(Math.max(...reads)).toBeLessThan(250);
    const outcomes = await Promise.all(hanging);
    for (const outcome of outcomes) expect(outcome.error).toBe('timeout');
    await fs.rm(file, { force: true });
  });

  it('counts DNS time inside the one deadline (no separate look-up timeout on top)', async () => {
    const port = await receiver('127.0.0.1', 600);
    const slowDns = async () => {
      await sleep(600);
      return ['127.0.0.1'];
    };
    const http = client({ policy: allowEverything, resolver: slowDns, timeoutMs: 1_000 });
    const started = performance.now();
    const outcome = await http.post(`http://slow-dns.test:${port}/hook`, {}, '{}');
    expect(outcome).toMatchObject({ statusCode: null, error: 'timeout', timedOut: true });
    expect(performance.now() - started).toBeLessThan(1_400);
  });

  it('caps look-ups in flight; the ones waiting in line still end at their deadline', async () => {
    const ns = await silentNameServer();
    const resolve = dnsResolver({ servers: [ns.address], maxInFlight: 1 });
    const first = new AbortController();
    const second = new AbortController();
    const a = resolve('first.test', first.signal).catch((e: unknown) => e);
    const b = resolve('second.test', second.signal).catch((e: unknown) => e);
    await sleep(300);
    expect(new Set(ns.names)).toEqual(new Set(['first.test']));
    second.abort(new Error('deadline'));
    expect(await b).toMatchObject({ message: 'deadline' });
    first.abort(new Error('deadline'));
    expect(await a).toMatchObject({ message: 'deadline' });
    // The slot is free again for the next one.
    const third = new AbortController();
    const c = resolve('third.test', third.signal).catch((e: unknown) => e);
    await sleep(300);
    expect(ns.names).toContain('third.test');
    expect(ns.names).not.toContain('second.test');
    third.abort(new Error('deadline'));
    await c;
  });

  it('resolves localhost names to loopback without DNS; the address policy still decides', async () => {
    const ns = await silentNameServer();
    const port = await receiver('127.0.0.1');
    const resolver = dnsResolver({ servers: [ns.address] });
    const allowed = client({ policy: allowEverything, resolver, timeoutMs: 1_000 });
    expect(await allowed.post(`http://localhost:${port}/hook`, {}, '{}')).toMatchObject({ statusCode: 204 });
    expect(await allowed.post(`http://hooks.localhost:${port}/hook`, {}, '{}')).toMatchObject({ statusCode: 204 });
    const strict = client({ policy: isGlobalUnicast, resolver, timeoutMs: 1_000 });
    expect((await strict.post(`http://localhost:${port}/hook`, {}, '{}')).error).toMatch(/^blocked_address/);
    expect(ns.names).toEqual([]);
  });
});

describe('TXT look-ups (domain ownership proofs)', () => {
  async function nameServer() {
    const ns = await startTestNameServer();
    open.push(ns);
    return ns;
  }
  const within = (ms: number) => AbortSignal.timeout(ms);

  it('answers each record with its strings joined, from the configured name server', async () => {
    const ns = await nameServer();
    ns.txt('_challenge.shop.acme.com', ['v=1 token', ['first half ', 'second half']]);
    const resolve = txtResolver({ servers: [ns.address] });
    expect((await resolve('_challenge.shop.acme.com', within(2_000))).sort()).toEqual([
      'first half second half',
      'v=1 token',
    ]);
    expect(ns.asked).toEqual(['_challenge.shop.acme.com']);
  });

  it('tells a missing name, a name without TXT records and a failing server apart', async () => {
    const ns = await nameServer();
    ns.txt('exists.acme.com', []);
    ns.txt('broken.acme.com', 'SERVFAIL');
    ns.txt('refused.acme.com', 'REFUSED');
    const resolve = txtResolver({ servers: [ns.address], tries: 1 });
    const code = (name: string) => resolve(name, within(2_000)).catch((e: { code?: string }) => e.code);
    expect(await code('missing.acme.com')).toBe('ENOTFOUND');
    expect(await code('exists.acme.com')).toBe('ENODATA');
    expect(await code('broken.acme.com')).toBe('ESERVFAIL');
    expect(await code('refused.acme.com')).toBe('EREFUSED');
  });

  it('ends at the deadline when the server never answers', async () => {
    const ns = await nameServer();
    ns.txt('slow.acme.com', 'silence');
    const resolve = txtResolver({ servers: [ns.address] });
    const started = performance.now();
    const error = await resolve('slow.acme.com', within(500)).catch((e: unknown) => e);
    expect((error as Error).name).toBe('TimeoutError');
    expect(performance.now() - started).toBeLessThan(1_200);
  });
});
