/**
 * The error model. Every failure the API reports is an AppError with a stable machine `code`;
 * the table below is the only place that decides its HTTP status. The error handler
 * (http/plugins/problem.ts) turns AppErrors, validation errors, parser errors and driver
 * errors into RFC 9457 problem+json.
 */

const ERROR_STATUS = {
  malformed_json: 400,
  invalid_cursor: 400,
  bad_request: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  invalid_signature: 403,
  url_expired: 403,
  cross_origin_request: 403,
  bot_refused: 403,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  page_archived: 409,
  audience_archived: 409,
  route_key_taken: 409,
  page_already_published: 409,
  page_not_archived: 409,
  version_not_publishable: 409,
  version_not_previewable: 409,
  page_link_path_taken: 409,
  hostname_taken: 409,
  domain_limit_reached: 409,
  session_ended: 409,
  person_identity_taken: 409,
  account_exists: 409,
  idempotency_request_in_progress: 409,
  upload_already_completed: 409,
  sort_order_exhausted: 409,
  topic_full: 409,
  upload_attempts_exhausted: 410,
  webhook_delivery_pending: 409,
  webhook_subscription_inactive: 409,
  page_gone: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  validation_failed: 422,
  domain_not_verified: 422,
  json_too_deep: 422,
  page_too_large: 422,
  idempotency_key_reused: 422,
  invalid_image: 422,
  file_size_mismatch: 422,
  webhook_subscription_limit: 422,
  spam_suspected: 422,
  form_unknown: 422,
  form_too_fast: 422,
  rate_limited: 429,
  daily_cap_reached: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export interface FieldError {
  /** JSON Pointer into the request part: `/body/name`, `/query/limit`. */
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode | (string & {}),
    readonly detail: string,
    readonly errors: FieldError[] = [],
    status?: number,
    /** Extra members of the problem document (e.g. the id of a conflicting resource). */
    readonly extensions: Record<string, unknown> = {},
  ) {
    const resolved = status ?? ERROR_STATUS[code as ErrorCode] ?? 500;
    // A client's error needs no stack (it is answered, never logged with one), and capturing it
    // was a fifth of the cost of refusing a request of a flood (docs/performance.md).
    const stackTraceLimit = Error.stackTraceLimit;
    if (resolved < 500) Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'AppError';
    this.status = resolved;
  }

  get title(): string {
    return TITLES[this.status] ?? 'Error';
  }
}

export function notFound(resource: string, id: string): AppError {
  return new AppError('not_found', `No ${resource} with id "${id}" exists.`);
}

export function validationFailed(path: string, message: string): AppError {
  return new AppError('validation_failed', `The request is invalid: ${path} ${message}.`, [{ path, message }]);
}

export function conflict(
  code: ErrorCode | (string & {}),
  detail: string,
  extensions: Record<string, unknown> = {},
): AppError {
  return new AppError(code, detail, [], ERROR_STATUS.conflict, extensions);
}
