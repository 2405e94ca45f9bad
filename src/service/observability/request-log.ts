/**
 * Logging for a request the service runs: the standalone executable writes its log lines to its stderr (which the
 * runtime records) and to `logFile`. Through the service the lines go to the same two places: captured and sent
 * back with the result (the shim writes them to its stderr), and appended to `logFile`. File destinations are kept
 * open between requests, reopened after a rotation and bounded in number (log-files.ts).
 */
import type { LogLevel } from '../../cni/types';
import type { Logger } from '../../log/logger';
import { silentLogger } from '../../log/logger';
import { LogFiles, type LogFilesOptions } from './log-files';

type Pino = typeof import('pino');
type Destination = import('pino').DestinationStream;

export class RequestLogs {
  private pinoModule: Pino | undefined;
  readonly files: LogFiles;

  constructor(
    private readonly base: Record<string, unknown>,
    files: LogFilesOptions = {},
  ) {
    this.files = new LogFiles(files);
  }

  private pino(): Pino {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- pino loads on the first request that logs, not at start
    this.pinoModule ??= require('pino') as Pino;
    return this.pinoModule;
  }

  /** A logger for one request: its lines are appended to `sink` (for the shim's stderr) and to the file if any. */
  create(options: { level: LogLevel; file?: string }, sink: string[]): Logger {
    if (options.level === 'silent') return silentLogger;
    const pino = this.pino();
    const streams: Array<{ level: LogLevel; stream: Destination }> = [
      { level: options.level, stream: { write: (line: string) => void sink.push(line) } },
    ];
    // Opened as the standalone executable opens it (openLogFile: no symlink followed, no blocking on a FIFO, mode
    // 0640, only a regular file), written through the same never-throwing stream.
    if (options.file) streams.push({ level: options.level, stream: this.files.get(options.file) });
    const logger = pino.default(
      { level: options.level, base: this.base, timestamp: pino.stdTimeFunctions.isoTime },
      pino.multistream(streams as never),
    );
    return logger as unknown as Logger;
  }
}
