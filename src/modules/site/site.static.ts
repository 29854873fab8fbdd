import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * The runtime's own stylesheet and script (./static/), served from every page host at a path
 * that carries a hash of their content, so browsers and CDNs may keep them forever.
 */
interface StaticAsset {
  path: string;
  contentType: string;
  body: Buffer;
}

function load(name: string, contentType: string, extension: string): StaticAsset {
  const body = readFileSync(new URL(`./static/${name}`, import.meta.url));
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { path: `/_ap/page.${hash}.${extension}`, contentType, body };
}

export interface StaticAssets {
  stylesheet: StaticAsset;
  script: StaticAsset;
  byPath: Map<string, StaticAsset>;
}

let assets: StaticAssets | null = null;

export function staticAssets(): StaticAssets {
  if (assets === null) {
    const stylesheet = load('page.css', 'text/css; charset=utf-8', 'css');
    const script = load('page.js', 'text/javascript; charset=utf-8', 'js');
    assets = { stylesheet, script, byPath: new Map([stylesheet, script].map((a) => [a.path, a])) };
  }
  return assets;
}
