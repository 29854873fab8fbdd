import type { FastifyPluginAsync } from 'fastify';
import { AppError } from '../../http/errors.js';
import { smtpMailer } from '../../net/smtp-mailer.js';
import { inviteUser, listUsers } from './console.auth.service.js';
import { renderUsers } from './console.auth.views.js';
import { consoleOrigin, formText, sendHtml, signInUrl, userOf } from './console.http.js';
import { mailInvitation } from './console.invite-mail.js';

/**
 * Users: who may sign in to the tenant's console, and inviting a colleague (a one-time link, also
 * e-mailed when SMTP_URL is set: a failed mail is a 502 page that still shows the link).
 */
export const consoleUsersRoutes: FastifyPluginAsync = async (app) => {
  const { clock, config } = app.ctx;
  const mailer = smtpMailer(config);

  app.get('/users', { schema: { hide: true } }, async (request, reply) => {
    const user = userOf(request);
    return sendHtml(reply, renderUsers({ viewer: user, users: await listUsers(user.scope) }));
  });

  app.post('/users', { schema: { hide: true } }, async (request, reply) => {
    const user = userOf(request);
    const email = formText(request, 'email', 300);
    try {
      const invitation = await inviteUser(user.scope, clock, { email, invitedBy: user.userId });
      const url = signInUrl(consoleOrigin(config, request), invitation.token);
      // Sent after the invitation's transaction committed: no database lock waits on the mail server.
      const mailed = await mailInvitation(mailer, {
        email: invitation.email,
        url,
        expiresAt: invitation.expiresAt,
        invitedBy: user.email,
      });
      if (mailed?.sent === false) {
        // The reason only: never the link, the address or the server's credentials.
        request.log.warn({ userId: invitation.userId, reason: mailed.reason }, 'invitation e-mail not sent');
      }
      const invited = { email: invitation.email, url, expiresAt: invitation.expiresAt, mailed };
      const page = renderUsers({ viewer: user, users: await listUsers(user.scope), invited });
      return sendHtml(reply, page, mailed?.sent === false ? 502 : 200);
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 422) throw error;
      const users = await listUsers(user.scope);
      const message = error.errors[0]?.message ?? error.detail;
      return sendHtml(reply, renderUsers({ viewer: user, users, error: { email, message } }), 422);
    }
  });
};
