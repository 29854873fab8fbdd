import { renderInsight, duration } from './console.analytics.views.js';
import { TableRegion, type Viewer, When } from './console.views.js';

export interface PersonView {
  personId: string;
  name: string | null;
  email: string | null;
  domain: string | null;
  phoneNumber: string | null;
  socialProfileUrl: string | null;
  createdAt: string;
}

export interface AccountView {
  accountId: string;
  domain: string;
  name: string | null;
  linkedPersonsCount: number;
}

/** One entry of a person's timeline: a person log entry or a visit. */
export type TimelineEntry =
  | { kind: 'log'; at: string; source: string; type: string; text: string }
  | {
      kind: 'visit';
      at: string;
      pageId: string;
      pageTitle: string;
      seconds: number;
      scroll: number;
      converted: boolean;
      submitted: boolean;
      questions: number;
      utmSource: string;
    };

function personLabel(p: PersonView): string {
  return p.name ?? p.email ?? p.phoneNumber ?? p.personId;
}

function PersonTable({ persons, label }: { persons: PersonView[]; label: string }) {
  return (
    <TableRegion label={label}>
      <table>
        <thead>
          <tr>
            <th scope="col">Person</th>
            <th scope="col">E-mail</th>
            <th scope="col" class="hide-small">
              Domain
            </th>
          </tr>
        </thead>
        <tbody>
          {persons.map((p) => (
            <tr key={p.personId}>
              <td>
                <a href={`/console/people/${p.personId}`}>{personLabel(p)}</a>
              </td>
              <td>{p.email ?? '—'}</td>
              <td class="hide-small">{p.domain ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableRegion>
  );
}

function Tabs({ current }: { current: 'persons' | 'accounts' }) {
  return (
    <nav aria-label="People" class="actions">
      <a href="/console/people" aria-current={current === 'persons' ? 'page' : undefined}>
        Persons
      </a>
      <a href="/console/accounts" aria-current={current === 'accounts' ? 'page' : undefined}>
        Accounts
      </a>
    </nav>
  );
}

/** People: search persons by name, e-mail, domain or phone number. */
export function renderPeople(options: {
  viewer: Viewer;
  query: string;
  persons: PersonView[] | null;
  nextHref: string | null;
}): string {
  const { query, persons } = options;
  return renderInsight({
    title: 'People',
    viewer: options.viewer,
    section: 'people',
    body: (
      <>
        <h1>People</h1>
        <Tabs current="persons" />
        <form method="get" action="/console/people" class="search" role="search">
          <label for="person-search" class="skip">
            Search persons by name, e-mail, domain or phone
          </label>
          <input
            id="person-search"
            type="search"
            name="q"
            value={query}
            placeholder="Name, e-mail, domain or phone"
            maxLength={200}
          />
          <button type="submit" class="secondary">
            Search
          </button>
        </form>
        {persons === null ? (
          <p class="lead">Search for a person by name, e-mail address, company domain or phone number.</p>
        ) : persons.length === 0 ? (
          <p>No person matches “{query}”.</p>
        ) : (
          <PersonTable persons={persons} label="Persons found" />
        )}
        {options.nextHref && (
          <nav class="pager" aria-label="More persons">
            <a href={options.nextHref}>More persons</a>
          </nav>
        )}
      </>
    ),
  });
}

/** A person: who they are, their account, and their activity (person logs and visits), newest first. */
export function renderPerson(options: {
  viewer: Viewer;
  person: PersonView;
  account: AccountView | null;
  accountDomain: string | null;
  timeline: TimelineEntry[];
  logsTotal: number;
}): string {
  const { person, account } = options;
  return renderInsight({
    title: personLabel(person),
    viewer: options.viewer,
    section: 'people',
    body: (
      <>
        <nav aria-label="Breadcrumb">
          <a href="/console/people">People</a>
        </nav>
        <h1>{personLabel(person)}</h1>
        <dl class="facts">
          <dt>E-mail</dt>
          <dd>{person.email ?? '—'}</dd>
          <dt>Phone</dt>
          <dd>{person.phoneNumber ?? '—'}</dd>
          <dt>Domain</dt>
          <dd>{person.domain ?? '—'}</dd>
          <dt>Profile</dt>
          <dd>{person.socialProfileUrl ?? '—'}</dd>
          <dt>Account</dt>
          <dd>
            {account !== null ? (
              <a href={`/console/accounts/${account.accountId}`}>{account.name ?? account.domain}</a>
            ) : (
              (options.accountDomain ?? 'none')
            )}
          </dd>
          <dt>Known since</dt>
          <dd>
            <When at={person.createdAt} />
          </dd>
          <dt>Person id</dt>
          <dd>
            <code>{person.personId}</code>
          </dd>
        </dl>
        <h2>Activity</h2>
        <p class="lead">
          Latest log entries ({options.logsTotal} in all) and visits to the pages addressed to this person, newest
          first.
        </p>
        {options.timeline.length === 0 ? (
          <p>No activity yet.</p>
        ) : (
          <ol class="timeline">
            {options.timeline.map((e, i) => (
              <li key={i}>
                <When at={e.at} /> · {e.kind === 'log' ? <span class="kind">{`${e.source} · ${e.type}`}</span> : null}
                {e.kind === 'visit' ? (
                  <>
                    <span class="kind">Visit</span> of{' '}
                    <a href={`/console/pages/${e.pageId}/analytics`}>{e.pageTitle}</a>
                  </>
                ) : null}
                <br />
                {e.kind === 'log' ? (
                  <span class="hint">{e.text}</span>
                ) : (
                  <span class="hint">
                    {duration(e.seconds)} engaged, scrolled {Math.round(e.scroll)} %
                    {e.submitted ? ', submitted the form' : ''}
                    {e.converted ? ', converted' : ''}
                    {e.questions > 0 ? `, asked ${e.questions} questions` : ''}
                    {e.utmSource !== '' ? `, from ${e.utmSource}` : ''}
                  </span>
                )}
              </li>
            ))}
          </ol>
        )}
      </>
    ),
  });
}

/** Accounts: the tenant's accounts (a domain filter), with how many persons each links. */
export function renderAccounts(options: {
  viewer: Viewer;
  query: string;
  accounts: AccountView[];
  totalCount: number | null;
  nextHref: string | null;
}): string {
  return renderInsight({
    title: 'Accounts',
    viewer: options.viewer,
    section: 'people',
    body: (
      <>
        <h1>Accounts</h1>
        <Tabs current="accounts" />
        <form method="get" action="/console/accounts" class="search" role="search">
          <label for="account-search" class="skip">
            Search accounts by domain or name
          </label>
          <input
            id="account-search"
            type="search"
            name="q"
            value={options.query}
            placeholder="Domain or name"
            maxLength={200}
          />
          <button type="submit" class="secondary">
            Search
          </button>
        </form>
        {options.totalCount !== null && <p class="lead">{options.totalCount} accounts</p>}
        {options.accounts.length === 0 ? (
          <p>No accounts{options.query === '' ? ' yet' : ' match'}.</p>
        ) : (
          <TableRegion label="Accounts">
            <table>
              <thead>
                <tr>
                  <th scope="col">Account</th>
                  <th scope="col" class="num">
                    Persons
                  </th>
                </tr>
              </thead>
              <tbody>
                {options.accounts.map((a) => (
                  <tr key={a.accountId}>
                    <td>
                      <a href={`/console/accounts/${a.accountId}`}>{a.name ?? a.domain}</a>
                      <br />
                      <span class="hint">{a.domain}</span>
                    </td>
                    <td class="num">{a.linkedPersonsCount}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableRegion>
        )}
        {options.nextHref && (
          <nav class="pager" aria-label="More accounts">
            <a href={options.nextHref}>More accounts</a>
          </nav>
        )}
      </>
    ),
  });
}

/** An account with its linked persons. */
export function renderAccount(options: { viewer: Viewer; account: AccountView; persons: PersonView[] }): string {
  const { account } = options;
  return renderInsight({
    title: account.name ?? account.domain,
    viewer: options.viewer,
    section: 'people',
    body: (
      <>
        <nav aria-label="Breadcrumb">
          <a href="/console/accounts">Accounts</a>
        </nav>
        <h1>{account.name ?? account.domain}</h1>
        <dl class="facts">
          <dt>Domain</dt>
          <dd>{account.domain}</dd>
          <dt>Account id</dt>
          <dd>
            <code>{account.accountId}</code>
          </dd>
        </dl>
        <h2>Linked persons ({account.linkedPersonsCount})</h2>
        {options.persons.length === 0 ? (
          <p>No person is linked to this account.</p>
        ) : (
          <PersonTable persons={options.persons} label="Linked persons" />
        )}
        {options.persons.length < account.linkedPersonsCount && (
          <p class="hint">
            The {options.persons.length} most recent are shown; search People for the others by domain.
          </p>
        )}
      </>
    ),
  });
}
