import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.js';
import { AppError, type FieldError } from '../errors.js';

/** Turns every error into RFC 9457 problem+json; the only place that writes error bodies. */
export function registerProblemHandler(app: FastifyInstance) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = toAppError(error, request);
    if (problem.status >= 500) request.log.error({ err: error }, 'request failed');
    return sendProblem(request, reply, problem);
  });
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, problem: AppError) {
  return reply
    .code(problem.status)
    .type('application/problem+json')
    .send({
      type: `urn:audience-pages:problem:${problem.code}`,
      title: problem.title,
      status: problem.status,
      detail: problem.detail,
      code: problem.code,
      instance: request.url.split('?')[0],
      requestId: request.id,
      errors: problem.errors,
      ...problem.extensions,
    });
}

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };

/** `request`: the route's own body limit names the limit in a 413 (the app's is BODY_LIMIT_BYTES). */
export function toAppError(error: FastifyError, request?: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  if (error.validation) {
    const part = PART_NAMES[error.validationContext ?? 'body'] ?? 'body';
    return validationError(part, error.validation as AjvError[]);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(
        'unsupported_media_type',
        'Send the request body as JSON with Content-Type: application/json.',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(
        'payload_too_large',
        `The request body is larger than the limit of ${byteSize(request?.routeOptions?.bodyLimit)}.`,
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError(
        'malformed_json',
        'The body is empty but Content-Type is application/json; send {} for an empty object.',
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('malformed_json', 'The request body is not valid JSON.');
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON|prototype|constructor/i.test(error.message))) {
    return new AppError('malformed_json', 'The request body is not valid JSON.');
  }
  if (isUniqueViolation(error)) return new AppError('conflict', 'The request conflicts with an existing resource.');
  if (isForeignKeyViolation(error))
    return new AppError('validation_failed', 'The request refers to a resource that does not exist.');
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError('bad_request', error.message, [], error.statusCode);
  }
  return new AppError('internal_error', 'Something went wrong on our side. The request id identifies it in our logs.');
}

/** A byte count as people read it: `8 KiB`, `1 MiB`, `1536 bytes`. */
function byteSize(bytes: number | undefined): string {
  if (bytes === undefined) return 'this endpoint';
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Ajv's errors, one per offending field, with messages a person can act on. */
function validationError(part: string, errors: AjvError[]): AppError {
  const byPath = new Map<string, string[]>();
  const add = (path: string, message: string) => {
    const list = byPath.get(path) ?? [];
    if (!list.includes(message)) list.push(message);
    byPath.set(path, list);
  };
  const unionPaths = new Set(errors.filter((e) => e.keyword === 'anyOf').map((e) => e.instancePath));
  for (const e of errors) {
    const base = `/${part}${e.instancePath}`;
    if (e.keyword === 'required') add(`${base}/${String(e.params.missingProperty)}`, 'is required');
    else if (e.keyword === 'additionalProperties')
      add(`${base}/${String(e.params.additionalProperty)}`, 'is not a known field');
    else if (e.keyword === 'anyOf') continue;
    else if (unionPaths.has(e.instancePath) && e.keyword === 'type') add(base, `must be ${String(e.params.type)}`);
    else add(base, e.message ?? 'is invalid');
  }
  const fieldErrors: FieldError[] = [...byPath].map(([path, messages]) => ({
    path,
    message:
      messages.length > 1 && messages.every((m) => m.startsWith('must be '))
        ? `must be ${messages.map((m) => m.slice(8)).join(' or ')}`
        : messages.join('; '),
  }));
  const first = fieldErrors[0];
  const detail = first
    ? `${first.path} ${first.message}${fieldErrors.length > 1 ? ` (and ${fieldErrors.length - 1} more)` : ''}.`
    : 'The request is invalid.';
  return new AppError('validation_failed', `The request is invalid: ${detail}`, fieldErrors);
}
