import { coreCommands } from '../cli/commands.js';
import { runCli, type CliIo } from '../cli/run.js';
import { ConfigError, parseConfig } from '../config.js';
import { systemClock } from '../lib/clock.js';
import { demoCommand } from '../modules/demo.js';
import { modules } from '../modules/index.js';
import { resealWithKeyOf } from '../modules/webhooks/index.js';
import { wireEventFanOut } from './wiring.js';

const commands = [...coreCommands, demoCommand, ...modules.flatMap((m) => m.commands ?? [])];

/**
 * `npx audience-pages …` given its arguments and environment: what src/main/cli.ts runs, and what
 * tests run in their own process (the same commands, config parsing and output). Returns the exit code.
 */
export async function runOperatorCli(
  argv: string[],
  env: Record<string, string | undefined>,
  io: CliIo,
): Promise<number> {
  try {
    const config = parseConfig(env);
    wireEventFanOut();
    return await runCli(
      argv,
      commands,
      { config, clock: systemClock, migrations: { resealWebhookSecret: resealWithKeyOf(config) } },
      io,
    );
  } catch (err) {
    io.stderr(`${err instanceof ConfigError ? err.message : err instanceof Error ? err.stack : String(err)}\n`);
    return err instanceof ConfigError ? 78 : 1;
  }
}
