import { runOperatorCli } from './operator-cli.js';

process.exitCode = await runOperatorCli(process.argv.slice(2), process.env, {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
});
