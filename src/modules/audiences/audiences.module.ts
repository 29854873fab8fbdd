import type { ServiceModule } from '../module.js';
import { audiencesCommands } from './audiences.cli.js';
import { audiencesDemo } from './audiences.demo.js';
import { audiencesRoutes } from './audiences.routes.js';
import { audienceSchemas } from './audiences.schemas.js';
import { generationWorker } from './audiences.generation-worker.js';
import { audienceImportWorker } from './audiences.import-job.js';
import { modelWriterSettings } from './audiences.generation.js';
import { builtinWriter } from './audiences.builtin-writer.js';
import { modelWriter } from './audiences.model-writer.js';
import { sharedLlmClient } from '../../llm/client.js';
import { TokenBudget } from '../../llm/token-budget.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';

/**
 * The model writer when LLM_BASE_URL is set, else the built-in writer (docs/audience-versions.md).
 * With a model, the process's client holds the LLM_CONCURRENCY calls; the runner claims that
 * many versions plus LLM_CLAIM_AHEAD, in all processes together (modelWriterSettings).
 */
function generationWorkerFor(ctx: WorkerContext): BackgroundWorker {
  const client = sharedLlmClient(ctx.config);
  const budget = new TokenBudget(ctx.config.llmDailyTokenBudget, ctx.clock);
  if (client === null) return generationWorker(ctx, { generator: builtinWriter, budget });
  return generationWorker(ctx, {
    generator: modelWriter(client),
    budget,
    settings: modelWriterSettings(client.settings.concurrency, ctx.config.llmClaimAhead),
  });
}

export const audiencesModule: ServiceModule = {
  name: 'audiences',
  schemas: audienceSchemas,
  routes: audiencesRoutes,
  demo: audiencesDemo,
  workers: (ctx) => [generationWorkerFor(ctx), audienceImportWorker(ctx)],
  commands: audiencesCommands,
};
