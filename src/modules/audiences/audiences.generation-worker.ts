import { LeasedJobs, type LeasedJobDeps } from '../../workers/leased-jobs.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';
import { versionGenerationKind, type GenerationOptions } from './audiences.generation.js';

/** The generation of versions over a database: the worker, and its steps for tests. */
export function versionGeneration(deps: LeasedJobDeps, options: Omit<GenerationOptions, 'publish'> = {}) {
  return new LeasedJobs(versionGenerationKind(deps.clock, options), deps);
}

export function generationWorker(ctx: WorkerContext, options: Omit<GenerationOptions, 'publish'>): BackgroundWorker {
  return versionGeneration(ctx, options).worker();
}
