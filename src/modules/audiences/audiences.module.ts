import type { ServiceModule } from '../module.js';
import { audiencesCommands } from './audiences.cli.js';
import { audiencesDemo } from './audiences.demo.js';
import { audiencesRoutes } from './audiences.routes.js';
import { audienceSchemas } from './audiences.schemas.js';
import { generationWorker } from './audiences.generation-worker.js';
import { builtinWriter } from './audiences.builtin-writer.js';
import { modelWriter } from './audiences.model-writer.js';
import { LlmClient, llmSettings } from '../../llm/client.js';
import { TokenBudget } from '../../llm/token-budget.js';
import type { Config } from '../../config.js';
import type { VersionGenerator } from './audiences.generator.js';

/** The model writer when LLM_BASE_URL is set, else the built-in writer (docs/audience-versions.md). */
function versionGenerator(config: Config): VersionGenerator {
  const settings = llmSettings(config);
  return settings === null ? builtinWriter : modelWriter(new LlmClient(settings));
}

export const audiencesModule: ServiceModule = {
  name: 'audiences',
  schemas: audienceSchemas,
  routes: audiencesRoutes,
  demo: audiencesDemo,
  workers: (ctx) => [
    generationWorker(ctx, versionGenerator(ctx.config), new TokenBudget(ctx.config.llmDailyTokenBudget, ctx.clock)),
  ],
  commands: audiencesCommands,
};
