import { createRequire } from 'node:module';
import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';

/**
 * Email domains that say nothing about the company a person works for, from maintained lists
 * (updated with `npm update`, never by hand):
 *
 * - free-mail providers: `email-providers` (all.json, derhuerst/email-providers, about 8,700
 *   domains: gmail.com, outlook.com, gmx.de, gmx.at, web.de, proton.me, …);
 * - disposable (throwaway) providers: `disposable-email-domains-js` (the community list
 *   disposable-email-domains/disposable-email-domains, about 8,800 domains: mailinator.com,
 *   yopmail.com, …).
 *
 * Domains are compared exactly, in the canonical form of lib/domain-name.ts (lowercase, punycode).
 */

const require = createRequire(import.meta.url);
const FREE_MAIL: ReadonlySet<string> = new Set(require('email-providers/all.json') as string[]);
const DISPOSABLE: ReadonlySet<string> = disposableEmailBlocklistSet();

/** A disposable (throwaway) mailbox provider. */
export function isDisposableMailDomain(domain: string): boolean {
  return DISPOSABLE.has(domain);
}

/** A provider anyone can get an address at: free mail, or a disposable mailbox. */
export function isFreeMailDomain(domain: string): boolean {
  return FREE_MAIL.has(domain) || DISPOSABLE.has(domain);
}
