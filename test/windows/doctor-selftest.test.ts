/**
 * Windows truth, the operator's diagnostics: dist/hcn-cni.exe under wine, with the stand-in computenetwork.dll and
 * vmcompute.dll in System32, against the simulator on tcp:127.0.0.1, after one pod's ADD:
 *  - `doctor --json --bundle Z:\…\bundle.zip` on the healthy node: exit 0, nothing worse than info, and a zip (read
 *    back with fflate) holding the report, every HNS object, the state, the redacted conflist and versions, without
 *    the token planted in the conflist, asking the service given with --service (a pipe), listing the state's files
 *    by their names in the zip ('/'); a second run refuses to overwrite it (exit 3) and leaves it as it was;
 *  - `selftest --report Z:\…\report.json`: exit 0, a report that passed, HNS and the state as before, and the Linux
 *    `hcn-sim compare` of that report shows no difference;
 *  - `selftest --network-of-its-own`: a NAT network of its own made and removed, HNS as before;
 *  - a selftest killed by the simulator once HNS made its endpoint: the next one finds the dead claim (the killed
 *    Windows process's pid and start time, read through the addon under wine) and removes what it left;
 *  - with `hcn-cni.exe serve` on a named pipe, `doctor --service PIPE --bundle` finds it running there (the addon's
 *    pipe, read by the service client under wine) and the bundle holds its status;
 *  - after an HNS restart dropped the pod's endpoint, `doctor --json` names it (error) and exits 2.
 * One simulator, one prefix, nine short wine starts and one service.
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { strFromU8, unzipSync } from 'fflate';
import type { Finding } from '../../src/doctor/finding';
import { startSimulator, type RunningSimulator } from '../../src/sim';
import { stateFiles } from '../helpers/cni-harness';
import { WineCni } from './helpers/cni-wine';
import {
  describeWine,
  installSystem32,
  ROOT,
  warmWineserver,
  WINE,
  winPath,
  winePrefix,
  WineTimings,
} from './helpers/wine';

const SIM_CLI = path.join(ROOT, 'dist', 'cli', 'hcn-sim.js');

/** A service-account token's shape (a JWT), planted in the conflist: the bundle must not carry it. */
const TOKEN =
  'eyJhbGciOiJSUzI1NiIsImtpZCI6IndpbmUifQ.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6d2luZSJ9.d2luZS1wbGFudGVkLXNpZ25hdHVyZQ';

function bridgeConf(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: '1.1.0',
    name: 'cbr0',
    type: 'hcn-cni',
    createNetwork: true,
    subnet: '10.244.4.0/24',
    hnsTimeoutSeconds: 10,
    ...extra,
  };
}

interface Report {
  findings: Finding[];
  counts: { error: number; warning: number; info: number };
  exitCode: number;
}

describeWine('hcn-cni.exe doctor, --bundle and selftest under wine', (build) => {
  let sim: RunningSimulator;
  let work: string;
  let cni: WineCni;
  let conflist: string;
  const timings = new WineTimings();
  /** A pipe nobody serves (the service runs only in its own test, on another pipe). */
  const noService = '\\\\.\\pipe\\hcn-cni-wine-no-service';
  const servicePipe = `\\\\.\\pipe\\hcn-cni-wine-doctor-${process.pid}`;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-wine-doctor-'));
    const prefix = winePrefix('main');
    if (prefix.createdMs !== undefined)
      timings.add('wine prefix created (wineboot --init + winecfg /v win10)', prefix.createdMs);
    installSystem32(prefix, ['computenetwork.dll', 'vmcompute.dll']);
    warmWineserver(prefix);
    sim = await startSimulator({ listen: 'tcp:127.0.0.1:0', logLevel: 'warn' });
    cni = new WineCni(prefix, build.exe, sim, path.join(work, 'state'), timings);
    // The node's conflist, with a token a user could have put there.
    conflist = path.join(work, 'conf', '10-hcn.conflist');
    fs.mkdirSync(path.dirname(conflist), { recursive: true });
    const logFile = winPath(path.join(work, 'hcn-cni.log'));
    const { cniVersion, name, ...plugin } = bridgeConf({ stateDir: winPath(cni.stateDir), logFile, token: TOKEN });
    // With a byte-order mark, as Windows PowerShell 5.1's Set-Content -Encoding UTF8 writes it.
    fs.writeFileSync(conflist, `\uFEFF${JSON.stringify({ cniVersion, name, plugins: [plugin] })}`);
    const add = await cni.call({ verb: 'ADD', conf: bridgeConf({ logFile }), containerId: 'pod-a' });
    expect({ code: add.code, stderr: add.code === 0 ? '' : add.stderr }).toEqual({ code: 0, stderr: '' });
  }, 180_000);

  afterAll(async () => {
    await sim?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
    console.log(timings.format('wine timings (doctor, selftest)'));
  });

  const doctor = (service: string, ...extra: string[]) =>
    cni.call(
      { args: ['doctor', '--conf', winPath(conflist), '--service', service, ...extra] },
      `hcn-cni.exe doctor ${extra.join(' ')}`,
    );

  function parsed(stdout: string): Report {
    return JSON.parse(stdout) as Report;
  }

  /** What HNS holds, by name and id (the objects a self-test makes carry names and ids of their own). */
  async function hns(): Promise<Record<string, string[]>> {
    await sim.control.waitIdle();
    const dump = await sim.control.dump();
    return {
      networks: dump.networks.map((n) => `${n.Name} ${n.ID}`).sort(),
      endpoints: dump.endpoints.map((e) => `${e.Name} ${e.ID}`).sort(),
      namespaces: dump.namespaces.map((n) => n.ID).sort(),
    };
  }

  test('doctor --json --bundle on a healthy node: exit 0, no trouble, a zip without the planted token; a second run refuses to overwrite it', async () => {
    const zip = path.join(work, 'bundle.zip');
    const d = await doctor(noService, '--json', '--bundle', winPath(zip));
    expect({ code: d.code, stderr: d.code === 0 ? '' : d.stderr }).toEqual({ code: 0, stderr: '' });
    const report = parsed(d.stdout);
    expect(report.findings.filter((f) => f.severity !== 'info')).toEqual([]);
    expect(report.findings.map((f) => f.kind).sort()).toEqual(['host', 'service']);
    expect(report.findings.find((f) => f.kind === 'host')!.detail).toMatchObject({ platform: 'win32/x64' });
    expect(report.exitCode).toBe(0);
    expect(d.stderr).toMatch(/wrote Z:\\.*\\bundle\.zip \(\d+ bytes, \d+ files\)/);

    const files = unzipSync(fs.readFileSync(zip));
    const names = Object.keys(files).sort();
    for (const n of [
      'MANIFEST.txt',
      'conf/10-hcn.conflist',
      'hns/adapters.json',
      'hns/v1-endpoints.json',
      'hns/v1-networks.json',
      'hns/v2-endpoints.json',
      'hns/v2-namespaces.json',
      'hns/v2-networks.json',
      'report.json',
      'report.txt',
      'service/status.json',
      'state/listing.json',
      'versions.json',
    ])
      expect(names).toContain(n);
    expect(names.filter((n) => n.startsWith('state/files/attachments/'))).toEqual([
      'state/files/attachments/pod-a@eth0.json',
    ]);
    const everything = names.map((n) => strFromU8(files[n]!)).join('\n');
    expect(everything).toContain('cbr0');
    expect(everything).not.toContain(TOKEN);
    expect(everything).not.toContain(TOKEN.split('.')[2]);
    expect(strFromU8(files['hns/v2-endpoints.json']!)).toMatch(/"IpConfigurations"/);
    // The configured log's tail, read through its Z:\ path: the ADD's lines.
    expect(strFromU8(files['logs/hcn-cni.log.tail']!)).toMatch(/"containerId": "pod-a"/);
    expect(JSON.parse(strFromU8(files['versions.json']!))).toMatchObject({ platform: 'win32/x64' });
    // The service the doctor was told to ask (--service) is the one the bundle asked.
    expect(JSON.parse(strFromU8(files['service/status.json']!))).toMatchObject({
      running: false,
      address: noService,
    });
    // The listing names each state file as the bundle does ('/', not Windows' '\\').
    const listing = JSON.parse(strFromU8(files['state/listing.json']!)) as { entries: Array<{ path: string }> };
    expect(listing.entries.map((e) => e.path)).toContain('attachments/pod-a@eth0.json');

    const before = fs.readFileSync(zip);
    const again = await doctor(noService, '--bundle', winPath(zip));
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/bundle\.zip exists; refusing to overwrite it/);
    expect(fs.readFileSync(zip).equals(before)).toBe(true);
  });

  test('selftest --report: exit 0, HNS and the state as before, and hcn-sim compare of the report shows no difference', async () => {
    const before = await hns();
    expect(before.endpoints).toHaveLength(1);
    const records = stateFiles(cni);
    expect(records).toEqual(['attachments/pod-a@eth0.json']);
    const reportFile = path.join(work, 'selftest.json');
    const r = await cni.call({
      args: ['selftest', '--conf', winPath(conflist), '--report', winPath(reportFile)],
    });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/every answer as the plugin relies on; nothing left behind/);
    const report = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as {
      passed: boolean;
      platform: string;
      steps: Array<{ name: string; pass: boolean }>;
    };
    expect({ passed: report.passed, platform: report.platform }).toEqual({ passed: true, platform: 'win32' });
    expect(report.steps.filter((s) => !s.pass).map((s) => s.name)).toEqual([]);
    expect(report.steps.map((s) => s.name)).toEqual(
      expect.arrayContaining(['namespace-attach', 'endpoint-create', 'namespace-detach-again']),
    );
    expect(await hns()).toEqual(before);
    expect(stateFiles(cni)).toEqual(records);

    const compare = spawnSync(process.execPath, [SIM_CLI, 'compare', reportFile], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ code: compare.status, out: compare.stdout, err: compare.stderr }).toEqual({
      code: 0,
      out: `compare: ${report.steps.length} calls replayed, 0 difference(s)\n`,
      err: '',
    });
  });

  test('selftest --network-of-its-own: a NAT network of its own made and removed, HNS as before', async () => {
    const before = await hns();
    const reportFile = path.join(work, 'selftest-own.json');
    const r = await cni.call({
      args: [
        'selftest',
        '--conf',
        winPath(conflist),
        '--network-of-its-own',
        '--subnet',
        '172.30.9.0/24',
        '--report',
        winPath(reportFile),
      ],
    });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/NAT network of its own \(172\.30\.9\.0\/24\), address 172\.30\.9\.2 \(fixed\)/);
    const report = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as {
      passed: boolean;
      steps: Array<{ name: string; call: { args: Array<{ Name?: string; Type?: string }> } }>;
    };
    expect(report.passed).toBe(true);
    expect(report.steps.find((s) => s.name === 'network-create')?.call.args[0]).toMatchObject({
      Name: expect.stringMatching(/^hcn-nic-[0-9a-f]{40}$/),
      Type: 'NAT',
    });
    expect(await hns()).toEqual(before);
  });

  test('a selftest killed once HNS made its endpoint: the next one (its claim read, the dead pid found dead under wine) finishes it: HNS as before, no claim left', async () => {
    const before = await hns();
    const records = stateFiles(cni);
    const selftest = (label: string) =>
      cni.call({ args: ['selftest', '--conf', winPath(conflist)] }, `hcn-cni.exe selftest (${label})`);
    // The simulator kills the caller once HNS has accepted the create (it finds the wine process by its connection).
    await sim.control.killClient('HcnCreateEndpoint');
    const killed = await selftest('killed in HcnCreateEndpoint');
    expect({ signal: killed.signal, code: killed.code }).toEqual({ signal: 'SIGKILL', code: null });
    const left = await hns();
    expect(left.endpoints.length).toBe(before.endpoints.length + 1);
    expect(left.namespaces.length).toBe(before.namespaces.length + 1);
    const next = await selftest('after the killed one');
    expect({ code: next.code, stderr: next.stderr }).toEqual({ code: 0, stderr: '' });
    expect(next.stdout).toMatch(/^finished what an earlier self-test left: /m);
    expect(next.stdout).toMatch(/every answer as the plugin relies on; nothing left behind/);
    expect(await hns()).toEqual(before);
    // No claim is left; the finished run's owner keeps a tombstone (as a DEL's), which housekeeping removes after
    // its grace.
    const after = stateFiles(cni);
    expect(after.filter((f) => !f.startsWith('tombstones/'))).toEqual(records);
    expect(after.filter((f) => f.startsWith('tombstones/'))).toEqual([
      expect.stringMatching(/^tombstones\/hcn-cni-selftest-[0-9a-f]+@eth0\.json$/),
    ]);
  });

  /** `hcn-cni.exe serve` on servicePipe, answering once its log says it listens; stopped by the caller. */
  async function startService(): Promise<ChildProcess> {
    const t0 = Date.now();
    const service = spawn(
      WINE,
      [build.exe, 'serve', '--listen', servicePipe, '--conf-dir', winPath(path.dirname(conflist))],
      { env: { ...cni.prefix.env, HCN_SIM: sim.address }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    await new Promise<void>((resolve, reject) => {
      service.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('service: listening')) resolve();
      });
      service.on('exit', (code) => reject(new Error(`hcn-cni.exe serve exited (${code}) before listening: ${err}`)));
    });
    timings.add('hcn-cni.exe serve: listening', Date.now() - t0);
    return service;
  }

  test('with the service running on a pipe: doctor finds it running there, and the bundle holds its status', async () => {
    const service = await startService();
    try {
      const zip = path.join(work, 'bundle-service.zip');
      const d = await doctor(servicePipe, '--json', '--bundle', winPath(zip));
      expect({ code: d.code, stderr: d.code === 0 ? '' : d.stderr }).toEqual({ code: 0, stderr: '' });
      const report = parsed(d.stdout);
      expect(report.findings.filter((f) => f.severity !== 'info')).toEqual([]);
      expect(report.findings.find((f) => f.kind === 'service')!.why).toContain(`running at ${servicePipe} (pid `);
      const status = JSON.parse(strFromU8(unzipSync(fs.readFileSync(zip))['service/status.json']!)) as Record<
        string,
        unknown
      >;
      expect(status).toMatchObject({ running: true, pid: expect.any(Number) });
    } finally {
      const exited = new Promise((resolve) => service.once('exit', resolve));
      service.kill('SIGKILL');
      service.stderr?.destroy(); // wine processes may keep the pipe's other end open
      await exited;
    }
  });

  test("after an HNS restart dropped the pod's endpoint: doctor --json names it as an error, exit 2", async () => {
    await sim.control.restart();
    const d = await doctor(noService, '--json');
    expect(d.code).toBe(2);
    const report = parsed(d.stdout);
    expect(report.findings.filter((f) => f.severity !== 'info').map((f) => [f.kind, f.severity, f.subject])).toEqual([
      ['pod-endpoint-missing', 'error', 'pod pod-a@eth0'],
    ]);
    expect({ exitCode: report.exitCode, errors: report.counts.error }).toEqual({ exitCode: 2, errors: 1 });
  });
});
