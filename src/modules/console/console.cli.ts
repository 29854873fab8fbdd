import { requiredText } from '../../cli/args.js';
import type { CliCommand } from '../../cli/command.js';
import type { Config } from '../../config.js';
import { inviteAsOperator, type Invitation } from './console.auth.service.js';

/** Where the operator's sign-in links point: PUBLIC_BASE_URL, else this machine's port. */
export function operatorSignInUrl(config: Pick<Config, 'publicBaseUrl' | 'port'>, invitation: Invitation): string {
  const origin = config.publicBaseUrl ?? `http://localhost${config.port === 80 ? '' : `:${config.port}`}`;
  return `${origin}/console/sign-in?token=${invitation.token}`;
}

export const consoleCommands: CliCommand[] = [
  {
    path: ['user', 'invite'],
    summary: 'Make an e-mail address a console user of a tenant and print a one-time sign-in link (15 min)',
    options: { tenant: { type: 'string' }, email: { type: 'string' } },
    run: async (ctx, { values }) => {
      const invitation = await inviteAsOperator(ctx.database, ctx.clock, {
        tenantId: requiredText(values, 'tenant'),
        email: requiredText(values, 'email'),
      });
      return {
        userId: invitation.userId,
        email: invitation.email,
        signInUrl: operatorSignInUrl(ctx.config, invitation),
        expiresAt: invitation.expiresAt,
      };
    },
  },
];
