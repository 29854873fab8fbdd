import { coreCommands } from '../cli/commands.js';
import { runCli } from '../cli/run.js';
import { ConfigError, parseConfig } from '../config.js';
import { systemClock } from '../lib/clock.js';
import { demoCommand } from '../modules/demo.js';
import { modules } from '../modules/index.js';
import { resealWithKeyOf } from '../modules/webhooks/index.js';
import { wireEventFanOut } from './wiring.js';

const commands = [...coreCommands, demoCommand, ...modules.flatMap((m) => m.commands ?? [])];

try {
  const config = parseConfig(process.env);
  wireEventFanOut();
  const code = await runCli(
    process.argv.slice(2),
    commands,
    { config, clock: systemClock, migrations: { resealWebhookSecret: resealWithKeyOf(config) } },
    {
      stdout: (t) => process.stdout.write(t),
      stderr: (t) => process.stderr.write(t),
    },
  );
  process.exitCode = code;
} catch (err) {
  process.stderr.write(
    `${err instanceof ConfigError ? err.message : err instanceof Error ? err.stack : String(err)}\n`,
  );
  process.exitCode = err instanceof ConfigError ? 78 : 1;
}
