import type { DemoContext } from '../module.js';
import { createAccount } from './accounts.service.js';

/** Accounts for the demo persons' companies (spelled as people paste them), and one without persons yet. */
export async function accountsDemo(ctx: DemoContext) {
  const accountIds: string[] = [];
  for (const body of [
    { domain: 'https://www.ACME.example/about', name: 'Acme Corporation' },
    { domain: 'globex.example', name: 'Globex' },
    { domain: 'initech.example.', name: 'Initech' },
    { domain: 'umbrella.example', name: 'Umbrella' },
    { domain: 'münchen-bau.example', name: 'München Bau' },
  ]) {
    accountIds.push((await createAccount(ctx.scope, ctx.clock, body)).accountId);
  }
  return { accountIds };
}
