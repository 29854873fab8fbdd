import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

/**
 * PostgreSQL cannot store the NUL character in text, and no id, name or parameter legitimately
 * holds one; SQLite would store it silently. Refusing it at the door keeps both engines alike
 * and turns what would be a driver error (a 500) into a clear 4xx.
 */
export function registerNulGuard(app: FastifyInstance) {
  app.addHook('onRequest', async (request) => {
    if (/%00/i.test(request.url)) {
      throw new AppError('bad_request', 'The URL contains a NUL character (%00), which no id or parameter may hold.');
    }
  });
  app.addHook('preValidation', async (request) => {
    const path = nulPath(request.body, '/body');
    if (path !== null) {
      throw new AppError('validation_failed', `The request is invalid: ${path} must not contain the NUL character.`, [
        { path, message: 'must not contain the NUL character (\\u0000)' },
      ]);
    }
  });
}

/** The JSON Pointer of the first string (or key) holding a NUL character, or null. */
function nulPath(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPath(value[i], `${path}/${i}`);
      if (found !== null) return found;
    }
    return null;
  }
  for (const [key, child] of Object.entries(value)) {
    const childPath = `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (key.includes('\u0000')) return childPath;
    const found = nulPath(child, childPath);
    if (found !== null) return found;
  }
  return null;
}
