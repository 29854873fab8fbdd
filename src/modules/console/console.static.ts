import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The console's own stylesheet and script (./static/), served from the API host under
 * /console/static/ at paths that carry a hash of their content (kept forever by browsers).
 * Nothing the console shows comes from another origin.
 */
interface ConsoleAsset {
  path: string;
  contentType: string;
  body: Buffer;
}

function load(name: string, contentType: string): ConsoleAsset {
  const body = readFileSync(new URL(`./static/${name}`, import.meta.url));
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const [base, extension] = name.split('.');
  return { path: `/console/static/${base}.${hash}.${extension}`, contentType, body };
}

export interface ConsoleAssets {
  stylesheet: ConsoleAsset;
  script: ConsoleAsset;
  byPath: Map<string, ConsoleAsset>;
}

let assets: ConsoleAssets | null = null;

export function consoleAssets(): ConsoleAssets {
  if (assets === null) {
    const stylesheet = load('console.css', 'text/css; charset=utf-8');
    const script = load('console.js', 'text/javascript; charset=utf-8');
    assets = { stylesheet, script, byPath: new Map([stylesheet, script].map((a) => [a.path, a])) };
  }
  return assets;
}
