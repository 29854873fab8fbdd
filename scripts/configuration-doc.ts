// Writes docs/configuration.md from the configuration's declarations (src/config.ts).
// With --check, writes nothing and fails when the committed file differs (npm run check).
import fs from 'node:fs';
import * as prettier from 'prettier';
import { ConfigSchema } from '../src/config.js';
import { describeSettings, type SettingDescription } from '../src/lib/env-settings.js';

const FILE = 'docs/configuration.md';

const groups = describeSettings(ConfigSchema);
const requiredInProduction = groups.flatMap((g) => g.settings).filter((s) => s.requiredInProduction !== undefined);

const cell = (markdown: string) => markdown.replaceAll('|', '\\|');
const code = (value: unknown) => `\`${String(value)}\``;

function defaultOf(setting: SettingDescription): string {
  if ('text' in setting.default) return setting.default.text;
  const { value } = setting.default;
  return value === null || (Array.isArray(value) && value.length === 0) ? 'unset' : code(value);
}

function meaningOf(setting: SettingDescription): string {
  const notes = [setting.description];
  if (setting.legacyEnv) notes.push(`${code(setting.legacyEnv)}, its older name, is still read.`);
  if (setting.requiredInProduction) notes.push('**Required** with `NODE_ENV=production`.');
  return notes.join(' ');
}

const markdown = [
  '# Configuration',
  '',
  '<!-- Generated from src/config.ts by `npm run config:doc`; `npm run check` fails when it drifts. -->',
  '',
  'Environment variables only, read and validated once at start (`src/config.ts`, where each is declared',
  'once). A blank variable counts as unset. A bad value stops the start with a message naming the',
  'variable (exit code 78), and every bad value is reported at once.',
  '',
  `\`NODE_ENV=production\` makes ${requiredInProduction.map((s) => code(s.env)).join(' and ')} required.`,
  '',
  ...groups.flatMap((group) => [
    `## ${group.title}`,
    '',
    '| variable | default | accepts | meaning |',
    '| --- | --- | --- | --- |',
    ...group.settings.map(
      (s) => `| ${code(s.env)} | ${cell(defaultOf(s))} | ${cell(s.accepts)} | ${cell(meaningOf(s))} |`,
    ),
    '',
  ]),
].join('\n');

const formatted = await prettier.format(markdown, { ...(await prettier.resolveConfig(FILE)), filepath: FILE });

if (process.argv.includes('--check')) {
  if (!fs.existsSync(FILE) || fs.readFileSync(FILE, 'utf8') !== formatted) {
    console.error(`${FILE} differs from the configuration's declarations (src/config.ts): run npm run config:doc`);
    process.exit(1);
  }
} else {
  fs.writeFileSync(FILE, formatted);
  console.log(`${FILE}: ${groups.reduce((n, g) => n + g.settings.length, 0)} settings`);
}
