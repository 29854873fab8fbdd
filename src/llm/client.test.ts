import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeOpenAI } from '../../test/fakes/openai-server.js';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await FakeOpenAI.start();
});
afterAll(() => fake.close());

it("lets a visitor's streamed answer go before the structured calls queued for the process's slots", async () => {
  const client = fake.client(1);
  fake.answer(
    { content: { n: 1 }, delayMs: 200 },
    { stream: ['for the visitor'] },
    { content: { n: 2 } },
    { content: { n: 3 } },
  );
  const structured = (label: string) =>
    client.structured({ messages: [{ role: 'user', content: label }], schemaName: 's', schema: { type: 'object' } });
  const streamed = async () => {
    let text = '';
    for await (const chunk of client.stream({ messages: [{ role: 'user', content: 'visitor' }] })) text += chunk;
    return text;
  };
  // the first call holds the only slot; two claimed-ahead versions queue, then a visitor asks
  const first = structured('version 1');
  const queued = [structured('version 2'), structured('version 3')];
  await new Promise((resolve) => setTimeout(resolve, 50));
  const answer = streamed();
  await Promise.all([first, ...queued, answer]);
  expect(await answer).toBe('for the visitor');
  expect(fake.requests.map((r) => r.body.messages.at(-1)!.content)).toEqual([
    'version 1',
    'visitor',
    'version 2',
    'version 3',
  ]);
  expect(fake.maxInFlight).toBe(1);
});
