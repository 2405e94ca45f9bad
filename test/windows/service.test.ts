/**
 * On Windows: the native shim (hcn-cni-shim.exe from the mingw build, installed as hcn-cni.exe) under wine
 * in front of `hcn-cni-standalone.exe serve` (dist/hcn-cni.exe) on a named pipe, against the simulator on
 * tcp:127.0.0.1:
 *  - ADD, CHECK, DEL through the shim are answered by the service (its request log lines carry "service": true);
 *  - the pipe is the addon's (native/addon/pipe_server_win.cc): the service reports the DACL it reads back from the
 *    pipe, SYSTEM and Administrators only, and the SIDs whose tokens it serves;
 *  - a second `serve --no-take-over` on the same pipe name exits with an error, and the first goes on serving
 *    (without the flag it takes the pipe over: test/windows/upgrade.test.ts);
 *  - a service whose allowed SIDs the (wine) user's token lacks refuses the shim's connection before reading it:
 *    the shim falls back to hcn-cni-standalone.exe, the service logs the refusal and served nothing;
 *  - the shim checks the pipe's server before it writes a byte (native/shim/shim_win.cc): the real
 *    service (an administrator here) is used, also with HCN_CNI_TEST_SHIM_SERVER_SIDS naming Administrators; a
 *    squatter pipe (Windows node.exe on the name) is refused when that variable demands SYSTEM — it gets 0 bytes,
 *    the shim says why naming the server's SID, and hcn-cni-standalone.exe answers;
 *  - with the service gone, the shim runs hcn-cni-standalone.exe beside it and the same verbs succeed.
 * Wine has one user, an administrator, so a real non-administrator being refused (by the DACL or by the token
 * check) is not observable here; the refusal test narrows the allowed SIDs instead (an option of startService
 * that neither the CLI nor the environment can set). Likewise every wine process passes the shim's own check (the
 * squatter too, as the test shows): HCN_CNI_TEST_SHIM_SERVER_SIDS, which can only add a condition, is how the
 * shim's refusal path runs here; that a non-administrator's or a UAC-filtered token is refused is not observable.
 */
import { spawn, type ChildProcess } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startSimulator, type RunningSimulator } from '../../src/sim';
import { WineCni, expectOnlyResult } from './helpers/cni-wine';
import {
  bundleWineFixture,
  describeWine,
  installSystem32,
  runWine,
  warmWineserver,
  WINE,
  winePrefix,
  winPath,
  WineTimings,
} from './helpers/wine';

function bridgeConf(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { cniVersion: '1.1.0', name: 'cbr0', type: 'hcn-cni', createNetwork: true, subnet: '10.244.1.0/24', ...extra };
}

/** The request log lines on a stderr, parsed. */
function logs(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split(/\r?\n/)
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describeWine('the shim under wine with the service', (build) => {
  let sim: RunningSimulator;
  let work: string;
  let cni: WineCni;
  let service: ChildProcess | undefined;
  let serviceErr = '';
  const pipe = `\\\\.\\pipe\\hcn-cni-test-${crypto.randomBytes(4).toString('hex')}`;
  const timings = new WineTimings();

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-wine-svc-'));
    const prefix = winePrefix('main');
    installSystem32(prefix, ['computenetwork.dll', 'vmcompute.dll']);
    warmWineserver(prefix, 60);
    sim = await startSimulator({ listen: 'tcp:127.0.0.1:0', logLevel: 'warn' });
    // The deployed layout: the shim as hcn-cni.exe, the single executable beside it as hcn-cni-standalone.exe.
    const bin = path.join(work, 'bin');
    fs.mkdirSync(bin);
    fs.copyFileSync(path.join(build.winDir, 'hcn-cni-shim.exe'), path.join(bin, 'hcn-cni.exe'));
    fs.symlinkSync(build.exe, path.join(bin, 'hcn-cni-standalone.exe'));
    cni = new WineCni(prefix, path.join(bin, 'hcn-cni.exe'), sim, path.join(work, 'state'), timings);

    service = spawn(WINE, [path.join(bin, 'hcn-cni-standalone.exe'), 'serve', '--listen', pipe], {
      env: { ...prefix.env, HCN_SIM: sim.address },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    service.stderr!.on('data', (d: Buffer) => (serviceErr += d.toString()));
    const t0 = Date.now();
    while (!serviceErr.includes('service: listening')) {
      if (service.exitCode !== null || Date.now() - t0 > 120_000)
        throw new Error(`hcn-cni serve did not start under wine: ${serviceErr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    timings.add('hcn-cni-standalone.exe serve: listening', Date.now() - t0);
  }, 240_000);

  afterAll(async () => {
    if (service && service.exitCode === null && service.signalCode === null) service.kill('SIGKILL');
    service?.stderr?.destroy(); // wine processes may keep the pipe's other end open
    await sim?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
    console.log(timings.format('wine timings (shim + service)'));
  });

  test('ADD, CHECK and DEL through the shim are answered by the service', async () => {
    const ns = await cni.newNamespace();
    const env = { HCN_CNI_SERVICE: pipe };
    const add = await cni.call(
      { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-svc', netns: ns, env },
      'shim ADD (service)',
    );
    expect(add.code).toBe(0);
    expectOnlyResult(add);
    expect(add.json!.interfaces[0].sandbox).toBe(ns);
    expect(add.stderr).not.toContain('not using the service'); // the shim's server check passed
    const lines = logs(add.stderr);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.service === true)).toBe(true);
    const check = await cni.call(
      { verb: 'CHECK', conf: bridgeConf({ prevResult: add.json }), containerId: 'pod-svc', netns: ns, env },
      'shim CHECK (service)',
    );
    expect({ code: check.code, out: check.stdout }).toEqual({ code: 0, out: '' });
    const del = await cni.call(
      { verb: 'DEL', conf: bridgeConf(), containerId: 'pod-svc', netns: ns, env },
      'shim DEL (service)',
    );
    expect({ code: del.code, out: del.stdout }).toEqual({ code: 0, out: '' });
    expect(logs(del.stderr).every((l) => l.service === true)).toBe(true);
    expect((await sim.control.dump()).endpoints).toEqual([]);

    // The operator's view of it, over the same pipe.
    const status = await cni.call({ args: ['service', '--json'], env }, 'hcn-cni.exe service (shim → standalone)');
    expect(status.code).toBe(0);
    expect(status.json).toMatchObject({ running: true, address: pipe, served: 3, inFlight: [] });

    // The pipe is the addon's, with the DACL as wine reads it back from the pipe, and the token check's SIDs.
    const listening = logs(serviceErr).find((l) => l.msg === 'service: listening');
    expect(listening).toMatchObject({
      address: pipe,
      dacl: 'D:P(A;;GA;;;SY)(A;;GA;;;BA)',
      allowSids: ['S-1-5-18', 'S-1-5-32-544'],
    });
  }, 120_000);

  test("the shim's server check: the service passes, also when Administrators is demanded", async () => {
    const before = (await cni.call({ args: ['service', '--json'], env: { HCN_CNI_SERVICE: pipe } })).json!;
    const version = await cni.call(
      { verb: 'VERSION', env: { HCN_CNI_SERVICE: pipe, HCN_CNI_TEST_SHIM_SERVER_SIDS: 'S-1-5-32-544' } },
      'shim VERSION (service, Administrators demanded)',
    );
    expect(version.code).toBe(0);
    expect(version.stderr).not.toContain('not using the service');
    expect(version.json).toMatchObject({ supportedVersions: expect.arrayContaining(['1.1.0']) });
    const after = (await cni.call({ args: ['service', '--json'], env: { HCN_CNI_SERVICE: pipe } })).json!;
    expect(after.served).toBe((before.served as number) + 1);
  }, 120_000);

  test('a squatter pipe is refused before a byte is written when its server lacks the SIDs demanded', async () => {
    const squat = `\\\\.\\pipe\\hcn-cni-test-squat-${crypto.randomBytes(4).toString('hex')}`;
    const logFile = path.join(work, 'squatter.log');
    fs.writeFileSync(logFile, '');
    const squatLog = (): string[] => fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
    const squatter = spawn(
      WINE,
      [build.nodeExe, winPath(path.join(__dirname, 'fixtures', 'pipe-squatter.js')), squat, winPath(logFile)],
      { env: cni.prefix.env, stdio: 'ignore' },
    );
    try {
      const t0 = Date.now();
      while (!squatLog().includes('listening')) {
        if (squatter.exitCode !== null || Date.now() - t0 > 120_000)
          throw new Error(`the squatter did not start under wine: ${squatLog().join('; ')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      timings.add('node.exe pipe-squatter.js: listening', Date.now() - t0);

      // Demanding SYSTEM: the squatter (the wine user, an administrator) is refused before anything is written.
      const ns = await cni.newNamespace();
      const env = { HCN_CNI_SERVICE: squat, HCN_CNI_TEST_SHIM_SERVER_SIDS: 'S-1-5-18' };
      const add = await cni.call(
        { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-squat', netns: ns, env },
        'shim ADD (squatter refused → fallback)',
      );
      expect(add.code).toBe(0);
      expectOnlyResult(add);
      expect(add.json!.ips[0].address).toMatch(/^10\.244\.1\.\d+\/24$/); // not the squatter's 6.6.6.6
      const said = add.stderr.split(/\r?\n/).filter((l) => l.startsWith('hcn-cni: not using the service'));
      expect(said).toEqual([
        expect.stringMatching(
          new RegExp(
            `^hcn-cni: not using the service at ${squat.replace(/\\/g, '\\\\').replace(/\./g, '\\.')}: ` +
              'its server \\(pid \\d+\\) runs as S-1-5-21-[\\d-]+, which holds none of ' +
              'HCN_CNI_TEST_SHIM_SERVER_SIDS; running hcn-cni-standalone$',
          ),
        ),
      ]);
      expect(logs(add.stderr).some((l) => l.service === true)).toBe(false); // the standalone executable answered
      const t1 = Date.now();
      while (!squatLog().some((l) => l.startsWith('connection'))) {
        if (Date.now() - t1 > 60_000) throw new Error(`the squatter saw no connection: ${squatLog().join('; ')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(squatLog()).toEqual(['listening', 'connection 0 bytes']);
      const del = await cni.call(
        { verb: 'DEL', conf: bridgeConf(), containerId: 'pod-squat', netns: ns, env },
        'shim DEL (squatter refused → fallback)',
      );
      expect({ code: del.code, out: del.stdout }).toEqual({ code: 0, out: '' });

      // What wine cannot show: without the demand the same squatter passes (every wine process is an administrator)
      // and gets the request. On Windows a non-administrator's squatter is refused by the check itself.
      const version = await cni.call({ verb: 'VERSION', env: { HCN_CNI_SERVICE: squat } }, 'shim VERSION (squatter)');
      expect(version.stdout).toBe('{"cniVersion":"1.0.0","ips":[{"address":"6.6.6.6/32"}]}\n');
      expect(squatLog().find((l) => l.startsWith('env: '))).toContain('CNI_COMMAND=VERSION');
    } finally {
      squatter.kill('SIGKILL');
    }
  }, 240_000);

  test('a second service on the same pipe name, not to take it over, does not start; the first goes on serving', async () => {
    const second = await runWine(
      cni.prefix,
      [path.join(work, 'bin', 'hcn-cni-standalone.exe'), 'serve', '--listen', pipe, '--no-take-over'],
      {
        env: { HCN_SIM: sim.address },
        timeoutMs: 90_000,
      },
    );
    timings.add('second hcn-cni-standalone.exe serve (refused)', second.ms);
    expect({ code: second.code, stderr: second.stderr }).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(`the pipe ${pipe} already exists`),
    });
    const status = await cni.call(
      { args: ['service', '--json'], env: { HCN_CNI_SERVICE: pipe } },
      'hcn-cni.exe service',
    );
    expect(status.json).toMatchObject({ running: true, address: pipe, pid: expect.any(Number) });
  }, 120_000);

  test('a client whose token holds none of the allowed SIDs is refused before anything is read', async () => {
    // startService with allowSids = [SYSTEM] only, in Windows node.exe: the wine user is an administrator, not SYSTEM.
    const narrow = `\\\\.\\pipe\\hcn-cni-test-narrow-${crypto.randomBytes(4).toString('hex')}`;
    const bundle = bundleWineFixture('service-allow-sids');
    const logFile = path.join(work, 'narrow-service.log');
    const narrowLog = (): Array<Record<string, unknown>> =>
      fs.existsSync(logFile) ? logs(fs.readFileSync(logFile, 'utf8')) : [];
    const narrowService = spawn(
      WINE,
      [
        build.nodeExe,
        winPath(bundle),
        winPath(path.join(build.winDir, 'hcn.node')),
        narrow,
        'S-1-5-18',
        winPath(logFile),
      ],
      { env: { ...cni.prefix.env, HCN_SIM: sim.address }, stdio: 'ignore' },
    );
    try {
      const t0 = Date.now();
      while (!narrowLog().some((l) => l.msg === 'service: listening')) {
        if (narrowService.exitCode !== null || Date.now() - t0 > 120_000)
          throw new Error(`the narrowed service did not start under wine: ${JSON.stringify(narrowLog())}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      timings.add('node.exe service-allow-sids.js: listening', Date.now() - t0);

      const ns = await cni.newNamespace();
      const env = { HCN_CNI_SERVICE: narrow };
      const add = await cni.call(
        { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-narrow', netns: ns, env },
        'shim ADD (refused → fallback)',
      );
      expect(add.code).toBe(0);
      expectOnlyResult(add);
      const lines = logs(add.stderr);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.some((l) => l.service === true)).toBe(false); // the standalone executable answered
      const del = await cni.call(
        { verb: 'DEL', conf: bridgeConf(), containerId: 'pod-narrow', netns: ns, env },
        'shim DEL (refused → fallback)',
      );
      expect({ code: del.code, out: del.stdout }).toEqual({ code: 0, out: '' });

      // The service refused both connections at the token check, naming who it was, and accepted nothing.
      const refusals = narrowLog().filter((l) => l.msg === 'service: refused a connection (nothing was read)');
      expect(refusals.length).toBeGreaterThanOrEqual(2);
      for (const r of refusals)
        expect(r).toMatchObject({
          level: 'warn',
          address: narrow,
          reason: expect.stringContaining('none of the allowed SIDs'),
          user: expect.stringMatching(/^S-1-5-21-/),
        });
      expect(narrowLog().filter((l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
    } finally {
      narrowService.kill('SIGKILL');
    }
  }, 240_000);

  test('with the service gone the shim runs hcn-cni-standalone.exe beside it', async () => {
    service!.kill('SIGKILL');
    await new Promise((r) =>
      service!.exitCode !== null || service!.signalCode !== null ? r(undefined) : service!.once('exit', r),
    );
    const ns = await cni.newNamespace();
    const env = { HCN_CNI_SERVICE: pipe };
    const add = await cni.call(
      { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-fb', netns: ns, env },
      'shim ADD (fallback)',
    );
    expect(add.code).toBe(0);
    expectOnlyResult(add);
    const lines = logs(add.stderr);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.some((l) => l.service === true)).toBe(false);
    const del = await cni.call(
      { verb: 'DEL', conf: bridgeConf(), containerId: 'pod-fb', netns: ns, env },
      'shim DEL (fallback)',
    );
    expect({ code: del.code, out: del.stdout }).toEqual({ code: 0, out: '' });
    expect((await sim.control.dump()).endpoints).toEqual([]);
  }, 180_000);
});
