/**
 * Logging: pino JSON lines to stderr and, optionally, a file — never stdout, which carries only the CNI result.
 * Writes are synchronous so the line of a verb is on disk before the process exits (the CNI executable exits as
 * soon as it has answered).
 *
 * Logging is never the reason a verb fails: every write is best effort. A log file that cannot be opened (a
 * directory, a device, a symlink, a FIFO, no permission) or written (a full volume) costs one warning line on stderr
 * and nothing else; a full disk once made ADD fail with 5 after its attachment was committed.
 */
import * as fs from 'fs';
import * as path from 'path';

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
  if (options.stderr !== false) streams.push({ level: options.level, stream: new FdStream(2, undefined) });
  if (options.file) {
    const file = openLogFile(options.file);
    if (file !== undefined) streams.push({ level: options.level, stream: new FdStream(file, options.file) });
  }
  if (streams.length === 0) return silentLogger;
  const base = { pid: process.pid, ...options.base };
  const logger =
    streams.length === 1
      ? pino.default({ level: options.level, base, timestamp: pino.stdTimeFunctions.isoTime }, streams[0]!.stream)
      : pino.default(
          { level: options.level, base, timestamp: pino.stdTimeFunctions.isoTime },
          pino.multistream(streams as never),
        );
  return logger as unknown as Logger;
}

/** One warning line on stderr, in the same JSON-lines shape as the log (level 40 is pino's warn). */
function warnOnStderr(msg: string, extra: Record<string, unknown>): void {
  try {
    fs.writeSync(
      2,
      `${JSON.stringify({ level: 40, time: new Date().toISOString(), pid: process.pid, ...extra, msg })}\n`,
    );
  } catch {
    // Nowhere left to say it.
  }
}

const C = fs.constants;

/**
 * Opens the log file for appending without following a symlink (O_NOFOLLOW; lstat where the platform lacks it) and
 * without blocking on a FIFO (O_NONBLOCK); only a regular file is used. A file this call creates gets mode 0640
 * whatever the umask. Returns the fd, or undefined (with a warning on stderr) when the file is unusable.
 */
export function openLogFile(file: string): number | undefined {
  const base = C.O_WRONLY | C.O_APPEND | (C.O_NOFOLLOW ?? 0) | (C.O_NONBLOCK ?? 0);
  let fd: number | undefined;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o750 });
    if (C.O_NOFOLLOW === undefined) {
      const st = lstatOrUndefined(file);
      if (st && !st.isFile())
        throw Object.assign(new Error('not a regular file'), { code: st.isDirectory() ? 'EISDIR' : 'EINVAL' });
    }
    try {
      fd = fs.openSync(file, base | C.O_CREAT | C.O_EXCL, 0o640);
      fs.fchmodSync(fd, 0o640);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      fd = fs.openSync(file, base);
    }
    const st = fs.fstatSync(fd);
    if (!st.isFile())
      throw Object.assign(new Error(`is ${st.isDirectory() ? 'a directory' : 'not a regular file'}`), {
        code: 'EINVAL',
      });
    return fd;
  } catch (e) {
    if (fd !== undefined) fs.closeSync(fd);
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ELOOP'
        ? 'it is a symbolic link'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'ENXIO'
            ? 'it is a FIFO or device'
            : (e as Error).message;
    warnOnStderr('log file unusable; logging to stderr only', { logFile: file, err: why });
    return undefined;
  }
}

function lstatOrUndefined(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch {
    return undefined;
  }
}

/**
 * A pino destination writing synchronously to a file descriptor and never throwing. The first failed write to the
 * log file says so on stderr; later lines are still tried (a full volume may get space back).
 */
export class FdStream {
  private warned = false;
  constructor(
    private readonly fd: number,
    private readonly file: string | undefined,
  ) {}

  write(line: string): boolean {
    try {
      const buf = Buffer.from(line);
      for (let off = 0, tries = 0; off < buf.length;) {
        try {
          off += fs.writeSync(this.fd, buf, off);
        } catch (e) {
          // A non-blocking stderr pipe that is full: wait a moment, a few times, then drop the line.
          if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || ++tries > 20) throw e;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
        }
      }
    } catch (e) {
      if (this.file !== undefined && !this.warned) {
        this.warned = true;
        warnOnStderr('writing the log file failed; log lines are dropped, the verb goes on', {
          logFile: this.file,
          err: (e as Error).message,
        });
      }
    }
    return true;
  }
}
