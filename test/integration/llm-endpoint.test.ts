import { describe, expect, it } from 'vitest';
import { LlmClient } from '../../src/llm/client.js';
import { modelWriter } from '../../src/modules/audiences/audiences.model-writer.js';
import { checkPageCopy } from '../../src/modules/audiences/audiences.page-copy.js';
import { makeAudience } from '../factories/audiences.js';
import { generationInput } from '../factories/generation-input.js';
import { linkOnHost, visit } from '../factories/site.js';
import { startTestApp } from '../harness.js';

/**
 * Opt-in: the model writer and the on-page agent against a real OpenAI-compatible endpoint
 * (OpenAI, Ollama, vLLM, …).
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

describe.skipIf(!baseUrl)('the on-page agent against a real endpoint', () => {
  it('answers a visitor from the topic entry that holds the answer, streamed, naming its source', async () => {
    const t = await startTestApp({
      config: {
        LLM_BASE_URL: baseUrl!,
        LLM_API_KEY: process.env.LLM_E2E_API_KEY?.trim() || '',
        LLM_MODEL: process.env.LLM_E2E_MODEL?.trim() || 'gpt-4o-mini',
        LLM_TIMEOUT_MS: '180000',
        AGENT_QUESTIONS_PER_MINUTE: '0',
      },
    });
    try {
      const tenant = await t.createTenant('Acme');
      const topic = await t.request(tenant, { method: 'POST', url: '/v0/topics', payload: { title: 'Pricing' } });
      await t.request(tenant, {
        method: 'POST',
        url: `/v0/topics/${topic.json().topicId}/entries`,
        payload: { content: { type: 'answer', content: 'The free trial lasts 14 days and needs no credit card.' } },
      });
      const { audienceId } = await makeAudience(tenant.scope, t.clock, {
        computedName: 'Globex',
        isNewPageAgent: true,
      });
      await linkOnHost(t, tenant, { hostname: 'e2e.acme.localhost', path: '/offer', audienceId });
      const page = await visit(t, 'e2e.acme.localhost', '/offer');
      const view = /<meta name="ap-view" content="([^"]+)"/.exec(page.body)![1]!;
      const res = await t.app.inject({
        method: 'POST',
        url: '/_ap/ask',
        headers: { host: 'e2e.acme.localhost', 'content-type': 'application/json' },
        payload: JSON.stringify({ v: view, q: 'How long is the free trial?' }),
      });
      expect(res.statusCode).toBe(200);
      const lines = res.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { t: string; v?: string; text?: string; answered?: boolean; sources?: unknown[] });
      const done = lines.at(-1)!;
      const text = done.text ?? lines.map((l) => l.v ?? '').join('');
      console.log(`agent end-to-end: ${text}`);
      expect(done.answered).toBe(true);
      // the model's own words (an extractive answer is a quotation), with the fact and its source
      expect(text.startsWith('“')).toBe(false);
      expect(text).toMatch(/14|fourteen/i);
      expect(JSON.stringify(done.sources)).toContain('Pricing');
    } finally {
      await t.close();
    }
  }, 400_000);
});
