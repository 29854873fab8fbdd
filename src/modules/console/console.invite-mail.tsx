import { renderToStaticMarkup } from 'preact-render-to-string';
import type { MailMessage, MailOutcome, Mailer } from '../../net/smtp-mailer.js';

/**
 * The invitation by e-mail (docs/console.md#invitations-by-e-mail): sent, when SMTP_URL is set,
 * right after the invitation's transaction has committed, never inside it. Plain text and a simple
 * HTML twin; the HTML is rendered by Preact, so the inviter's address and the link are escaped.
 */

export interface InvitationMail {
  /** The invited address (the recipient). */
  email: string;
  /** The one-time sign-in link. */
  url: string;
  expiresAt: string;
  /** Who invited: a console user's address, or null for the operator. */
  invitedBy: string | null;
}

const SUBJECT = 'Your sign-in link to the Audience Pages console';

function whenOf(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

function invitationMessage(mail: InvitationMail): MailMessage {
  const who = mail.invitedBy === null ? 'You have been invited' : `${mail.invitedBy} invited you`;
  const lead = `${who} to the Audience Pages console, where your team authors, publishes and follows its pages.`;
  const rule = `The link signs you in once and expires in 15 minutes (at ${whenOf(mail.expiresAt)}).`;
  const ignore = 'If you did not expect this e-mail, ignore it: nothing happens without the link.';
  const text = `${lead}\n\nSign in: ${mail.url}\n\n${rule}\n\n${ignore}\n`;
  const html = renderToStaticMarkup(
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <title>{SUBJECT}</title>
      </head>
      <body style="font-family: system-ui, sans-serif; line-height: 1.5; color: #1b1f24">
        <p>{lead}</p>
        <p>
          <a href={mail.url} style="display: inline-block; padding: 0.5em 1em; background: #1f4fd1; color: #ffffff">
            Sign in to the console
          </a>
        </p>
        <p>
          Or open this address: <span style="word-break: break-all">{mail.url}</span>
        </p>
        <p>{rule}</p>
        <p style="color: #59616b">{ignore}</p>
      </body>
    </html>,
  );
  return { to: mail.email, subject: SUBJECT, text, html: `<!doctype html>${html}` };
}

/** Sends the invitation when there is a mailer; null when there is none (SMTP_URL unset). */
export async function mailInvitation(mailer: Mailer | null, mail: InvitationMail): Promise<MailOutcome | null> {
  return mailer === null ? null : mailer.send(invitationMessage(mail));
}
