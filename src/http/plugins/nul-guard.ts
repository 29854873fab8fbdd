import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

/** How deeply objects and arrays may nest in a JSON body (docs/api.md, Errors). */
const MAX_JSON_DEPTH = 64;

/**
 * Refuses, at the door, what would otherwise surface as a driver error or a crash (a 500):
 * - the NUL character: PostgreSQL cannot store it in text, SQLite would store it silently, and no
 *   id, name or parameter legitimately holds one;
 * - lone UTF-16 surrogates (`"\ud800"` is valid JSON text but no Unicode text): PostgreSQL's
 *   `jsonb` and UTF-8 text refuse them, SQLite would store mangled bytes;
 * - JSON nested deeper than MAX_JSON_DEPTH: every later step that walks the body (validation,
 *   fingerprinting, serialization) could overflow the stack on a 200,000-deep body.
 * The walk is iterative, so the check itself cannot overflow, and it runs before validation.
 */
export function registerNulGuard(app: FastifyInstance) {
  // Callback hooks: an async hook costs every request a promise and a turn of the hook runner.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!NUL_IN_URL.test(request.url)) return done();
    done(new AppError('bad_request', 'The URL contains a NUL character (%00), which no id or parameter may hold.'));
  });
  app.addHook('preValidation', (request, _reply, done) => {
    done(findBodyProblem(request.body) ?? undefined);
  });
}

const NUL_IN_URL = /%00/i;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function badText(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'must not contain a lone UTF-16 surrogate (\\ud800-\\udfff unpaired)';
  return null;
}

/** Only what JSON.parse makes is walked: a raw upload (a Buffer) is bytes, not fields. */
function isJsonContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  if (Array.isArray(value)) return true;
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Where a value sits in the body: its parent's place and its key (a JSON pointer only when reported). */
interface Place {
  parent: Place | null;
  key: string | number;
}

function pointer(place: Place | null): string {
  let path = '';
  for (let at = place; at !== null; at = at.parent) {
    path = `/${String(at.key).replace(/~/g, '~0').replace(/\//g, '~1')}${path}`;
  }
  return `/body${path}`;
}

/**
 * The first offending field of a parsed JSON body, as a problem, or null. Depth-first, in order.
 * Every request with a body comes through here, so a field's path is built only when reported.
 */
function findBodyProblem(body: unknown): AppError | null {
  const stack: { value: unknown; place: Place | null; depth: number }[] = [{ value: body, place: null, depth: 0 }];
  while (stack.length > 0) {
    const { value, place, depth } = stack.pop()!;
    if (typeof value === 'string') {
      const reason = badText(value);
      if (reason !== null) return invalidText(pointer(place), reason);
      continue;
    }
    if (!isJsonContainer(value)) continue;
    if (depth >= MAX_JSON_DEPTH) {
      const path = pointer(place);
      return new AppError(
        'json_too_deep',
        `The request is invalid: ${path} nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`,
        [{ path, message: `must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels` }],
      );
    }
    const children: { value: unknown; place: Place; depth: number }[] = [];
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++)
        children.push({ value: value[i], place: { parent: place, key: i }, depth: depth + 1 });
    } else {
      for (const key of Object.keys(value)) {
        const reason = badText(key);
        if (reason !== null) return invalidText(pointer({ parent: place, key }), reason);
        children.push({ value: value[key], place: { parent: place, key }, depth: depth + 1 });
      }
    }
    // Reversed, so the first field in document order is reported first.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return null;
}

function invalidText(path: string, message: string): AppError {
  return new AppError('validation_failed', `The request is invalid: ${path} ${message}.`, [{ path, message }]);
}
