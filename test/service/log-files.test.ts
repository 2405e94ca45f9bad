/**
 * The service keeps request log files open, but reopens one whose path no longer names it (rotated by a rename,
 * deleted) and keeps at most maxOpen of them open, so templated per-pod paths cannot exhaust its descriptors.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { LogFiles } from '../../src/service/observability/log-files';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-logfiles-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Descriptors of this process open on files under `d` (Linux: /proc/self/fd). */
function fdsUnder(d: string): string[] {
  return fs
    .readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((t) => t.startsWith(d));
}

const read = (f: string) => fs.readFileSync(f, 'utf8');

describe('service log files', () => {
  it('a log renamed away (logrotate without copytruncate) is reopened at its path', () => {
    const files = new LogFiles({ checkEveryMs: 0 });
    const log = path.join(dir, 'hcn-cni.log');
    files.get(log).write('one\n');
    fs.renameSync(log, `${log}.1`);
    files.get(log).write('two\n');
    expect(read(log)).toBe('two\n');
    expect(read(`${log}.1`)).toBe('one\n');
    files.closeAll();
  });

  it('a deleted log is reopened, and its deleted file is no longer held open', () => {
    const files = new LogFiles({ checkEveryMs: 0 });
    const log = path.join(dir, 'hcn-cni.log');
    files.get(log).write('one\n');
    fs.unlinkSync(log);
    files.get(log).write('two\n');
    expect(read(log)).toBe('two\n');
    expect(fdsUnder(dir).filter((t) => t.endsWith('(deleted)'))).toEqual([]);
    files.closeAll();
  });

  it('a request after a rotation writes to the new file at once, however soon (the clock does not move)', () => {
    const files = new LogFiles({ checkEveryMs: 1000, now: () => 0 });
    const log = path.join(dir, 'hcn-cni.log');
    files.get(log).write('one\n');
    fs.renameSync(log, `${log}.1`);
    files.get(log).write('two\n');
    expect(read(`${log}.1`)).toBe('one\n');
    expect(read(log)).toBe('two\n');
    files.closeAll();
  });

  it('within one long request, checks the path at most every checkEveryMs of writing', () => {
    let t = 0;
    const files = new LogFiles({ checkEveryMs: 1000, now: () => t });
    const log = path.join(dir, 'hcn-cni.log');
    const request = files.get(log);
    request.write('one\n');
    fs.renameSync(log, `${log}.1`);
    t = 999;
    request.write('two\n');
    expect(fs.existsSync(log)).toBe(false);
    t = 1000;
    request.write('three\n');
    expect(read(`${log}.1`)).toBe('one\ntwo\n');
    expect(read(log)).toBe('three\n');
    files.closeAll();
  });

  it('keeps at most maxOpen files open over 300 distinct paths, every line in its own file', () => {
    const files = new LogFiles({ maxOpen: 16, checkEveryMs: 0 });
    const held = [];
    for (let i = 0; i < 300; i++) {
      const f = files.get(path.join(dir, 'logs', `l${i}.log`));
      held.push(f); // a logger of a request still running holds its destination
      f.write(`first ${i}\n`);
      expect(fdsUnder(dir).length).toBeLessThanOrEqual(16);
    }
    expect(files.openCount).toBe(16);
    // A destination closed by the bound reopens when written to again, and appends to its own file only.
    held[0]!.write('again 0\n');
    held[299]!.write('again 299\n');
    expect(read(path.join(dir, 'logs', 'l0.log'))).toBe('first 0\nagain 0\n');
    expect(read(path.join(dir, 'logs', 'l299.log'))).toBe('first 299\nagain 299\n');
    for (let i = 1; i < 299; i++) expect(read(path.join(dir, 'logs', `l${i}.log`))).toBe(`first ${i}\n`);
    expect(fdsUnder(dir).length).toBeLessThanOrEqual(16);
    files.closeAll();
    expect(fdsUnder(dir)).toEqual([]);
  });
});
