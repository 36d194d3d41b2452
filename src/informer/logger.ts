/**
 * Where informers write what they have to say.
 *
 * @module
 */

/**
 * A logger with levels, for informers and the informer factory (the
 * `logger` option). `console` is one; so are most logging libraries' loggers
 * (wrap those that take the details first). Each method gets a message that
 * starts with the informer's name in brackets, and details to log as
 * structured fields. A method must not throw (a throw is ignored).
 *
 * What goes where: `warn`, errors that recovery handles (the default
 * `onError`; not used when an `onError` is given); `error`, an informer
 * whose `run()` failed in a factory; `info`, an informer's first sync and
 * each relist after it, with its reason; `debug`, informers created by a
 * factory.
 */
export interface Logger {
  /** Detail for debugging. */
  debug(message: string, details?: Record<string, unknown>): void;
  /** Notable events of normal operation. */
  info(message: string, details?: Record<string, unknown>): void;
  /** Errors that recovery handles. */
  warn(message: string, details?: Record<string, unknown>): void;
  /** Errors that stop something. */
  error(message: string, details?: Record<string, unknown>): void;
}

/** The default: warnings and errors to the console (messages only), nothing else. */
export const defaultLogger: Logger = {
  debug() {},
  info() {},
  warn: (message) => console.warn(message),
  error: (message) => console.error(message),
};

/**
 * Checks a `logger` option; returns the default when it is absent.
 *
 * @throws {TypeError} when one of the four methods is missing.
 */
export function resolveLogger(logger: Logger | undefined, owner: string): Logger {
  if (logger === undefined) return defaultLogger;
  for (const level of ["debug", "info", "warn", "error"] as const) {
    if (typeof logger?.[level] !== "function") {
      throw new TypeError(`${owner}: logger.${level} must be a function`);
    }
  }
  return logger;
}

/** Calls `logger[level]`, ignoring a throw. */
export function log(
  logger: Logger,
  level: keyof Logger,
  message: string,
  details?: Record<string, unknown>,
): void {
  try {
    logger[level](message, details);
  } catch { /* a logger must never break an informer */ }
}

/** The message of an error, for a log line. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
