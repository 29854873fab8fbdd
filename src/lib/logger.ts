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

type LogMethod = (...args: unknown[]) => void;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger (Fastify's `childLoggerFactory`) that makes pino's child, with the request
 * id bound, only when a line is written: building a child for every request cost more than
 * routing it, and above LOG_LEVEL=info most requests write nothing.
 */
export class LazyChildLogger {
  #child: Logger | null = null;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Record<string, unknown>,
  ) {}

  get level(): string {
    return this.parent.level;
  }

  child(bindings: Record<string, unknown>): Logger {
    return this.#real().child(bindings);
  }

  #real(): Logger {
    return (this.#child ??= this.parent.child(this.bindings));
  }

  #write(level: Level, args: unknown[]) {
    if (this.parent.isLevelEnabled(level)) (this.#real()[level] as LogMethod)(...args);
  }

  fatal(...args: unknown[]) {
    this.#write('fatal', args);
  }
  error(...args: unknown[]) {
    this.#write('error', args);
  }
  warn(...args: unknown[]) {
    this.#write('warn', args);
  }
  info(...args: unknown[]) {
    this.#write('info', args);
  }
  debug(...args: unknown[]) {
    this.#write('debug', args);
  }
  trace(...args: unknown[]) {
    this.#write('trace', args);
  }
  silent() {}
}
