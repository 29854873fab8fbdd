import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { connectDatabase, connectionOptionsOf } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { AppError } from '../http/errors.js';
import { CrossProcessWakeups } from '../workers/wakeups.js';
import { CommandIncomplete, type CliCommand, type CliContext } from './command.js';

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

function usage(commands: CliCommand[]): string {
  const lines = commands.map((c) => {
    const opts = Object.keys(c.options ?? {}).map((o) => `--${o} …`);
    return `  ${[...c.path, c.positionals ?? '', ...opts].filter(Boolean).join(' ').padEnd(48)} ${c.summary}`;
  });
  return `Usage: audience-pages <command> [options] [--json]\n\nCommands:\n${lines.join('\n')}\n\nConfiguration comes from the environment (DATA_DIR, DATABASE_URL, …) as for the server.\n`;
}

/**
 * Runs one operator command. With --json, stdout receives exactly one JSON object (the result, or
 * `{ "error": … }`); otherwise a readable rendering of it. Returns the exit code.
 */
export async function runCli(
  argv: string[],
  commands: CliCommand[],
  service: Omit<CliContext, 'database' | 'db'>,
  io: CliIo,
): Promise<number> {
  const json = argv.includes('--json');
  const args = argv.filter((a) => a !== '--json');
  const command = [...commands]
    .sort((a, b) => b.path.length - a.path.length)
    .find((c) => c.path.every((word, i) => args[i] === word));

  const fail = (message: string, code = 'usage', exit = 2) => {
    if (json) io.stdout(`${JSON.stringify({ error: { code, message } })}\n`);
    else io.stderr(`${message}\n`);
    return exit;
  };

  if (command === undefined || args.includes('--help')) {
    if (command === undefined && args.length > 0 && !args.includes('--help')) {
      if (!json) io.stderr(usage(commands));
      return fail(`Unknown command: ${args.join(' ')}`);
    }
    io.stdout(
      json
        ? `${JSON.stringify({ commands: commands.map((c) => ({ command: c.path.join(' '), summary: c.summary })) })}\n`
        : usage(commands),
    );
    return 0;
  }

  let parsed;
  try {
    parsed = parseArgs({
      args: args.slice(command.path.length),
      options: command.options ?? {},
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    return fail((err as Error).message);
  }

  const database = connectDatabase(connectionOptionsOf(service.config));
  // Work a command queues wakes the running service's workers (PostgreSQL; on SQLite they poll).
  const wakeups = new CrossProcessWakeups(database, pino({ level: service.config.logLevel }, { write: io.stderr }));
  try {
    if (command.path[0] !== 'migrate') await migrateToLatest(database, service.migrations);
    await wakeups.start();
    database.wakeups.connect(wakeups.publish);
    const result = await command.run(
      { ...service, database, db: database.kysely },
      { values: parsed.values as Record<string, unknown>, positionals: parsed.positionals },
    );
    io.stdout(json ? `${JSON.stringify(result)}\n` : `${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof CommandIncomplete) {
      const { result, code, message } = err;
      if (json) io.stdout(`${JSON.stringify({ ...result, error: { code, message } })}\n`);
      else {
        io.stdout(`${JSON.stringify(result, null, 2)}\n`);
        io.stderr(`${message}\n`);
      }
      return err.exitCode;
    }
    if (err instanceof AppError) return fail(err.detail, err.code, 1);
    if (err instanceof Error && !(err as { code?: unknown }).code) return fail(err.message, 'failed', 1);
    return fail(err instanceof Error ? err.message : String(err), 'failed', 1);
  } finally {
    await wakeups.stop();
    await database.close();
  }
}
