import { spawn, type ChildProcess } from 'node:child_process';
import { runOperatorCli } from '../src/main/operator-cli.js';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';

/**
 * A TCP port free on loopback right now, below Linux's ephemeral range (32768+), where outgoing
 * connections take their ports: for a server that must keep its port across restarts.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * 22_000);
    const probe = net.createServer();
    const free = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false));
      probe.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => probe.close(resolve));
      return port;
    }
  }
}

/**
 * Runs the operator CLI in this process: the same entry as `npx audience-pages` (its commands,
 * config parsing and output) without a cold start of the module graph per call. Tests of what
 * only a real process shows (exit status, stdout as a pipe) use runCliProcess.
 */
export async function runCliInProcess(args: string[], env: Record<string, string>) {
  let stdout = '';
  let stderr = '';
  // node-postgres reads PGOPTIONS (a test database's schema) from the process's environment when
  // it opens a connection, as it does in a CLI process of its own.
  const pgOptions = process.env.PGOPTIONS;
  if (env.PGOPTIONS !== undefined) process.env.PGOPTIONS = env.PGOPTIONS;
  try {
    const code = await runOperatorCli(
      args,
      { ...process.env, LOG_LEVEL: 'silent', ...env },
      { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t) },
    );
    return { code, stdout, stderr };
  } finally {
    if (pgOptions === undefined) delete process.env.PGOPTIONS;
    else process.env.PGOPTIONS = pgOptions;
  }
}

/** Runs the operator CLI from source as a separate process, the way an operator would. */
export async function runCliProcess(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/main/cli.ts'), ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'exit')) as [number];
  return { code, stdout, stderr };
}

/**
 * Starts the real server from source; resolves once /readyz answers. Without a PORT in `env` it
 * listens on a port the system picks (PORT=0) and is found by its "Server listening at" log line,
 * so parallel test files never collide on a port.
 */
export async function startServerProcess(env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/main/server.ts')], {
    env: { ...process.env, LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  let baseUrl = env.PORT ? `http://127.0.0.1:${env.PORT}` : null;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${output}`);
    baseUrl ??= /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? null;
    try {
      if (baseUrl !== null && (await fetch(`${baseUrl}/readyz`)).ok) break;
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (baseUrl === null) throw new Error(`the server did not say where it listens (LOG_LEVEL below info?): ${output}`);
  return {
    baseUrl,
    child,
    output: () => output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      const [code] = (await once(child, 'exit')) as [number | null];
      return code;
    },
  };
}
