import { LeasedJobs, type LeasedJobDeps } from '../../workers/leased-jobs.js';
import type { TokenBudget } from '../../llm/token-budget.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';
import { versionGenerationKind, type GenerationOptions } from './audiences.generation.js';
import type { VersionGenerator } from './audiences.generator.js';

/** The generation of versions over a database: the worker, and its steps for tests. */
export function versionGeneration(deps: LeasedJobDeps, options: Omit<GenerationOptions, 'publish'> = {}) {
  return new LeasedJobs(versionGenerationKind(deps.clock, options), deps);
}

export function generationWorker(
  ctx: WorkerContext,
  generator?: VersionGenerator,
  budget?: TokenBudget,
): BackgroundWorker {
  return versionGeneration(ctx, { generator, budget }).worker();
}
