/**
 * Delegated IPAM against real executables: Debian's containernetworking-plugins (host-local and static in
 * /usr/lib/cni; `apt-get install containernetworking-plugins`, CI installs it) and small /bin/sh scripts that fail,
 * hang, or dump exactly what they received.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { parseNetConf } from '../../src/cni/config';
import { splitCniPath } from '../../src/cni/env';
import { CniCode, CniError } from '../../src/cni/cni-error';
import { createIpamClient, findPlugin } from '../../src/cni/ipam';
import type { CniResult, IpamClient, Verb } from '../../src/cni/types';
import { FakeHandlers, baseEnv, invoke, tempDir, writeScript } from './helpers';

const CNI_BIN = '/usr/lib/cni';
const scratch = tempDir('ipam');
const leftovers: number[] = [];

afterAll(() => {
  for (const pid of leftovers) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  fs.rmSync(scratch, { recursive: true, force: true });
});

interface ClientOptions {
  stdin?: Buffer;
  platform?: NodeJS.Platform;
}

/** client: an IpamClient exactly as the dispatcher would build it for this env and stdin. */
function client(
  conf: Record<string, unknown> | string,
  env: Record<string, string | undefined>,
  opts: ClientOptions = {},
): IpamClient {
  const stdin = opts.stdin ?? Buffer.from(typeof conf === 'string' ? conf : JSON.stringify(conf));
  const raw = JSON.parse(stdin.toString('utf8')) as Record<string, unknown>;
  const platform = opts.platform ?? 'linux';
  const netconf = parseNetConf(raw, { platform, defaults: { stateDir: scratch }, verb: env.CNI_COMMAND as Verb });
  return createIpamClient({ conf: netconf, env, stdin, path: splitCniPath(env.CNI_PATH, platform), platform });
}

/** failureOf: the CniError a promise rejects with (fails the test when it resolves or rejects otherwise). */
async function failureOf(p: Promise<unknown>): Promise<CniError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof CniError) return e;
    throw e;
  }
  throw new Error('expected a CniError');
}

const env = (verb: string, extra: Record<string, string | undefined> = {}) =>
  baseEnv(verb, { CNI_PATH: CNI_BIN, PATH: '/usr/bin:/bin', ...extra });

it("Debian's containernetworking-plugins is installed (apt-get install containernetworking-plugins)", () => {
  expect(fs.statSync(path.join(CNI_BIN, 'host-local')).isFile()).toBe(true);
  expect(fs.statSync(path.join(CNI_BIN, 'static')).isFile()).toBe(true);
});

describe('host-local', () => {
  const dataDir = path.join(scratch, 'host-local-data');
  const conf = (version = '1.0.0', extra: Record<string, unknown> = {}) => ({
    cniVersion: version,
    name: 'hlnet',
    type: 'hcn-cni',
    ipam: {
      type: 'host-local',
      dataDir,
      ranges: [[{ subnet: '10.9.0.0/24', rangeStart: '10.9.0.10', rangeEnd: '10.9.0.20', gateway: '10.9.0.1' }]],
      routes: [{ dst: '0.0.0.0/0' }],
    },
    ...extra,
  });
  const record = (ip: string) => path.join(dataDir, 'hlnet', ip);

  it('ADD allocates from the range and records the owner; a second ADD for the same attachment fails; DEL releases', async () => {
    const a = client(conf(), env('ADD', { CNI_CONTAINERID: 'ctr-a' }));
    expect(a.configured).toBe(true);
    expect(a.type).toBe('host-local');
    const r = await a.add();
    expect(r).toEqual({
      interfaces: [],
      ips: [{ address: '10.9.0.10/24', gateway: '10.9.0.1' }],
      routes: [{ dst: '0.0.0.0/0' }],
      dns: {},
    });
    expect(fs.readFileSync(record('10.9.0.10'), 'utf8').split(/\r?\n/)).toEqual(['ctr-a', 'eth0']);

    // The reference behaviour: host-local refuses a duplicate allocation (so an idempotent ADD must skip IPAM).
    const dup = await failureOf(client(conf(), env('ADD', { CNI_CONTAINERID: 'ctr-a' })).add());
    expect(dup.code).toBe(CniCode.IPAM_FAILURE);
    expect(dup.message).toBe(
      'ipam plugin "host-local" failed: failed to allocate for range 0: 10.9.0.10 has been allocated to ctr-a, duplicate allocation is not allowed',
    );
    expect(dup.details).toBe('ADD: ipam error code 999');

    const b = await client(conf(), env('ADD', { CNI_CONTAINERID: 'ctr-b' })).add();
    expect(b.ips[0]!.address).toBe('10.9.0.11/24');

    await client(conf(), env('CHECK', { CNI_CONTAINERID: 'ctr-a' })).check();

    await client(conf(), env('DEL', { CNI_CONTAINERID: 'ctr-a' })).del();
    expect(fs.existsSync(record('10.9.0.10'))).toBe(false);
    expect(fs.existsSync(record('10.9.0.11'))).toBe(true);
    // DEL is idempotent; CHECK now fails because the allocation is gone.
    await client(conf(), env('DEL', { CNI_CONTAINERID: 'ctr-a' })).del();
    const check = await failureOf(client(conf(), env('CHECK', { CNI_CONTAINERID: 'ctr-a' })).check());
    expect(check.code).toBe(CniCode.IPAM_FAILURE);
    expect(check.message).toBe(
      'ipam plugin "host-local" failed: host-local: Failed to find address added by container ctr-a',
    );
  });

  it('a 1.1.0 configuration still works with host-local 1.1.1: refused with code 1, the request is repeated at 1.0.0', async () => {
    const r = await client(conf('1.1.0'), env('ADD', { CNI_CONTAINERID: 'ctr-v11' })).add();
    expect(r.ips).toEqual([{ address: expect.stringMatching(/^10\.9\.0\.\d+\/24$/), gateway: '10.9.0.1' }]);
    await client(conf('1.1.0'), env('CHECK', { CNI_CONTAINERID: 'ctr-v11' })).check();
    await client(conf('1.1.0'), env('DEL', { CNI_CONTAINERID: 'ctr-v11' })).del();
    expect(
      fs
        .readdirSync(path.join(dataDir, 'hlnet'))
        .filter(
          (f) => /^10\./.test(f) && fs.readFileSync(path.join(dataDir, 'hlnet', f), 'utf8').startsWith('ctr-v11'),
        ),
    ).toEqual([]);
  });

  it('GC: delFor releases another attachment although host-local 1.1.1 does not speak 1.1.0; gc/status are not forwarded', async () => {
    await client(conf(), env('ADD', { CNI_CONTAINERID: 'ctr-gc' })).add();
    const held = fs
      .readdirSync(path.join(dataDir, 'hlnet'))
      .filter((f) => /^10\./.test(f) && fs.readFileSync(path.join(dataDir, 'hlnet', f), 'utf8').startsWith('ctr-gc'));
    expect(held).toHaveLength(1);

    const gcConf = conf('1.1.0', { 'cni.dev/valid-attachments': [{ containerID: 'ctr-b', ifname: 'eth0' }] });
    const gcEnv = { CNI_COMMAND: 'GC', CNI_PATH: CNI_BIN, PATH: '/usr/bin:/bin' };
    const c = client(gcConf, gcEnv);
    await c.delFor({ containerId: 'ctr-gc', ifname: 'eth0' });
    expect(fs.existsSync(record(held[0]!))).toBe(false);
    expect(fs.existsSync(record('10.9.0.11'))).toBe(true);
    expect(await c.gc()).toBe(false);
    expect(
      await client(conf('1.1.0'), { CNI_COMMAND: 'STATUS', PATH: '/usr/bin:/bin', CNI_PATH: CNI_BIN }).status(),
    ).toBe(false);
  });

  it("end to end through the dispatcher: a handler that delegates gets host-local's address into a 0.3.1 result", async () => {
    const handlers = new FakeHandlers();
    handlers.add = async (ctx) => {
      handlers.calls.push({ verb: 'ADD', ctx });
      const r = await ctx.ipam.add();
      const result: CniResult = {
        interfaces: [{ name: ctx.attachment.ifname }],
        ips: r.ips.map((ip) => ({ ...ip, interface: 0 })),
        routes: r.routes,
        dns: r.dns,
      };
      return result;
    };
    const out = await invoke({
      env: env('ADD', { CNI_CONTAINERID: 'ctr-e2e' }),
      stdin: conf('0.3.1'),
      handlers,
      deps: { ipamFactory: createIpamClient },
    });
    expect(out.exitCode).toBe(0);
    expect(out.json).toEqual({
      cniVersion: '0.3.1',
      interfaces: [{ name: 'eth0' }],
      ips: [
        { version: '4', address: expect.stringMatching(/^10\.9\.0\.(1\d|20)\/24$/), gateway: '10.9.0.1', interface: 0 },
      ],
      routes: [{ dst: '0.0.0.0/0' }],
    });
  });
});

describe('static', () => {
  it('echoes the configured addresses, routes and dns', async () => {
    const conf = {
      cniVersion: '0.3.1',
      name: 'staticnet',
      type: 'hcn-cni',
      ipam: {
        type: 'static',
        addresses: [{ address: '10.10.0.5/24', gateway: '10.10.0.1' }],
        routes: [{ dst: '0.0.0.0/0' }],
        dns: { nameservers: ['10.10.0.53'] },
      },
    };
    expect(await client(conf, env('ADD')).add()).toEqual({
      interfaces: [],
      ips: [{ address: '10.10.0.5/24', gateway: '10.10.0.1' }],
      routes: [{ dst: '0.0.0.0/0' }],
      dns: { nameservers: ['10.10.0.53'] },
    });
  });

  it('reads CNI_ARGS from the environment we pass on', async () => {
    const conf = { cniVersion: '1.0.0', name: 'staticnet', type: 'hcn-cni', ipam: { type: 'static' } };
    const r = await client(conf, env('ADD', { CNI_ARGS: 'IP=10.0.0.60/24;GATEWAY=10.0.0.1' })).add();
    expect(r.ips).toEqual([{ address: '10.0.0.60/24', gateway: '10.0.0.1' }]);
  });
});

describe('finding the plugin', () => {
  const dirA = path.join(scratch, 'find-a');
  const dirB = path.join(scratch, 'find-b');
  beforeAll(() => {
    fs.mkdirSync(path.join(dirA, 'ghost-ipam'), { recursive: true }); // a directory is not a plugin
    fs.mkdirSync(dirB, { recursive: true });
    fs.writeFileSync(path.join(dirB, 'ghost-ipam'), '#!/bin/sh\n', { mode: 0o644 }); // not executable
  });

  it('a missing plugin is 102 naming the directories searched', async () => {
    const c = client(
      { cniVersion: '1.0.0', name: 'n', type: 'hcn-cni', ipam: { type: 'ghost-ipam' } },
      env('ADD', { CNI_PATH: `${dirA}:${dirB}` }),
    );
    const e = await failureOf(c.add());
    expect(e.code).toBe(CniCode.IPAM_FAILURE);
    expect(e.message).toBe(`ipam plugin "ghost-ipam" not found on CNI_PATH [${dirA}, ${dirB}]`);
  });

  it('is looked up on CNI_PATH only, never on PATH', async () => {
    const c = client(
      { cniVersion: '1.0.0', name: 'n', type: 'hcn-cni', ipam: { type: 'host-local' } },
      env('ADD', { CNI_PATH: dirA, PATH: CNI_BIN }),
    );
    expect((await failureOf(c.add())).message).toBe(`ipam plugin "host-local" not found on CNI_PATH [${dirA}]`);
  });

  it('CNI_PATH order decides', async () => {
    const first = path.join(scratch, 'order-1');
    const second = path.join(scratch, 'order-2');
    fs.mkdirSync(first);
    fs.mkdirSync(second);
    writeScript(first, 'pick-ipam', `echo '{"cniVersion":"1.0.0","ips":[{"address":"10.1.1.1/24"}]}'`);
    writeScript(second, 'pick-ipam', `echo '{"cniVersion":"1.0.0","ips":[{"address":"10.2.2.2/24"}]}'`);
    const conf = { cniVersion: '1.0.0', name: 'n', type: 'hcn-cni', ipam: { type: 'pick-ipam' } };
    expect((await client(conf, env('ADD', { CNI_PATH: `${first}:${second}` })).add()).ips).toEqual([
      { address: '10.1.1.1/24' },
    ]);
    expect((await client(conf, env('ADD', { CNI_PATH: `${second}:${first}` })).add()).ips).toEqual([
      { address: '10.2.2.2/24' },
    ]);
  });

  it('on win32, <type>.exe is tried before <type>, and no execute bit is needed', async () => {
    const dir = path.join(scratch, 'win');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'win-ipam'), '', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'win-ipam.exe'), '', { mode: 0o644 });
    expect(await findPlugin('win-ipam', [dir], 'win32')).toBe(path.join(dir, 'win-ipam.exe'));
    expect(await findPlugin('win-ipam.exe', [dir], 'win32')).toBe(path.join(dir, 'win-ipam.exe'));
    expect(await findPlugin('win-ipam', [dir], 'linux')).toBe(path.join(dir, 'win-ipam'));
    expect(await findPlugin('win-ipam.exe', [dir], 'linux')).toBeUndefined();
  });

  it('runs the file directly, not through a shell (a name with shell syntax still works)', async () => {
    // Through a shell, `odd ipam;false $(x)` would run "odd" with an argument, then "false": not this script.
    const dir = path.join(scratch, 'shell');
    fs.mkdirSync(dir);
    writeScript(dir, 'odd ipam;false $(x)', `echo '{"cniVersion":"1.0.0","ips":[{"address":"10.3.3.3/24"}]}'`);
    const conf = { cniVersion: '1.0.0', name: 'n', type: 'hcn-cni', ipam: { type: 'odd ipam;false $(x)' } };
    expect((await client(conf, env('ADD', { CNI_PATH: dir })).add()).ips).toEqual([{ address: '10.3.3.3/24' }]);
  });

  it('without ipam.type the client is unconfigured and every call is an internal error', async () => {
    const c = client({ cniVersion: '1.0.0', name: 'n', type: 'hcn-cni' }, env('ADD'));
    expect(c.configured).toBe(false);
    expect(c.type).toBeUndefined();
    for (const call of [
      () => c.add(),
      () => c.del(),
      () => c.gc(),
      () => c.delFor({ containerId: 'a', ifname: 'b' }),
    ]) {
      const e = await failureOf(call());
      expect(e.code).toBe(CniCode.INTERNAL);
      expect(e.message).toBe('no delegated IPAM is configured (ipam.type is not set)');
    }
  });
});

describe('failing IPAMs', () => {
  const dir = path.join(scratch, 'failing');
  const conf = (type: string, extra: Record<string, unknown> = {}) => ({
    cniVersion: '1.0.0',
    name: 'n',
    type: 'hcn-cni',
    ipam: { type },
    ...extra,
  });
  const run = (type: string, extra: Record<string, unknown> = {}) =>
    client(conf(type, extra), env('ADD', { CNI_PATH: dir }));
  beforeAll(() => {
    fs.mkdirSync(dir);
    writeScript(
      dir,
      'fail-ipam',
      `cat >/dev/null\necho '{"cniVersion":"1.0.0","code":7,"msg":"pool exhausted","details":"no free address in 10.0.0.0/24"}'\nexit 1`,
    );
    writeScript(
      dir,
      'busy-ipam',
      `echo '{"cniVersion":"1.0.0","code":11,"msg":"datastore locked","details":"retry in 5s"}'\nexit 1`,
    );
    writeScript(dir, 'crash-ipam', `echo 'panic: runtime error: index out of range' >&2\nexit 2`);
    writeScript(dir, 'liar-ipam', `echo '{"cniVersion":"1.0.0","code":999,"msg":"exit 0 but an error"}'`);
    writeScript(dir, 'garbage-ipam', `echo 'IP=10.0.0.5'`);
  });

  it('an error result with another code is 102 with its message, and its code and details in details', async () => {
    const e = await failureOf(run('fail-ipam').add());
    expect([e.code, e.message, e.details]).toEqual([
      102,
      'ipam plugin "fail-ipam" failed: pool exhausted',
      'ADD: ipam error code 7: no free address in 10.0.0.0/24',
    ]);
  });

  it('its code 11 stays 11', async () => {
    const e = await failureOf(run('busy-ipam').del());
    expect([e.code, e.message, e.details]).toEqual([
      11,
      'ipam plugin "busy-ipam" failed: datastore locked',
      'DEL: ipam error code 11: retry in 5s',
    ]);
  });

  it('a crash without an error result is 102 with its stderr', async () => {
    const e = await failureOf(run('crash-ipam').add());
    expect(e.code).toBe(102);
    expect(e.message).toBe('ipam plugin "crash-ipam" failed: ADD exited with code 2 without an error result');
    expect(e.details).toBe('stderr: panic: runtime error: index out of range');
  });

  it('an error result with exit code 0 is still a failure', async () => {
    const e = await failureOf(run('liar-ipam').add());
    expect([e.code, e.message]).toEqual([102, 'ipam plugin "liar-ipam" failed: exit 0 but an error']);
  });

  it('output that is not JSON is 102', async () => {
    const e = await failureOf(run('garbage-ipam').add());
    expect(e.code).toBe(102);
    expect(e.message).toMatch(/^ipam plugin "garbage-ipam" returned an unusable result \(ADD\): not JSON/);
  });

  it('a hanging IPAM is killed at ipamTimeoutSeconds and the verb is code 11', async () => {
    const pidFile = path.join(dir, 'slow.pid');
    writeScript(dir, 'slow-ipam', `echo $$ > '${pidFile}'\nexec sleep 30`);
    const started = Date.now();
    const e = await failureOf(run('slow-ipam', { ipamTimeoutSeconds: 1 }).add());
    const elapsed = Date.now() - started;
    expect([e.code, e.message]).toEqual([11, 'ipam plugin "slow-ipam" timed out after 1s (ADD) and was killed']);
    expect(elapsed).toBeGreaterThanOrEqual(950);
    // Killed, not waited for: far below the 30 s the script would sleep (a loaded machine may take seconds more).
    expect(elapsed).toBeLessThan(20_000);
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    leftovers.push(pid);
    expect(await gone(pid)).toBe(true);
  });

  it('a grandchild holding the pipes open does not stretch the timeout', async () => {
    const pidFile = path.join(dir, 'grandchild.pid');
    writeScript(dir, 'forking-ipam', `sleep 30 &\necho $! > '${pidFile}'\nwait`);
    const started = Date.now();
    const e = await failureOf(run('forking-ipam', { ipamTimeoutSeconds: 1 }).add());
    leftovers.push(Number(fs.readFileSync(pidFile, 'utf8')));
    expect(e.code).toBe(11);
    // Not the grandchild's 30 s: the pipes it holds open do not keep the verb waiting.
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

/** gone: the process has exited and been reaped (polls: reaping is asynchronous; a loaded machine may take seconds). */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 1500; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

describe('what the IPAM receives', () => {
  const dir = path.join(scratch, 'dump');
  const out = path.join(dir, 'out');
  const readEnv = (): Record<string, string> =>
    Object.fromEntries(
      fs
        .readFileSync(path.join(out, 'env.txt'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
  beforeAll(() => {
    fs.mkdirSync(out, { recursive: true });
    // /proc/$$/environ is the environment the process was started with, before the shell adds anything of its own.
    writeScript(
      dir,
      'dump-ipam',
      [
        `tr '\\000' '\\n' < /proc/$$/environ > '${out}/env.txt'`,
        `cat > '${out}/stdin.bin'`,
        `if [ "$CNI_COMMAND" = VERSION ]; then echo '{"cniVersion":"1.1.0","supportedVersions":["0.4.0","1.0.0"]}'; exit 0; fi`,
        `echo '{"cniVersion":"1.0.0","ips":[{"address":"10.4.4.4/24"}]}'`,
      ].join('\n'),
    );
  });
  beforeEach(() => {
    for (const f of fs.readdirSync(out)) fs.rmSync(path.join(out, f));
  });

  // Odd but legal bytes: the exact formatting, key order and non-ASCII text must arrive unchanged.
  const stdinText =
    '{\n  "cniVersion": "1.0.0",   "name": "dumpnet", "type":"hcn-cni",\n\t"ipam": {"type": "dump-ipam"}, "note": "ünïcödé ✓ \\u0041"\n}\n';

  it("ADD: exactly our env (not the test process's) and exactly our stdin bytes", async () => {
    const e = {
      CNI_COMMAND: 'ADD',
      CNI_CONTAINERID: 'ctr-dump',
      CNI_NETNS: '5f0e7a3c-1b2d-4c5e-8f90-123456789abc',
      CNI_IFNAME: 'eth0',
      CNI_ARGS: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0',
      CNI_PATH: dir,
      PATH: '/usr/bin:/bin',
      ODD: 'spaces, = signs; $HOME and "quotes"',
      DROPPED: undefined,
    };
    const r = await client(stdinText, e).add();
    expect(r.ips).toEqual([{ address: '10.4.4.4/24' }]);
    const { DROPPED: _dropped, ...expected } = e;
    expect(readEnv()).toEqual(expected);
    expect(fs.readFileSync(path.join(out, 'stdin.bin')).equals(Buffer.from(stdinText))).toBe(true);
  });

  it('del() during an ADD (rollback) runs with CNI_COMMAND=DEL and otherwise the same env and stdin', async () => {
    const e = env('ADD', { CNI_PATH: dir });
    await client(stdinText, e).del();
    expect(readEnv()).toEqual({ ...e, CNI_COMMAND: 'DEL' });
    expect(fs.readFileSync(path.join(out, 'stdin.bin'), 'utf8')).toBe(stdinText);
  });

  it("delFor: the attachment's id and ifname, a DEL request without GC keys, at a version the IPAM speaks", async () => {
    const gcConf = {
      cniVersion: '1.1.0',
      name: 'dumpnet',
      type: 'hcn-cni',
      ipam: { type: 'dump-ipam' },
      'cni.dev/valid-attachments': [],
      'cni.dev/attachments': [],
    };
    const gcEnv = { CNI_COMMAND: 'GC', CNI_PATH: dir, PATH: '/usr/bin:/bin' };
    await client(gcConf, gcEnv).delFor({ containerId: 'stale-1', ifname: 'eth1' });
    expect(readEnv()).toEqual({ ...gcEnv, CNI_COMMAND: 'DEL', CNI_CONTAINERID: 'stale-1', CNI_IFNAME: 'eth1' });
    expect(JSON.parse(fs.readFileSync(path.join(out, 'stdin.bin'), 'utf8'))).toEqual({
      cniVersion: '1.0.0',
      name: 'dumpnet',
      type: 'hcn-cni',
      ipam: { type: 'dump-ipam' },
    });
  });

  it('gc/status are forwarded only to an IPAM that lists 1.1.0', async () => {
    const gcConf = {
      cniVersion: '1.1.0',
      name: 'dumpnet',
      type: 'hcn-cni',
      ipam: { type: 'dump-ipam' },
      'cni.dev/valid-attachments': [],
    };
    const c = client(gcConf, { CNI_COMMAND: 'GC', CNI_PATH: dir, PATH: '/usr/bin:/bin' });
    expect(await c.gc()).toBe(false);
    // The last thing it ran was VERSION, with {cniVersion} on stdin.
    expect(readEnv().CNI_COMMAND).toBe('VERSION');
    expect(JSON.parse(fs.readFileSync(path.join(out, 'stdin.bin'), 'utf8'))).toEqual({ cniVersion: '1.1.0' });

    const modern = path.join(scratch, 'modern');
    fs.mkdirSync(modern);
    writeScript(
      modern,
      'dump-ipam',
      [
        `tr '\\000' '\\n' < /proc/$$/environ > '${out}/env.txt'`,
        `cat > '${out}/stdin.bin'`,
        `if [ "$CNI_COMMAND" = VERSION ]; then echo '{"cniVersion":"1.1.0","supportedVersions":["1.0.0","1.1.0"]}'; fi`,
      ].join('\n'),
    );
    const stdin = Buffer.from(JSON.stringify(gcConf));
    const gcEnv = { CNI_COMMAND: 'GC', CNI_PATH: modern, PATH: '/usr/bin:/bin' };
    expect(await client(gcConf, gcEnv, { stdin }).gc()).toBe(true);
    expect(readEnv()).toEqual(gcEnv);
    expect(fs.readFileSync(path.join(out, 'stdin.bin')).equals(stdin)).toBe(true);

    const statusEnv = { CNI_COMMAND: 'STATUS', CNI_PATH: modern, PATH: '/usr/bin:/bin' };
    expect(await client({ ...gcConf, 'cni.dev/valid-attachments': undefined }, statusEnv).status()).toBe(true);
    expect(readEnv().CNI_COMMAND).toBe('STATUS');

    // STATUS may come without CNI_PATH: nothing to forward to, and not an error.
    fs.rmSync(path.join(out, 'env.txt'));
    expect(
      await client({ ...gcConf, 'cni.dev/valid-attachments': undefined }, { CNI_COMMAND: 'STATUS' }).status(),
    ).toBe(false);
    expect(fs.existsSync(path.join(out, 'env.txt'))).toBe(false);
  });
});
