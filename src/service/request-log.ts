/**
 * Logging for a request the service runs: the standalone executable writes its log lines to its stderr (which the
 * runtime records) and to `logFile`. Through the service the lines go to the same two places: captured and sent
 * back with the result (the shim writes them to its stderr), and appended to `logFile`. File destinations are
 * opened once per path and kept: a resident process must not open a descriptor per request.
 */
import type { LogLevel } from '../cni/types';
import type { Logger } from '../log/logger';
import { FdStream, openLogFile, silentLogger } from '../log/logger';

type Pino = typeof import('pino');
type Destination = import('pino').DestinationStream;

export class RequestLogs {
  private pinoModule: Pino | undefined;
  private readonly files = new Map<string, Destination>();

  constructor(private readonly base: Record<string, unknown>) {}

  private pino(): Pino {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- pino loads on the first request that logs, not at start
    this.pinoModule ??= require('pino') as Pino;
    return this.pinoModule;
  }

  /**
   * The log file, opened as the standalone executable opens it (openLogFile: no symlink followed, no blocking on a
   * FIFO, mode 0640, only a regular file) and written through the same never-throwing stream. One that cannot be
   * opened costs a warning and is tried again by the next request.
   */
  private file(path: string): Destination | undefined {
    let d = this.files.get(path);
    if (!d) {
      const fd = openLogFile(path);
      if (fd === undefined) return undefined;
      d = new FdStream(fd, path);
      this.files.set(path, d);
    }
    return d;
  }

  /** A logger for one request: its lines are appended to `sink` (for the shim's stderr) and to the file if any. */
  create(options: { level: LogLevel; file?: string }, sink: string[]): Logger {
    if (options.level === 'silent') return silentLogger;
    const pino = this.pino();
    const streams: Array<{ level: LogLevel; stream: Destination }> = [
      { level: options.level, stream: { write: (line: string) => void sink.push(line) } },
    ];
    const file = options.file ? this.file(options.file) : undefined;
    if (file) streams.push({ level: options.level, stream: file });
    const logger = pino.default(
      { level: options.level, base: this.base, timestamp: pino.stdTimeFunctions.isoTime },
      pino.multistream(streams as never),
    );
    return logger as unknown as Logger;
  }
}
