import type { ServiceModule } from '../module.js';
import { audiencesCommands } from './audiences.cli.js';
import { audiencesDemo } from './audiences.demo.js';
import { audiencesRoutes } from './audiences.routes.js';
import { audienceSchemas } from './audiences.schemas.js';
import { generationWorker } from './audiences.generation-worker.js';
import { builtinWriter } from './audiences.builtin-writer.js';
import { modelWriter } from './audiences.model-writer.js';
import { sharedLlmClient } from '../../llm/client.js';
import { TokenBudget } from '../../llm/token-budget.js';
import type { BackgroundWorker, WorkerContext } from '../../workers/worker.js';

/**
 * The model writer when LLM_BASE_URL is set, else the built-in writer (docs/audience-versions.md).
 * With a model, LLM_CONCURRENCY versions are generated at once, in all processes together (the
 * claims count the versions running), each process running up to as many: a provider's limit
 * (docs/audience-versions.md#concurrency-and-turns).
 */
function generationWorkerFor(ctx: WorkerContext): BackgroundWorker {
  const client = sharedLlmClient(ctx.config);
  const budget = new TokenBudget(ctx.config.llmDailyTokenBudget, ctx.clock);
  if (client === null) return generationWorker(ctx, { generator: builtinWriter, budget });
  const limit = client.settings.concurrency;
  return generationWorker(ctx, {
    generator: modelWriter(client),
    budget,
    // one provider for all: a tenant alone may use every slot; tenants take turns as slots free
    settings: { concurrency: limit, maxRunning: limit, perTenant: limit },
  });
}

export const audiencesModule: ServiceModule = {
  name: 'audiences',
  schemas: audienceSchemas,
  routes: audiencesRoutes,
  demo: audiencesDemo,
  workers: (ctx) => [generationWorkerFor(ctx)],
  commands: audiencesCommands,
};
