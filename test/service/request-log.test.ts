/**
 * The service's `logFile` is opened as the standalone executable opens it (src/log/logger.ts openLogFile): a symlink
 * is never followed, a FIFO never blocks the (resident) service, a file it creates has mode 0640. The request's
 * lines still come back for the shim's stderr either way.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { RequestLogs } from '../../src/service/observability/request-log';

let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-reqlog-'))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function logOnce(logs: RequestLogs, file: string): string[] {
  const sink: string[] = [];
  logs.create({ level: 'info', file }, sink).info({ pod: 'p' }, 'hello');
  return sink;
}

it('a symlink as logFile is not followed; its target stays untouched and the lines still reach the shim', () => {
  const target = path.join(dir, 'target');
  fs.writeFileSync(target, '');
  const link = path.join(dir, 'hcn.log');
  fs.symlinkSync(target, link);
  const sink = logOnce(new RequestLogs({}), link);
  expect(fs.readFileSync(target, 'utf8')).toBe('');
  expect(sink.join('')).toContain('"msg":"hello"');
});

it('a FIFO without a reader does not block the service', () => {
  const fifo = path.join(dir, 'fifo.log');
  execFileSync('mkfifo', [fifo]);
  expect(logOnce(new RequestLogs({}), fifo).join('')).toContain('"msg":"hello"');
});

it('a log file the service creates has mode 0640 and gets the lines; one descriptor per path', () => {
  const file = path.join(dir, 'sub', 'hcn.log');
  const logs = new RequestLogs({ service: true });
  logOnce(logs, file);
  logOnce(logs, file);
  expect(fs.statSync(file).mode & 0o777).toBe(0o640);
  expect(fs.readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2);
});
