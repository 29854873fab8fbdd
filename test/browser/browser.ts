import fs from 'node:fs';
import type { Browser } from 'playwright-core';

/** Where the suite looks for Chromium (Debian's `chromium` package); CHROMIUM_PATH overrides. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HAVE_BROWSER = fs.existsSync(CHROMIUM);

/** A desktop Chrome's user agent: headless Chromium calls itself HeadlessChrome, which is a declared bot. */
export const DESKTOP_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';

let announced = false;

/** One line, once per run, when the browser tests cannot run here. */
export function announceMissingBrowser(): void {
  if (HAVE_BROWSER || announced) return;
  announced = true;
  console.log(`browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium; CI always runs them)`);
}

/** Chromium as the suite runs it; `extraArgs` adds switches (e.g. `--host-resolver-rules=…`). */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}

/** Screenshots the suite takes to be looked at (not committed). */
export const SCREENSHOTS = '.screenshots';
