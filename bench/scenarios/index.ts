import type { BenchScenario } from '../lib.js';
import { agentScenario } from './agent.js';
import { assetsScenario } from './assets.js';
import { audiencesScenario } from './audiences.js';
import { backgroundScenario } from './background.js';
import { consoleScenario } from './console.js';
import { formsScenario } from './forms.js';
import { importScenario } from './import.js';
import { generationScenario } from './generation.js';
import { pagesScenario } from './pages.js';
import { personsScenario } from './persons.js';
import { siteScenario } from './site.js';
import { soakScenario } from './soak.js';
import { webhooksScenario } from './webhooks.js';

/** Every bench scenario, run in this order by `npm run bench` (or pick with BENCH_ONLY=pages,…). */
export const scenarios: BenchScenario[] = [
  pagesScenario,
  personsScenario,
  audiencesScenario,
  assetsScenario,
  webhooksScenario,
  siteScenario,
  backgroundScenario,
  formsScenario,
  importScenario,
  generationScenario,
  agentScenario,
  consoleScenario,
  soakScenario,
];
