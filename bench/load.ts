/**
 * Load generation for `npm run bench`: wrk (a C load generator, one thread) by default, so that
 * the load generator does not take a core's worth of JavaScript from the service and the ceiling
 * alike; autocannon (in-process) only when asked for with BENCH_LOADER=autocannon.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';

/** One request of a load: rotated through in order (paths, bodies). */
export interface BenchRequest {
  method: string;
  path: string;
  body?: string;
}

export interface LoadSpec {
  baseUrl: string;
  headers: Record<string, string>;
  requests: BenchRequest[];
  connections: number;
  durationSeconds: number;
  /** Pause of each connection before each request (wrk only): caps the rate at about connections × 1000 / delay. */
  delayMs?: number;
  /**
   * `exponential`: each pause is drawn from an exponential distribution of mean `delayMs` (the
   * usual model of independent users with think time), so the connections do not fall into step
   * and arrive as one burst every `delayMs`. Default `fixed`.
   */
  pauses?: 'fixed' | 'exponential';
  /** Request n, made when it is sent (autocannon only; wrk rotates through `requests`). */
  next?: (n: number) => BenchRequest;
  /** Told every response's request number and status: forces autocannon (wrk reports totals only). */
  onResponse?: (n: number, status: number) => void;
}

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses with a status ≥ 400. */
  non2xx: number;
  /** Connect/read/write errors and timeouts. */
  errors: number;
  /** Bytes received per response, headers included. */
  bytesPerResponse: number;
}

export type Loader = 'wrk' | 'autocannon';

let resolvedLoader: Loader | null = null;

/**
 * wrk, installed with apt-get when missing (these machines run as root with Debian's archive
 * reachable). If it cannot be installed the bench stops with a message saying what to do, rather
 * than quietly measuring with a different tool.
 */
export function chooseLoader(): Loader {
  if (resolvedLoader) return resolvedLoader;
  const wanted = (process.env.BENCH_LOADER ?? 'wrk').trim();
  if (wanted === 'autocannon') return (resolvedLoader = 'autocannon');
  if (wanted !== 'wrk') throw new Error(`BENCH_LOADER must be wrk or autocannon, got "${wanted}"`);
  if (!hasWrk()) {
    console.log('wrk is not installed: installing it with apt-get (Debian package "wrk")');
    const root = process.getuid?.() === 0;
    const run = (args: string[]) =>
      spawnSync(root ? args[0]! : 'sudo', root ? args.slice(1) : ['-n', ...args], {
        stdio: 'inherit',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
    let result = run(['apt-get', 'install', '-y', '-q', 'wrk']);
    if (result.status !== 0) {
      run(['apt-get', 'update', '-q']);
      result = run(['apt-get', 'install', '-y', '-q', 'wrk']);
    }
    if (result.status !== 0 || !hasWrk()) {
      throw new Error(
        'The bench drives load with wrk, which is not installed and could not be installed with apt-get. ' +
          'Install it (Debian/Ubuntu: `apt-get install wrk`; macOS: `brew install wrk`), or run with ' +
          'BENCH_LOADER=autocannon to use the in-process fallback (it shares the cores with the service, so ' +
          'ratios are not comparable with wrk runs).',
      );
    }
  }
  return (resolvedLoader = 'wrk');
}

function hasWrk(): boolean {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // wrk --version exits 1 after printing its usage: it is there.
    return (error as { status?: number }).status === 1;
  }
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return chooseLoader() === 'wrk' && spec.onResponse === undefined ? runWrk(spec) : runAutocannon(spec);
}

const LUA_DONE = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"durationUs":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;

function luaString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/**
 * One wrk thread (`-t1`), `connections` connections. One distinct request is sent as wrk's static
 * request; several are pre-formatted once from a file and rotated through by a small Lua script.
 */
async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aps-wrk-'));
  try {
    // wrk adds `Host` from the URL unless its headers table has that exact key: a lowercase
    // `host` would go out as a second Host header, and which one the server reads followed the
    // Lua table's order (whole runs of a page-by-Host load answered by the API side, 401).
    const headerLines = Object.entries(spec.headers)
      .map(([k, v]) => `wrk.headers[${luaString(k.toLowerCase() === 'host' ? 'Host' : k)}] = ${luaString(v)}`)
      .join('\n');
    let script: string;
    if (spec.requests.length === 1) {
      const [r] = spec.requests as [BenchRequest];
      script = `wrk.method = ${luaString(r.method)}\nwrk.path = ${luaString(r.path)}\n${
        r.body !== undefined ? `wrk.body = ${luaString(r.body)}\n` : ''
      }${headerLines}\n${LUA_DONE}`;
    } else {
      const file = path.join(dir, 'requests.tsv');
      fs.writeFileSync(
        file,
        spec.requests.map((r) => `${r.method}\t${r.path}\t${(r.body ?? '').replace(/\n/g, ' ')}`).join('\n') + '\n',
      );
      script = `${headerLines}
local reqs = {}
local n = 0
local i = 0
init = function(args)
  for line in io.lines(${luaString(file)}) do
    local m, p, b = line:match("^([^\\t]*)\\t([^\\t]*)\\t(.*)$")
    if m then
      n = n + 1
      if b == "" then b = nil end
      reqs[n] = wrk.format(m, p, nil, b)
    end
  end
end
request = function()
  i = i + 1
  if i > n then i = 1 end
  return reqs[i]
end
${LUA_DONE}`;
    }
    if (spec.delayMs && spec.pauses === 'exponential') {
      script += `\nmath.randomseed(os.time())\ndelay = function() return math.floor(-math.log(1 - math.random()) * ${spec.delayMs} + 0.5) end\n`;
    } else if (spec.delayMs) {
      script += `\ndelay = function() return ${Math.max(1, Math.round(spec.delayMs))} end\n`;
    }
    const scriptFile = path.join(dir, 'load.lua');
    fs.writeFileSync(scriptFile, script);
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        'wrk',
        [
          '-t1',
          `-c${spec.connections}`,
          `-d${spec.durationSeconds}s`,
          '--timeout',
          '10s',
          '-s',
          scriptFile,
          `${spec.baseUrl}/`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`wrk exited with ${code}: ${out}`))));
    });
    const line = output.split('\n').find((l) => l.startsWith('WRK_RESULT '));
    if (!line) throw new Error(`wrk printed no result:\n${output}`);
    const r = JSON.parse(line.slice('WRK_RESULT '.length)) as Record<string, number>;
    const seconds = r.durationUs! / 1e6;
    return {
      requests: r.requests!,
      requestsPerSecond: Math.round(r.requests! / seconds),
      p50Ms: Math.round(r.p50! / 10) / 100,
      p99Ms: Math.round(r.p99! / 10) / 100,
      non2xx: r.status!,
      errors: r.connect! + r.read! + r.write! + r.timeout!,
      bytesPerResponse: r.requests! > 0 ? Math.round(r.bytes! / r.requests!) : 0,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  let i = 0;
  const result = await autocannon({
    url: spec.baseUrl,
    connections: spec.connections,
    duration: spec.durationSeconds,
    requests: [
      {
        headers: spec.headers,
        setupRequest: (req, context) => {
          const n = i++;
          (context as { n?: number }).n = n;
          const r = spec.next ? spec.next(n) : spec.requests[n % spec.requests.length]!;
          return { ...req, method: r.method as 'GET', path: r.path, body: r.body };
        },
        onResponse: (status, _body, context) => spec.onResponse?.((context as { n: number }).n, status),
      },
    ],
  });
  return {
    requests: result.requests.total,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    bytesPerResponse: result.requests.total > 0 ? Math.round(result.throughput.total / result.requests.total) : 0,
  };
}

/** CPU time (user + system, µs) used so far by a process and its child processes still running. */
export function processTreeCpuMicros(rootPid: number): number {
  const ticks = 100; // USER_HZ on Linux
  let total = 0;
  const pids = [rootPid];
  try {
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(fields[1]) === rootPid) pids.push(Number(entry));
      } catch {
        // gone
      }
    }
    for (const pid of pids) {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        total += ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticks;
      } catch {
        // gone
      }
    }
  } catch {
    return NaN; // not Linux
  }
  return total;
}

/** Resident set size (bytes) of a process and its children. */
export function processTreeRss(rootPid: number): number {
  let total = 0;
  const page = 4096;
  try {
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(entry) === rootPid || Number(fields[1]) === rootPid) total += Number(fields[21]) * page;
      } catch {
        // gone
      }
    }
  } catch {
    return NaN;
  }
  return total;
}

/**
 * CPU seconds (user + system) used so far by the PostgreSQL server processes visible in /proc, or
 * null when none is (a remote server): read before and after a load, it says what the database
 * spent per request beside what the service spent.
 */
export function postgresCpuSeconds(): number | null {
  let ticks = 0;
  let found = false;
  try {
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        if (!stat.includes('(postgres)')) continue;
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        // utime + stime, and cutime + cstime: a backend that exits during the load hands its
        // time to the postmaster's children's total, so it is neither lost nor counted twice.
        ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
        found = true;
      } catch {
        // gone
      }
    }
  } catch {
    return null;
  }
  return found ? ticks / CLOCK_TICKS_PER_SECOND : null;
}

/** USER_HZ: 100 on every Linux this bench runs on (x86-64 and arm64). */
const CLOCK_TICKS_PER_SECOND = 100;
