import type { BenchScenario } from '../lib.js';
import { pagesScenario } from './pages.js';
import { personsScenario } from './persons.js';

/** Every bench scenario, run in this order by `npm run bench` (or pick with BENCH_ONLY=pages,…). */
export const scenarios: BenchScenario[] = [pagesScenario, personsScenario];
