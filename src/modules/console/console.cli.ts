import { requiredText } from '../../cli/args.js';
import { CommandIncomplete, type CliCommand } from '../../cli/command.js';
import type { Config } from '../../config.js';
import { smtpMailer } from '../../net/smtp-mailer.js';
import { inviteAsOperator, type Invitation } from './console.auth.service.js';
import { mailInvitation } from './console.invite-mail.js';

/** Where the operator's sign-in links point: PUBLIC_BASE_URL, else this machine's port. */
export function operatorSignInUrl(config: Pick<Config, 'publicBaseUrl' | 'port'>, invitation: Invitation): string {
  const origin = config.publicBaseUrl ?? `http://localhost${config.port === 80 ? '' : `:${config.port}`}`;
  return `${origin}/console/sign-in?token=${invitation.token}`;
}

export const consoleCommands: CliCommand[] = [
  {
    path: ['user', 'invite'],
    summary:
      'Make an e-mail address a console user of a tenant and print a one-time sign-in link (15 min); with SMTP_URL, also mail it',
    options: { tenant: { type: 'string' }, email: { type: 'string' } },
    run: async (ctx, { values }) => {
      const invitation = await inviteAsOperator(ctx.database, ctx.clock, {
        tenantId: requiredText(values, 'tenant'),
        email: requiredText(values, 'email'),
      });
      const signInUrl = operatorSignInUrl(ctx.config, invitation);
      const result = {
        userId: invitation.userId,
        email: invitation.email,
        signInUrl,
        expiresAt: invitation.expiresAt,
      };
      // After the invitation's transaction: the mail server's pace holds no database lock.
      const mailed = await mailInvitation(smtpMailer(ctx.config), {
        email: invitation.email,
        url: signInUrl,
        expiresAt: invitation.expiresAt,
        invitedBy: null,
      });
      if (mailed === null) return result;
      if (!mailed.sent) {
        throw new CommandIncomplete(
          'mail_failed',
          `The sign-in link was made, but the e-mail to ${invitation.email} could not be sent (${mailed.reason}). ` +
            'Pass the link on yourself; it works once, for 15 minutes.',
          { ...result, emailed: false },
        );
      }
      return { ...result, emailed: true };
    },
  },
];
