/**
 * Logging is never the reason a verb fails. A log file on a full volume, /dev/full, a directory or
 * a symlink costs a warning on stderr and nothing else; the file is never reached through a symlink; a log file the
 * plugin creates has mode 0640 whatever the umask.
 *
 * The full volume is simulated for the in-process part: writes to the log file's descriptor fail with ENOSPC (the
 * `fs` module is wrapped for this file only; the plugin processes started here use the real one).
 */
import * as path from 'path';

const full = { fds: new Set<number>(), path: undefined as string | undefined, stderr: [] as string[] };
jest.mock('fs', () => {
  const real = jest.requireActual<typeof import('fs')>('fs');
  return {
    ...real,
    openSync: (...args: Parameters<typeof real.openSync>) => {
      const fd = real.openSync(...args);
      if (full.path !== undefined && String(args[0]) === full.path) full.fds.add(fd);
      return fd;
    },
    writeSync: (fd: number, ...rest: unknown[]) => {
      if (full.fds.has(fd))
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      if (fd === 2 && full.path !== undefined) {
        full.stderr.push(String(rest[0]));
        return Buffer.byteLength(String(rest[0]));
      }
      return (real.writeSync as (...a: unknown[]) => number)(fd, ...rest);
    },
  };
});

import { spawnSync } from 'child_process';
import * as fs from 'fs';
import { runCni } from '../../src/run';
import { bridgeConf, CLI, cniEnv, cniProcess, useHarness, type Harness } from '../helpers/cni-harness';
import { logLines, newNamespace } from '../plugin/support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

const conf = (logFile: string) => bridgeConf({ cniVersion: '1.1.0', logFile });

describe('a log file that cannot be written', () => {
  it('on a full volume: ADD and DEL succeed (the attachment is committed and removed); the failure is one warning on stderr per verb', async () => {
    const logFile = path.join(h.tmp, 'full.log');
    full.path = logFile;
    try {
      const netns = await newNamespace(h);
      for (const verb of ['ADD', 'DEL'] as const) {
        const c = { verb, conf: conf(logFile), containerId: 'pod-a', netns };
        const r = await runCni({
          env: cniEnv(h, c),
          stdin: JSON.stringify({ stateDir: h.stateDir, ...c.conf }),
          deps: h.deps,
        });
        expect(r).toMatchObject({ exitCode: 0 });
      }
    } finally {
      full.path = undefined;
      full.fds.clear();
    }
    const warnings = logLines(full.stderr.join('')).filter(
      (l) => l.msg === 'writing the log file failed; log lines are dropped, the verb goes on',
    );
    // One warning per invocation (ADD, DEL), however many lines were lost.
    const one = expect.objectContaining({ level: 40, logFile, err: expect.stringMatching(/ENOSPC/) });
    expect(warnings).toEqual([one, one]);
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
  });

  it.each([
    ['/dev/full', () => '/dev/full', /not a regular file/],
    [
      'a directory',
      (t: string) => fs.mkdirSync(path.join(t, 'logdir'), { recursive: true }) ?? path.join(t, 'logdir'),
      /directory/,
    ],
  ])('%s: ADD succeeds with a warning on stderr', async (_what, make, why) => {
    const logFile = make(h.tmp);
    const r = await cniProcess(h, {
      verb: 'ADD',
      conf: conf(logFile),
      containerId: 'pod-a',
      netns: await newNamespace(h),
    });
    expect(r.exitCode).toBe(0);
    expect(logLines(r.stderr)).toContainEqual(
      expect.objectContaining({
        level: 40,
        logFile,
        msg: 'log file unusable; logging to stderr only',
        err: expect.stringMatching(why),
      }),
    );
  });

  it('a symlink is not followed: its target stays untouched', async () => {
    const target = path.join(h.tmp, 'target.txt');
    fs.writeFileSync(target, 'precious\n');
    const logFile = path.join(h.tmp, 'link.log');
    fs.symlinkSync(target, logFile);
    const r = await cniProcess(h, {
      verb: 'ADD',
      conf: conf(logFile),
      containerId: 'pod-a',
      netns: await newNamespace(h),
    });
    expect(r.exitCode).toBe(0);
    expect(fs.readFileSync(target, 'utf8')).toBe('precious\n');
    expect(logLines(r.stderr)).toContainEqual(
      expect.objectContaining({ level: 40, logFile, err: 'it is a symbolic link' }),
    );
  });

  it('a log file the plugin creates has mode 0640 whatever the umask', async () => {
    for (const umask of ['0000', '0077']) {
      const logFile = path.join(h.tmp, `new-${umask}`, 'hcn-cni.log');
      // The umask is set by a shell around the plugin process.
      const c = {
        verb: 'ADD' as const,
        conf: conf(logFile),
        containerId: `pod-${umask}`,
        netns: await newNamespace(h),
      };
      const r = spawnSync('/bin/sh', ['-c', `umask ${umask}; exec "$0" "$1"`, process.execPath, CLI], {
        env: { PATH: process.env.PATH, ...cniEnv(h, c) } as NodeJS.ProcessEnv,
        input: JSON.stringify({ stateDir: h.stateDir, ...c.conf }),
        encoding: 'utf8',
      });
      expect(r.status).toBe(0);
      expect(fs.statSync(logFile).mode & 0o777).toBe(0o640);
      expect(logLines(fs.readFileSync(logFile, 'utf8')).length).toBeGreaterThan(0);
    }
  });
});
