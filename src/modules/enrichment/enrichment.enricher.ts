import { canonicalDomain } from '../../lib/domain-name.js';
import { isDisposableMailDomain, isFreeMailDomain } from '../../lib/mail-domains.js';

/** Why a job ended in `form.enrichment_failed` (docs/forms.md, Enrichment). */
export type FailureReason =
  | 'free_mail_domain'
  | 'disposable_domain'
  | 'invalid_domain'
  | 'provider_rejected'
  | 'provider_unavailable'
  | 'enrichment_interrupted';

/** What an enricher is asked about: the submission, and the company domain its email names. */
export interface EnrichmentInput {
  email: string;
  /** The canonical company domain of the email (never a free-mail or disposable one). */
  domain: string;
  name: string | null;
  company: string | null;
}

/** What an enricher learned; null = nothing known. */
export interface EnrichmentFindings {
  personName: string | null;
  companyName: string | null;
}

export type EnricherOutcome =
  | { ok: true; findings: EnrichmentFindings }
  | {
      ok: false;
      reason: 'provider_rejected' | 'provider_unavailable';
      /** Whether trying again later may succeed (timeouts, 5xx, 429), and after how long at least. */
      retry: { afterMs: number } | null;
      /** For the job's `last_error` and the logs; never sent to subscribers. */
      detail: string;
    };

/**
 * Looks a form submission up somewhere. Every enricher runs after the built-in domain rules
 * (`companyDomainOfEmail`): an address at a free-mail, disposable or invalid domain never reaches
 * one, since no account could be made of it. Runs outside any transaction; must not throw.
 */
export interface Enricher {
  /** The `provider` of the events. */
  readonly name: string;
  enrich(input: EnrichmentInput): Promise<EnricherOutcome>;
  close?(): void;
}

/**
 * The built-in enricher: what the email's domain says (the company domain, an account for it),
 * and nothing more; it has no outside source, so it always succeeds once the domain rules passed.
 */
export const domainEnricher: Enricher = {
  name: 'domain',
  enrich: () => Promise.resolve({ ok: true, findings: { personName: null, companyName: null } }),
};

/**
 * The domain rules: the email's domain in the accounts module's canonical form, unless it says
 * nothing about a company. Disposable is checked before free mail (the free-mail list also holds
 * some throwaway providers, and "disposable" is the more useful answer). No DNS query is made:
 * a domain is invalid when it is not a public host name (docs/forms.md, Enrichment).
 */
export function companyDomainOfEmail(
  email: string,
): { ok: true; domain: string } | { ok: false; reason: 'free_mail_domain' | 'disposable_domain' | 'invalid_domain' } {
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return { ok: false, reason: 'invalid_domain' };
  const canonical = canonicalDomain(email.slice(at + 1));
  if (!canonical.ok) return { ok: false, reason: 'invalid_domain' };
  if (isDisposableMailDomain(canonical.domain)) return { ok: false, reason: 'disposable_domain' };
  if (isFreeMailDomain(canonical.domain)) return { ok: false, reason: 'free_mail_domain' };
  return { ok: true, domain: canonical.domain };
}
