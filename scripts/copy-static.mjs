// Part of `npm run build`: copies files that tsc does not (the page runtime's stylesheet and
// script) from src/ to dist/, beside the modules that read them.
import fs from 'node:fs';

for (const dir of ['modules/site/static', 'modules/console/static']) {
  fs.cpSync(new URL(`../src/${dir}`, import.meta.url), new URL(`../dist/${dir}`, import.meta.url), { recursive: true });
}
