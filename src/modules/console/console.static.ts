import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

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

const require = createRequire(import.meta.url);

/** uPlot (MIT), the analytics chart: its own minified build, served from our origin like the rest. */
function loadPackaged(file: string, name: string, contentType: string): ConsoleAsset {
  return hashed(name, contentType, readFileSync(require.resolve(file)));
}

function load(name: string, contentType: string): ConsoleAsset {
  return hashed(name, contentType, readFileSync(new URL(`./static/${name}`, import.meta.url)));
}

function hashed(name: string, contentType: string, body: Buffer): ConsoleAsset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const [base, extension] = name.split('.');
  return { path: `/console/static/${base}.${hash}.${extension}`, contentType, body };
}

export interface ConsoleAssets {
  stylesheet: ConsoleAsset;
  script: ConsoleAsset;
  /**
   * The analytics, people and settings screens: their stylesheet; uPlot's script and stylesheet
   * and the island that draws the analytics chart with it.
   */
  insights: { css: ConsoleAsset; uplot: ConsoleAsset; uplotCss: ConsoleAsset; chart: ConsoleAsset };
  byPath: Map<string, ConsoleAsset>;
}

let assets: ConsoleAssets | null = null;

export function consoleAssets(): ConsoleAssets {
  if (assets === null) {
    const stylesheet = load('console.css', 'text/css; charset=utf-8');
    const script = load('console.js', 'text/javascript; charset=utf-8');
    const insights = {
      css: load('insights.css', 'text/css; charset=utf-8'),
      uplot: loadPackaged('uplot/dist/uPlot.iife.min.js', 'uplot.js', 'text/javascript; charset=utf-8'),
      uplotCss: loadPackaged('uplot/dist/uPlot.min.css', 'uplot.css', 'text/css; charset=utf-8'),
      chart: load('chart.js', 'text/javascript; charset=utf-8'),
    };
    const all = [stylesheet, script, ...Object.values(insights)];
    assets = { stylesheet, script, insights, byPath: new Map(all.map((a) => [a.path, a])) };
  }
  return assets;
}
