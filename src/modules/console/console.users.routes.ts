import type { FastifyPluginAsync } from 'fastify';
import { AppError } from '../../http/errors.js';
import { inviteUser, listUsers } from './console.auth.service.js';
import { renderUsers } from './console.auth.views.js';
import { consoleOrigin, formText, sendHtml, signInUrl, userOf } from './console.http.js';

/** Users: who may sign in to the tenant's console, and inviting a colleague (a one-time link). */
export const consoleUsersRoutes: FastifyPluginAsync = async (app) => {
  const { clock, config } = app.ctx;

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
      const invited = { email: invitation.email, url, expiresAt: invitation.expiresAt };
      return sendHtml(reply, renderUsers({ viewer: user, users: await listUsers(user.scope), invited }));
    } catch (error) {
      if (!(error instanceof AppError) || error.status !== 422) throw error;
      const users = await listUsers(user.scope);
      const message = error.errors[0]?.message ?? error.detail;
      return sendHtml(reply, renderUsers({ viewer: user, users, error: { email, message } }), 422);
    }
  });
};
