import nodemailer from 'nodemailer';
import type { Config } from '../config.js';
import { SECOND_MS } from '../lib/clock.js';

/**
 * Mail the service sends itself (console invitations: docs/console.md#invitations-by-e-mail),
 * through the SMTP server of `SMTP_URL` with nodemailer. One connection per message (invitations
 * are rare), no pool to close. Nothing here logs: nodemailer's own logger is off, and a failure
 * comes back as a short reason that names neither the message nor the server's credentials.
 */

/** A message: plain text and its HTML twin (already escaped by whoever rendered it). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export type MailOutcome = { sent: true } | { sent: false; reason: string };

export interface Mailer {
  send(message: MailMessage): Promise<MailOutcome>;
}

/** How long a send may take in all: connecting, greeting, each command, the message. */
const SMTP_TIMEOUT_MS = 10 * SECOND_MS;
const MAX_REASON = 300;

/** The configured mailer, or null when `SMTP_URL` is unset (no mail is sent). */
export function smtpMailer(config: Pick<Config, 'smtpUrl' | 'mailFrom'>): Mailer | null {
  if (config.smtpUrl === null || config.mailFrom === null) return null;
  const url = new URL(config.smtpUrl);
  const secrets = [url.password, decodeURIComponent(url.password), url.username, decodeURIComponent(url.username)]
    .filter((s) => s.length >= 3)
    .sort((a, b) => b.length - a.length);
  const transport = nodemailer.createTransport(
    {
      url: config.smtpUrl,
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
      dnsTimeout: SMTP_TIMEOUT_MS,
      logger: false,
      debug: false,
    },
    { from: config.mailFrom },
  );
  return {
    async send(message) {
      try {
        await transport.sendMail({ ...message, disableFileAccess: true, disableUrlAccess: true });
        return { sent: true };
      } catch (err) {
        return { sent: false, reason: reasonOf(err, secrets) };
      }
    },
  };
}

/** What went wrong, in a line, without the credentials (a server may echo what it was sent). */
function reasonOf(err: unknown, secrets: string[]): string {
  const e = err as { code?: unknown; responseCode?: unknown; response?: unknown; message?: unknown };
  const said = typeof e.response === 'string' ? e.response : typeof e.message === 'string' ? e.message : String(err);
  let reason = `${typeof e.code === 'string' ? `${e.code}: ` : ''}${said}`.replace(/\s+/g, ' ').trim();
  for (const secret of secrets) reason = reason.split(secret).join('…');
  reason = reason.replace(/token=[\w-]+/g, 'token=…');
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON - 1)}…` : reason;
}
