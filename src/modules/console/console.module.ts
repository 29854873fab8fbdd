import type { ServiceModule } from '../module.js';
import { inviteUser } from './console.auth.service.js';
import { consoleCommands, operatorSignInUrl } from './console.cli.js';
import { consoleRoutes } from './console.routes.js';

/**
 * The console (issue 28, docs/console.md): the screens people use to run their pages, on the API
 * host under /console, signed in with one-time links. Its screens call the modules' services.
 */
export const consoleModule: ServiceModule = {
  name: 'console',
  publicRoutes: consoleRoutes,
  commands: consoleCommands,
  // The demo's tenant gets a console user and a link to sign in with.
  demo: async (ctx) => {
    const invitation = await inviteUser(ctx.scope, ctx.clock, { email: 'demo@example.com', invitedBy: null });
    return {
      email: invitation.email,
      signInUrl: operatorSignInUrl(ctx.config, invitation),
      expiresAt: invitation.expiresAt,
    };
  },
};
