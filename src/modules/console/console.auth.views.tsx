import { Csrf, renderDocument, TableRegion, type Viewer, When } from './console.views.js';

/** The page a sign-in link opens: one button, so that a mail scanner fetching the link uses nothing. */
export function renderSignIn(token: string): string {
  return renderDocument({
    title: 'Sign in',
    viewer: null,
    body: (
      <div class="narrow">
        <h1>Sign in to the console</h1>
        <p>This link signs you in once. It expires 15 minutes after it was made.</p>
        <form method="post" action="/console/sign-in" class="stack">
          <input type="hidden" name="token" value={token} />
          <button type="submit">Sign in</button>
        </form>
      </div>
    ),
  });
}

/** The console's front door for someone not signed in. */
export function renderSignedOut(reason: 'signed-out' | 'expired' | 'none'): string {
  const text =
    reason === 'signed-out'
      ? 'You are signed out.'
      : reason === 'expired'
        ? 'Your session has ended. Sign in again with a new link.'
        : 'Sign in with the link you were sent.';
  return renderDocument({
    title: 'Sign in',
    viewer: null,
    body: (
      <div class="narrow">
        <h1>Audience Pages console</h1>
        <p>{text}</p>
        <p class="hint">
          No link? Ask a colleague who uses the console to invite you, or an operator to run{' '}
          <code>npx audience-pages user invite --tenant TENANT_ID --email you@example.com</code>.
        </p>
      </div>
    ),
  });
}

export interface UserRow {
  userId: string;
  email: string;
  createdAt: string;
  lastSignInAt: string | null;
  invitedByOperator: boolean;
}

export function renderUsers(options: {
  viewer: Viewer;
  users: UserRow[];
  /** `mailed`: null when no mail is sent (SMTP_URL unset), else whether it went. */
  invited?: { email: string; url: string; expiresAt: string; mailed?: { sent: boolean } | null };
  error?: { email: string; message: string };
}): string {
  const { viewer, invited, error } = options;
  return renderDocument({
    title: 'Users',
    viewer,
    section: 'users',
    body: (
      <>
        <h1>Users</h1>
        <p class="lead">Everyone here signs in to this tenant's console.</p>
        {invited?.mailed?.sent === false && (
          <p class="notice error" role="alert">
            The sign-in link for <strong>{invited.email}</strong> was made, but the e-mail could not be sent (the mail
            server did not take it; the operator's log says why). Copy the link below and send it yourself.
          </p>
        )}
        {invited && (
          <div class="notice" role="status">
            {invited.mailed?.sent === true ? (
              <p>
                The sign-in link was sent by e-mail to <strong>{invited.email}</strong>. It works once, until{' '}
                <When at={invited.expiresAt} />; you may also pass it on yourself:
              </p>
            ) : (
              <p>
                Send this one-time sign-in link to <strong>{invited.email}</strong>. It works once, until{' '}
                <When at={invited.expiresAt} />.
              </p>
            )}
            <p class="secret">{invited.url}</p>
            <button type="button" class="secondary" data-copy={invited.url}>
              Copy link
            </button>
          </div>
        )}
        <h2>Invite a colleague</h2>
        <form method="post" action="/console/users" class="stack">
          <Csrf viewer={viewer} />
          <div>
            <label for="invite-email">E-mail address</label>
            <input
              id="invite-email"
              type="email"
              name="email"
              required
              maxLength={254}
              autocomplete="off"
              value={error?.email ?? ''}
              aria-invalid={error ? 'true' : undefined}
              aria-describedby={error ? 'invite-error' : undefined}
            />
            {error && (
              <p id="invite-error" class="notice error">
                {error.message}
              </p>
            )}
          </div>
          <div>
            <button type="submit">Invite</button>
          </div>
        </form>
        <h2>People with access</h2>
        <TableRegion label="People with access">
          <table>
            <thead>
              <tr>
                <th scope="col">E-mail</th>
                <th scope="col">Last signed in</th>
                <th scope="col" class="hide-small">
                  Invited
                </th>
              </tr>
            </thead>
            <tbody>
              {options.users.map((u) => (
                <tr key={u.userId}>
                  <td>{u.email}</td>
                  <td>{u.lastSignInAt === null ? 'never' : <When at={u.lastSignInAt} />}</td>
                  <td class="hide-small">
                    <When at={u.createdAt} />
                    {u.invitedByOperator ? ' (operator)' : ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      </>
    ),
  });
}
