import { createHash } from 'node:crypto';
import { AppError } from '../../http/errors.js';
import { normalizeIdentity, PHONE_PATTERN } from '../persons/index.js';

/**
 * What a visitor may send in a page's form (docs/forms.md, Submission rules). Pure: the route
 * reads the body, these rules say what is wrong with it field by field, in the visitor's words.
 */

/** Characters per field (the person limits where the field becomes part of the person). */
export const FORM_LIMITS = {
  email: 254,
  name: 255,
  phoneNumber: 16,
  company: 255,
  message: 5_000,
  /** The page script's per-view token (a UUID; anything of these characters up to this length). */
  token: 100,
  /** The whole body, bytes: the fields above plus the hidden ones, with room to spare. */
  bodyBytes: 16 * 1024,
} as const;

/** The visitor's fields, in the order the form shows them. */
export const FORM_FIELDS = ['email', 'name', 'phoneNumber', 'company', 'message'] as const;
export type FormField = (typeof FORM_FIELDS)[number];

/** The honeypot: a field people never see nor reach; bots that fill every input fill it. */
export const HONEYPOT_FIELD = 'website';

/** Hidden fields: which form (the action), and what the page script adds per view. */
export const HIDDEN = {
  audience: 'ap_audience',
  action: 'ap_action',
  token: 'ap_token',
  session: 'ap_session',
  /** The service's signed note of when this client got the form (the minimum fill time's clock). */
  stamp: 'ap_stamp',
} as const;

export type FormValues = Record<FormField, string>;

interface FormInput {
  values: FormValues;
  audienceId: string;
  actionId: string;
  /** The page script's per-view token: the idempotency key. */
  token: string | null;
  /** The page script's session token (audience-sessions SessionTokens), if the visit is recorded. */
  sessionToken: string | null;
  /** The form stamp sent back (checked by the visitor side, which made it), if any. */
  stamp: string | null;
}

export interface FieldProblem {
  field: FormField | 'form';
  message: string;
}

export type Reading =
  | { ok: true; input: FormInput }
  | {
      ok: false;
      values: FormValues;
      stamp: string | null;
      problems: FieldProblem[];
      code: 'validation_failed' | 'spam_suspected';
    };

const TOKEN = /^[A-Za-z0-9-]{8,100}$/;
const PHONE = new RegExp(PHONE_PATTERN);

const one = (body: Record<string, unknown>, key: string): string => {
  const value = body[key];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : typeof first === 'number' ? String(first) : '';
};

const LABELS: Record<FormField, string> = {
  email: 'Email',
  name: 'Name',
  phoneNumber: 'Phone number',
  company: 'Company',
  message: 'Message',
};

/**
 * Reads a submission body (form-urlencoded or JSON, already parsed into an object): the fields
 * against their rules, and the honeypot. The fill time is the visitor side's to check (its stamp).
 */
export function readSubmission(body: Record<string, unknown>): Reading {
  const values = Object.fromEntries(FORM_FIELDS.map((f) => [f, one(body, f).trim()])) as FormValues;
  const stampText = one(body, HIDDEN.stamp);
  const stamp = stampText !== '' && stampText.length <= 100 ? stampText : null;
  const problems: FieldProblem[] = [];

  for (const field of FORM_FIELDS) {
    if (values[field].length > FORM_LIMITS[field]) {
      problems.push({ field, message: `${LABELS[field]} must be at most ${FORM_LIMITS[field]} characters.` });
    }
  }
  if (values.email === '') problems.push({ field: 'email', message: 'Enter your email address.' });
  else if (!problems.some((p) => p.field === 'email') && !validEmail(values.email)) {
    problems.push({ field: 'email', message: 'Enter an email address like name@example.com.' });
  }
  if (values.phoneNumber !== '' && !PHONE.test(values.phoneNumber)) {
    problems.push({
      field: 'phoneNumber',
      message: 'Enter the phone number in international format, e.g. +14155550123.',
    });
  }
  if (problems.length > 0) return { ok: false, values, stamp, problems, code: 'validation_failed' };

  if (one(body, HONEYPOT_FIELD) !== '') {
    return {
      ok: false,
      values,
      stamp,
      code: 'spam_suspected',
      problems: [
        { field: 'form', message: 'This looked automated and was not sent. Please wait a moment and try again.' },
      ],
    };
  }

  const token = one(body, HIDDEN.token);
  const session = one(body, HIDDEN.session);
  return {
    ok: true,
    input: {
      values,
      audienceId: one(body, HIDDEN.audience),
      actionId: one(body, HIDDEN.action),
      token: TOKEN.test(token) ? token : null,
      sessionToken: session !== '' && session.length <= 400 ? session : null,
      stamp,
    },
  };
}

/** The person rules' own email check (persons.identity.ts), so a form accepts what the API accepts. */
function validEmail(email: string): boolean {
  try {
    normalizeIdentity({ email });
    return true;
  } catch (error) {
    if (error instanceof AppError) return false;
    throw error;
  }
}

/**
 * What makes two submissions "identical" without a token: the same page, audience, form and every
 * field (email compared case-insensitively).
 */
export function contentHash(pageId: string, audienceId: string, actionId: string, values: FormValues): string {
  const parts = [
    pageId,
    audienceId,
    actionId,
    values.email.toLowerCase(),
    ...FORM_FIELDS.slice(1).map((f) => values[f]),
  ];
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}
