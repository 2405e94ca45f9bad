/**
 * Logging: pino JSON lines to stderr and, optionally, a file — never stdout, which carries only the CNI result.
 * Writes are synchronous so the line of a verb is on disk before the process exits (the CNI executable exits as
 * soon as it has answered).
 */

/** pino's levels, most verbose first: the configuration's logLevel and hcn-sim's --log-level accept these. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** pino's interface, reduced to what the project uses (so tests can pass a recorder). */
export interface Logger {
  trace(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  level: LogLevel;
  /** Also append to this file. */
  file?: string;
  /** The stream for the console side: 2 (stderr, default) or none. */
  stderr?: boolean;
  base?: Record<string, unknown>;
}

/** A logger that drops everything (for library use without logs). */
export const silentLogger: Logger = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger;
  },
};

export function createLogger(options: LoggerOptions): Logger {
  if (options.level === 'silent') return silentLogger;
  // Loaded on demand: VERSION and other trivial invocations never pay for pino.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded synchronously on demand: start-up pays only for what is used
  const pino = require('pino') as typeof import('pino');
  const streams: Array<{ level: LogLevel; stream: import('pino').DestinationStream }> = [];
  if (options.stderr !== false) streams.push({ level: options.level, stream: pino.destination({ dest: 2, sync: true }) });
  if (options.file) streams.push({ level: options.level, stream: pino.destination({ dest: options.file, sync: true, mkdir: true, append: true }) });
  if (streams.length === 0) return silentLogger;
  const base = { pid: process.pid, ...options.base };
  const logger = streams.length === 1
    ? pino.default({ level: options.level, base, timestamp: pino.stdTimeFunctions.isoTime }, streams[0]!.stream)
    : pino.default({ level: options.level, base, timestamp: pino.stdTimeFunctions.isoTime }, pino.multistream(streams as never));
  return logger as unknown as Logger;
}
