import { describe, expect, it } from 'vitest';
import { workEmailDomain } from './persons.identity.js';

describe('workEmailDomain (which emails link a person to an account)', () => {
  it('a company address links to its canonical domain', () => {
    expect(workEmailDomain('jane@sales.acme.example')).toBe('sales.acme.example');
    expect(workEmailDomain('jane@www.acme.example')).toBe('acme.example');
  });

  it('free-mail providers of the maintained list never link, every gmx.* included', () => {
    for (const domain of ['gmail.com', 'gmx.de', 'gmx.at', 'gmx.fr', 'gmx.li', 'web.de', 'proton.me', 'yahoo.co.jp']) {
      expect(workEmailDomain(`someone@${domain}`)).toBeNull();
    }
  });

  it('disposable mailboxes never link either', () => {
    for (const domain of ['mailinator.com', 'yopmail.com', 'guerrillamail.com']) {
      expect(workEmailDomain(`someone@${domain}`)).toBeNull();
    }
  });
});
