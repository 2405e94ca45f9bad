/**
 * The stand-in ABI is complete: libhcnsim.so exports every function mingw-w64's computenetwork.h declares,
 * plus exactly the known extras (the SDN-route functions computenetwork.dll exports without a header, HNSCall and the
 * HCS functions of vmcompute.dll hcsshim calls, and the simulator's own adapter listing). A C caller then drives the
 * functions the addon does not use, through the hcn_abi.h pointer types (fixtures/abi-probe.cc). The Windows DLLs'
 * export tables are checked in test/windows/abi-exports.test.ts.
 *
 * Skips only when the header or g++ is missing locally; with CI=true it fails instead (.ci/run installs mingw-w64 and
 * g++).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { HR } from '../../src/hns/hresults';
import { startSimulator, type RunningSimulator } from '../../src/sim';
import { ABI_EXTRAS, HEADER, headerFunctions } from './abi-list';

const ROOT = path.join(__dirname, '..', '..');
const LIB = path.join(ROOT, 'build', 'Release', 'libhcnsim.so');
const IS_CI = /^(true|1)$/i.test(process.env.CI ?? '');
const haveGpp = spawnSync('g++', ['--version']).status === 0;
const missing = !fs.existsSync(HEADER) ? `${HEADER} (apt-get install mingw-w64)` : !haveGpp ? 'g++' : undefined;
const suite = missing && !IS_CI ? describe.skip : describe;
if (missing && !IS_CI) console.warn(`SKIPPED abi-exports: ${missing} is missing`);

function exportsOf(lib: string): string[] {
  const nm = spawnSync('nm', ['-D', '--defined-only', lib], { encoding: 'utf8' });
  expect(nm.status).toBe(0);
  return nm.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length === 3 && f[1] === 'T')
    .map((f) => f[2]!)
    .filter((n) => /^(Hcn|Hcs|HNSCall$)/.test(n))
    .sort();
}

suite('libhcnsim.so exports', () => {
  test('every function of computenetwork.h, and beyond them exactly the known extras', () => {
    if (missing) throw new Error(`cannot check the ABI: ${missing} is missing (required with CI=true)`);
    const header = headerFunctions();
    // mingw-w64 10: 7 each for networks, namespaces, endpoints and load balancers, and 13 others
    expect(header.length).toBeGreaterThanOrEqual(41);
    const exported = exportsOf(LIB);
    expect(exported.filter((n) => !header.includes(n))).toEqual([...ABI_EXTRAS].sort());
    expect(header.filter((n) => !exported.includes(n))).toEqual([]);
  });
});

suite('the exports the addon does not use, called from C', () => {
  let sim: RunningSimulator;
  let probe: string;
  let tmp: string;
  beforeAll(async () => {
    if (missing) throw new Error(`cannot build the probe: ${missing} is missing (required with CI=true)`);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-abi-'));
    probe = path.join(tmp, 'abi-probe');
    const cc = spawnSync(
      'g++',
      [
        '-std=c++17',
        '-Wall',
        '-Werror',
        `-I${path.join(ROOT, 'native', 'include')}`,
        '-o',
        probe,
        path.join(__dirname, 'fixtures', 'abi-probe.cc'),
        '-ldl',
      ],
      { encoding: 'utf8' },
    );
    if (cc.status !== 0) throw new Error(`g++ failed: ${cc.stderr}`);
    sim = await startSimulator({ logLevel: 'warn' });
    await sim.control.addContainer('c0ffee');
  });
  afterAll(async () => {
    await sim?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('load balancers, SDN routes, not-modelled functions and the HCS callback/properties path', async () => {
    const run = spawnSync(probe, [LIB, 'c0ffee'], { encoding: 'utf8', env: { ...process.env, HCN_SIM: sim.address } });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const steps = new Map<string, { hr: number; out: string | null; record: string | null }>();
    for (const line of run.stdout.trim().split('\n')) {
      const s = JSON.parse(line) as { step: string; hr: number; out: string | null; record: string | null };
      steps.set(s.step, s);
    }
    const hr = (step: string) => steps.get(step)?.hr;
    for (const ok of ['create-network', 'create-endpoint', 'create-lb', 'query-lb', 'modify-lb', 'enumerate-lb'])
      expect({ ok, hr: hr(ok), record: steps.get(ok)?.record }).toEqual({ ok, hr: 0, record: null });
    for (const ok of ['close-lb', 'open-lb', 'delete-lb', 'create-route', 'query-route', 'enumerate-routes'])
      expect({ ok, hr: hr(ok) }).toEqual({ ok, hr: 0 });
    expect(JSON.parse(steps.get('query-lb')!.out!)).toMatchObject({
      PortMappings: [{ Protocol: 6, InternalPort: 8080, ExternalPort: 8090 }],
      FrontendVIPs: ['1.1.1.2'],
    });
    expect(JSON.parse(steps.get('enumerate-lb')!.out!)).toHaveLength(1);
    expect(JSON.parse(steps.get('enumerate-routes')!.out!)).toHaveLength(1);
    // HNS does not modify routes (hcsshim hcn/hcnroute.go); the not-modelled functions answer E_NOTIMPL, with the
    // error record where they have one, and clear their outputs.
    expect(steps.get('modify-route')).toMatchObject({ hr: HR.E_NOTIMPL });
    // Service notifications are modelled (src/sim/service-callbacks.ts): registered and released.
    expect(hr('register-service-callback-null')).toBe(0x80004003); // E_POINTER
    expect(hr('register-service-callback')).toBe(0);
    expect(hr('unregister-service-callback')).toBe(0);
    expect(steps.get('create-guest-network-service')).toEqual({
      step: 'create-guest-network-service',
      hr: HR.E_NOTIMPL,
      out: null,
      record: '{"Success":false,"Error":"Not implemented. ","ErrorCode":2147500033}',
    });
    expect(hr('enumerate-port-reservations')).toBe(HR.E_NOTIMPL);
    // HCS: open, register, properties (what hcsshim getCachedProperties parses), unregister, close.
    for (const ok of ['hcs-open', 'hcs-register', 'hcs-properties', 'hcs-unregister', 'hcs-close'])
      expect({ ok, hr: hr(ok) }).toEqual({ ok, hr: 0 });
    expect(JSON.parse(steps.get('hcs-properties')!.out!)).toMatchObject({
      Id: 'c0ffee',
      SystemType: 'Container',
      RuntimeOsType: 'Windows',
    });
    expect(hr('hcs-register-no-system')).toBe(HR.E_HANDLE);
    expect([...steps.keys()].filter((k) => k.endsWith('not-cleared') || k === 'missing')).toEqual([]);
  });
});
