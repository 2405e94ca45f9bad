/**
 * Upgrading without a gap on Windows (src/service/hand-over/hand-over.ts, listeners.ts listenPipeTakingOver), under wine: a second
 * `hcn-cni-standalone.exe serve` on the named pipe of one that serves takes it over. The old one agrees over the pipe,
 * the new one checks the pipe's server is that one (GetNamedPipeServerProcessId) and adds its own instances, then the
 * old one closes its instances, finishes what it accepted and exits 0.
 *  - While two lanes of ADD/DEL run through the shim, every verb succeeds and is answered by a service: the bin
 *    directory has no hcn-cni-standalone.exe, so a shim that fell back would fail. Both services answered some.
 *  - The old one's log says it handed over; the new one serves on alone.
 * Wine's named pipes are wineserver's, not the Windows kernel's: FILE_FLAG_FIRST_PIPE_INSTANCE is not enforced there
 * (wine 8; the addon's WaitNamedPipeW check refuses a second server instead), and which instance a client reaches when
 * two servers' instances wait is wineserver's choice. What this shows is the protocol and the addon's join (the server
 * check, no first-instance flag, close(true)) working end to end; that Windows accepts the second server's instances
 * under the DACL (FILE_CREATE_PIPE_INSTANCE) is documented, not observed.
 */
import { spawn, type ChildProcess } from 'child_process';
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startSimulator, type RunningSimulator } from '../../src/sim';
import { WineCni, type ExeOutcome } from './helpers/cni-wine';
import { encodeRequest, KIND_STATUS, parseReply } from '../../src/service/transport/protocol';
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

function bridgeConf(): Record<string, unknown> {
  return { cniVersion: '1.1.0', name: 'cbr0', type: 'hcn-cni', createNetwork: true, subnet: '10.244.1.0/24' };
}

/** The JSON log lines of a stderr. */
function logs(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split(/\r?\n/)
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

interface WineService {
  child: ChildProcess;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

describeWine('a new service takes the named pipe over (wine)', (build) => {
  let sim: RunningSimulator;
  let work: string;
  let cni: WineCni;
  const started: WineService[] = [];
  const pipe = `\\\\.\\pipe\\hcn-cni-test-upgrade-${crypto.randomBytes(4).toString('hex')}`;
  const timings = new WineTimings();

  /** `hcn-cni-standalone.exe serve` on the pipe, once its log says it listens. */
  async function startService(address = pipe): Promise<WineService> {
    // stderr to a file, not a pipe: under wine, a Node whose standard handles are unix pipes fails to open a named
    // pipe as a client (net.connect: "open EBADF"), and the new service connects to the old one.
    const errFile = path.join(work, `serve-${started.length}.stderr`);
    const fd = fs.openSync(errFile, 'w');
    const child = spawn(WINE, [build.exe, 'serve', '--listen', address], {
      env: { ...cni.prefix.env, HCN_SIM: sim.address },
      stdio: ['ignore', 'ignore', fd],
    });
    fs.closeSync(fd);
    const stderr = (): string => fs.readFileSync(errFile, 'utf8');
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const s = { child, stderr, exited };
    started.push(s);
    const t0 = Date.now();
    while (!stderr().includes('service: listening')) {
      if (child.exitCode !== null) throw new Error(`hcn-cni serve exited under wine: ${stderr()}`);
      if (Date.now() - t0 > 120_000) throw new Error(`hcn-cni serve did not start under wine: ${stderr()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    timings.add('hcn-cni-standalone.exe serve: listening', Date.now() - t0);
    return s;
  }

  /** Polls `ok` until it holds (wine is slow: generous bounds, no assertion on time). */
  const waitFor = async (what: string, ok: () => boolean, ms = 180_000): Promise<void> => {
    const t0 = Date.now();
    while (!ok()) {
      if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  /** The Windows pid a service logs with. */
  const pidOf = (s: WineService): unknown => logs(s.stderr()).find((l) => l.msg === 'service: listening')?.pid;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-wine-upgrade-'));
    const prefix = winePrefix('main');
    installSystem32(prefix, ['computenetwork.dll', 'vmcompute.dll']);
    warmWineserver(prefix, 60);
    sim = await startSimulator({ listen: 'tcp:127.0.0.1:0', logLevel: 'warn' });
    // The shim alone: no hcn-cni-standalone.exe beside it, so a verb the service does not answer fails.
    const bin = path.join(work, 'bin');
    fs.mkdirSync(bin);
    fs.copyFileSync(path.join(build.winDir, 'hcn-cni-shim.exe'), path.join(bin, 'hcn-cni.exe'));
    cni = new WineCni(prefix, path.join(bin, 'hcn-cni.exe'), sim, path.join(work, 'state'), timings);
  }, 240_000);

  afterAll(async () => {
    for (const s of started) {
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    }
    await sim?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
    console.log(timings.format('wine timings (hand-over)'));
  });

  test('while ADD/DEL run through the shim: every verb is answered by a service, the old one exits 0', async () => {
    const a = await startService();
    const outcomes: Array<{ what: string; out: ExeOutcome }> = [];
    let stop = false;
    const env = { HCN_CNI_SERVICE: pipe };
    const stream = async (lane: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const containerId = `pod-${lane}-${i}`;
        const netns = await cni.newNamespace();
        for (const verb of ['ADD', 'DEL'] as const) {
          const out = await cni.call({ verb, conf: bridgeConf(), containerId, netns, env }, `shim ${verb}`);
          outcomes.push({ what: `${verb} ${containerId}`, out });
        }
      }
    };
    const servedBy = (o: { out: ExeOutcome }): unknown => logs(o.out.stderr)[0]?.pid;
    const count = (s: WineService) => outcomes.filter((o) => servedBy(o) === pidOf(s)).length;
    const lanes = [stream(0), stream(1)];
    try {
      await waitFor('the old service to answer some verbs', () => count(a) >= 2);
      const b = await startService();
      expect(await a.exited).toEqual({ code: 0, signal: null });
      expect(a.stderr()).toMatch(/handed over to the service with pid \d+; every accepted request has finished/);
      await waitFor('the new service to answer some verbs', () => count(b) >= 2);
      stop = true;
      await Promise.all(lanes);

      const failed = outcomes.filter((o) => o.out.code !== 0).map((o) => `${o.what}: ${o.out.stdout}${o.out.stderr}`);
      expect(failed).toEqual([]);
      // Every verb was the service's (its log lines say so), one of the two.
      const notService = outcomes.filter((o) => !logs(o.out.stderr).every((l) => l.service === true));
      expect(notService.map((o) => o.what)).toEqual([]);
      expect([...new Set(outcomes.map(servedBy))].sort()).toEqual([pidOf(a), pidOf(b)].sort());
      // The new one checked the pipe's server before it joined: the old one's pid.
      expect(logs(b.stderr()).find((l) => l.msg === 'service: listening')).toMatchObject({ address: pipe });
      const status = await runWine(cni.prefix, [build.exe, 'service', '--json'], { env: { HCN_CNI_SERVICE: pipe } });
      expect(JSON.parse(status.stdout)).toMatchObject({ running: true, pid: pidOf(b) });
      expect((await sim.control.dump()).endpoints).toEqual([]);
    } finally {
      stop = true;
      await Promise.allSettled(lanes);
    }
  }, 600_000);

  test('a request the old service is still reading at the hand-over is finished there: its drain waits for it', async () => {
    // A pipe of its own, served first by startService in node.exe (a 10-minute request timeout: wine may take long to
    // start the new service), then taken over by `hcn-cni serve`.
    const address = `\\\\.\\pipe\\hcn-cni-test-half-${crypto.randomBytes(4).toString('hex')}`;
    const dir = fs.mkdtempSync(path.join(work, 'half-'));
    const logFile = path.join(dir, 'old.log');
    const oldLog = (): Array<Record<string, unknown>> =>
      fs.existsSync(logFile) ? logs(fs.readFileSync(logFile, 'utf8')) : [];
    const hcnNode = winPath(path.join(build.winDir, 'hcn.node'));
    const fixture = winPath(bundleWineFixture('service-long-reads'));
    const old = spawn(WINE, [build.nodeExe, fixture, hcnNode, address, winPath(logFile)], {
      env: { ...cni.prefix.env, HCN_SIM: sim.address },
      stdio: 'ignore',
    });
    const oldExited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      old.on('exit', (code, signal) => resolve({ code, signal })),
    );
    started.push({ child: old, stderr: () => '', exited: oldExited });
    await waitFor('the old service to listen', () => oldLog().some((l) => l.msg === 'service: listening'));

    fs.writeFileSync(path.join(dir, 'request.bin'), encodeRequest(KIND_STATUS, {}, Buffer.alloc(0)));
    const client = spawn(
      WINE,
      [build.nodeExe, winPath(path.join(__dirname, 'fixtures', 'half-request-client.js')), address, winPath(dir)],
      { env: cni.prefix.env, stdio: 'ignore' },
    );
    const clientExited = new Promise<void>((resolve) => client.on('exit', () => resolve()));
    await waitFor('the client to send half its request', () => fs.existsSync(path.join(dir, 'sent')));

    await startService(address);
    await waitFor('the old service to hand over', () =>
      oldLog().some((l) => l.msg === 'service: handed over; no longer accepting, finishing the requests in flight'),
    );
    // A drain that counted only accepted requests ended here, and the old service exited with the request half-read.
    const exitedEarly = await Promise.race([
      oldExited.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 5000)),
    ]);
    expect(exitedEarly).toBe(false);

    fs.writeFileSync(path.join(dir, 'go'), '');
    await clientExited;
    const reply = parseReply(fs.readFileSync(path.join(dir, 'reply.bin')));
    expect(reply?.type).toBe('result');
    const oldPid = oldLog().find((l) => l.msg === 'service: listening')?.pid;
    expect(JSON.parse((reply as { stdout: string }).stdout)).toMatchObject({ pid: oldPid });
    expect(await oldExited).toEqual({ code: 0, signal: null });
    expect(oldLog().at(-1)).toMatchObject({
      msg: 'exiting 0',
      what: expect.stringMatching(/^handed over to the service with pid \d+; every accepted request has finished$/),
    });
  }, 600_000);
});
