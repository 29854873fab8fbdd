import { pino, type Logger } from 'pino';

/** Structured JSON logs on stdout. Secrets never reach a log line: headers are not logged, and these paths are redacted in case a caller logs an object that holds them. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'audience-pages' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers["x-api-key"]',
        'req.headers.authorization',
        'apiKey',
        '*.apiKey',
        'signingSecret',
        '*.signingSecret',
        'secret',
        '*.secret',
      ],
      censor: '[redacted]',
    },
  });
}
