/**
 * Windows truth, part 3: a host without HCN. The prefix "nohcn" has vmcompute.dll (HNSCall) in System32 but NO
 * computenetwork.dll. hcn-cni.exe must say that v2 is unavailable (`hcn-cni.exe version`, STATUS with apiVersion 2,
 * the ADD's log) and, with apiVersion "auto", work through HNSCall: ADD and DEL succeed, and the simulator shows
 * the objects as created by v1; `doctor` reads the pods through HNSCall, and `selftest` says it needs HCN.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startSimulator, type RunningSimulator } from '../../src/sim';
import { expectOnlyResult, WineCni } from './helpers/cni-wine';
import { describeWine, installSystem32, warmWineserver, winPath, winePrefix, WineTimings } from './helpers/wine';

function bridgeConf(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { cniVersion: '1.1.0', name: 'cbr0', type: 'hcn-cni', createNetwork: true, subnet: '10.244.7.0/24', ...extra };
}

describeWine('hcn-cni.exe under wine without computenetwork.dll', (build) => {
  let sim: RunningSimulator;
  let work: string;
  let cni: WineCni;
  const timings = new WineTimings();

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-wine-nohcn-'));
    const prefix = winePrefix('nohcn');
    if (prefix.createdMs !== undefined)
      timings.add('wine prefix "nohcn" created (wineboot --init + winecfg /v win10)', prefix.createdMs);
    installSystem32(prefix, ['vmcompute.dll'], ['computenetwork.dll']);
    expect(fs.existsSync(path.join(prefix.dir, 'drive_c/windows/system32/computenetwork.dll'))).toBe(false);
    warmWineserver(prefix);
    sim = await startSimulator({ listen: 'tcp:127.0.0.1:0', logLevel: 'warn' });
    cni = new WineCni(prefix, build.exe, sim, path.join(work, 'state'), timings);
  }, 180_000);

  afterAll(async () => {
    await sim?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
    console.log(timings.format('wine timings (no computenetwork.dll)'));
  });

  test('`hcn-cni.exe version` reports HCN (v2) missing, HNSCall present, and auto picking v1', async () => {
    const v = await cni.call({ args: ['version', '--json'] });
    expect({ code: v.code, stderr: v.code === 0 ? '' : v.stderr }).toEqual({ code: 0, stderr: '' });
    const info = JSON.parse(v.stdout) as {
      platform: string;
      addon: {
        source: string;
        capabilities: {
          v2Supported: boolean;
          v1Supported: boolean;
          hcnLibrary: string | null;
          v1Library: string;
          loadError: string | null;
        };
      };
      api: { auto: { version: number; reason: string } };
    };
    expect(info.platform).toBe('win32/x64');
    expect(info.addon.source).toBe('sea');
    expect(info.addon.capabilities).toMatchObject({ v2Supported: false, v1Supported: true, hcnLibrary: null });
    expect(info.addon.capabilities.v1Library.toLowerCase()).toBe('c:\\windows\\system32\\vmcompute.dll');
    expect(info.addon.capabilities.loadError).toMatch(/computenetwork/i);
    expect(info.api.auto).toMatchObject({ version: 1, reason: expect.stringMatching(/^auto: HCN absent/) });
  });

  test('STATUS: apiVersion 2 is refused as unavailable; auto is fine', async () => {
    const v2 = await cni.call(
      { verb: 'STATUS', conf: bridgeConf({ apiVersion: 2 }) },
      'hcn-cni.exe STATUS (apiVersion 2)',
    );
    expect(v2.code).toBe(1);
    expectOnlyResult(v2);
    expect(v2.json).toMatchObject({
      code: 50,
      msg: expect.stringMatching(/apiVersion 2 needs HCN \(computenetwork\.dll\), which this host lacks/),
    });
    const auto = await cni.call({ verb: 'STATUS', conf: bridgeConf() }, 'hcn-cni.exe STATUS (auto)');
    expect({ code: auto.code, stdout: auto.stdout }).toEqual({ code: 0, stdout: '' });
  });

  test('apiVersion auto: ADD and DEL work through HNSCall; the objects are v1-created', async () => {
    await sim.control.reset();
    const ns = await cni.newNamespace();
    const before = (await sim.control.calls()).length;
    const add = await cni.call({ verb: 'ADD', conf: bridgeConf(), containerId: 'pod-v1', netns: ns });
    expect({ code: add.code, stdout: add.code === 0 ? '' : add.stdout }).toEqual({ code: 0, stdout: '' });
    expectOnlyResult(add);
    expect(add.json).toMatchObject({
      interfaces: [{ name: 'eth0', sandbox: ns }],
      ips: [{ address: expect.stringMatching(/^10\.244\.7\.\d+\/24$/) }],
    });
    // The log says which API the host got and why.
    const chosen = add.stderr.split('\n').filter((l) => l.includes('"msg":"HNS API chosen by the host"'));
    expect(chosen).toHaveLength(1);
    expect(JSON.parse(chosen[0]!)).toMatchObject({ api: 1, reason: expect.stringMatching(/^auto: HCN absent/) });

    const dump = await sim.control.dump();
    expect(dump.networks.map((n) => [n.Name, n.CreatedBy])).toEqual([['cbr0', 'v1']]);
    expect(dump.endpoints.map((e) => e.CreatedBy)).toEqual(['v1']);
    // Nothing from hcn-cni.exe reached the service as an Hcn* (v2) call.
    const exeCalls = (await sim.control.calls()).slice(before);
    expect(exeCalls.length).toBeGreaterThan(0);
    expect(exeCalls.filter((c) => c.api === 'v2').map((c) => c.op)).toEqual([]);

    const del = await cni.call({ verb: 'DEL', conf: bridgeConf(), containerId: 'pod-v1', netns: ns });
    expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
    expect((await sim.control.dump()).endpoints).toEqual([]);
  }, 120_000);

  test('doctor reads the pod through HNSCall (API v1; no finding about it); selftest says it needs HCN', async () => {
    await sim.control.reset();
    const ns = await cni.newNamespace();
    const add = await cni.call({ verb: 'ADD', conf: bridgeConf(), containerId: 'pod-doc', netns: ns });
    expect({ code: add.code, stdout: add.code === 0 ? '' : add.stdout }).toEqual({ code: 0, stdout: '' });
    const conflist = path.join(work, '10-hcn.conflist');
    const { cniVersion, name, ...plugin } = bridgeConf({ stateDir: winPath(cni.stateDir) });
    fs.writeFileSync(conflist, JSON.stringify({ cniVersion, name, plugins: [plugin] }));
    const common = ['--conf', winPath(conflist)];
    const d = await cni.call({
      args: ['doctor', '--json', ...common, '--service', '\\\\.\\pipe\\hcn-cni-wine-no-service'],
    });
    // Without computenetwork.dll the addon lists the adapters from the OS (adapterSource "os"): here wine's view of
    // this Linux machine, which has no "Ethernet" of the simulator's. That finding is the test host's; the pod's
    // endpoint, its namespace and its policies, read through HNSCall, raise none.
    const report = JSON.parse(d.stdout) as {
      findings: Array<{ kind: string; severity: string; subject: string; detail?: unknown }>;
    };
    expect(report.findings.filter((f) => f.severity !== 'info').map((f) => [f.kind, f.severity])).toEqual([
      ['network-adapter-missing', 'error'],
    ]);
    expect(report.findings.find((f) => f.kind === 'network-adapter-missing')!.detail).toMatchObject({
      adapterName: 'Ethernet',
    });
    expect(d.code).toBe(2);
    expect(report.findings.find((f) => f.kind === 'host')!.detail).toMatchObject({
      api: { version: 1, reason: expect.stringMatching(/^auto: HCN absent/) },
    });
    const st = await cni.call({ args: ['selftest', ...common] });
    expect({ code: st.code, stdout: st.stdout }).toEqual({ code: 1, stdout: '' });
    expect(st.stderr).toMatch(
      /this host has no HCN \(computenetwork\.dll\): the self-test exercises the HCN calls only/,
    );
  }, 120_000);
});
