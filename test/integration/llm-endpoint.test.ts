import { describe, expect, it } from 'vitest';
import { LlmClient } from '../../src/llm/client.js';
import { modelWriter } from '../../src/modules/audiences/audiences.model-writer.js';
import { checkPageCopy } from '../../src/modules/audiences/audiences.page-copy.js';
import { generationInput } from '../factories/generation-input.js';

/**
 * Opt-in: the model writer against a real OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, …).
 * LLM_E2E_BASE_URL (e.g. http://localhost:11434/v1), LLM_E2E_MODEL, LLM_E2E_API_KEY (optional).
 */
const baseUrl = process.env.LLM_E2E_BASE_URL?.trim();
if (!baseUrl) {
  console.log('llm end-to-end test skipped: set LLM_E2E_BASE_URL (and LLM_E2E_MODEL, LLM_E2E_API_KEY) to run it');
}

describe.skipIf(!baseUrl)('the model writer against a real endpoint', () => {
  it('writes a page that validates, for its reader, and reports its usage', async () => {
    const client = new LlmClient({
      baseUrl: baseUrl!,
      apiKey: process.env.LLM_E2E_API_KEY?.trim() || null,
      model: process.env.LLM_E2E_MODEL?.trim() || 'gpt-4o-mini',
      timeoutMs: 180_000,
      maxOutputTokens: 4_096,
      concurrency: 1,
    });
    const artifact = await modelWriter(client).generate(generationInput());
    const checked = checkPageCopy(artifact.content.copy);
    expect(checked.ok).toBe(true);
    console.log(`llm end-to-end: ${JSON.stringify(artifact.usage)}\n${JSON.stringify(artifact.content.copy, null, 1)}`);
    expect(artifact.usage!.inputTokens).toBeGreaterThan(0);
    expect(JSON.stringify(artifact.content.copy)).toMatch(/Globex/);
  }, 400_000);
});
