/**
 * `hcn-cni uninstall` on a node with more than what install wrote, or after a run that failed:
 *  - a second hcn-cni conflist sharing the state directory, its network still holding a pod while install's network
 *    is drained: refused without --force, nothing changed; with --force that pod is DELed through its own network's
 *    IPAM and both conflists go;
 *  - HNS refusing a pod's endpoint delete under --force: the run stops with every file in place (the conflist holds
 *    the IPAM configuration the next run needs); the rerun finishes and releases the address;
 *  - no hcn-cni conflist in the conf directory: refused in one line unless --state-dir names the state directory,
 *    never judged against the built-in default.
 */
import * as fs from 'fs';
import * as path from 'path';
import { WireClient } from '../../src/sim';
import { bridgeConf, cni, delegatedNicConf, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, hungOn, newNamespace, until } from '../plugin/support';
import { nodeBin, nodeConf, uninstallIn } from './uninstall-support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

const E_ACCESSDENIED = 0x80070005;

/** The files install put (and a second hcn-cni conflist when given), as the node has them. */
function putFiles(confs: Record<string, Record<string, unknown>>): void {
  fs.mkdirSync(nodeBin(h), { recursive: true });
  fs.mkdirSync(nodeConf(h), { recursive: true });
  for (const f of ['hcn-cni', 'hcn-cni-standalone']) fs.writeFileSync(path.join(nodeBin(h), f), f);
  for (const [file, conf] of Object.entries(confs)) {
    const { cniVersion, name, ...plugin } = conf;
    fs.writeFileSync(
      path.join(nodeConf(h), file),
      JSON.stringify({ cniVersion, name, plugins: [{ stateDir: h.stateDir, ...plugin }] }),
    );
  }
}

const files = () => [...fs.readdirSync(nodeBin(h)), ...fs.readdirSync(nodeConf(h))].sort();
const endpoints = async () => (await h.sim.control.dump()).endpoints.map((e) => e.Name).sort();

async function add(conf: Record<string, unknown>, containerId: string): Promise<void> {
  const r = await cni(h, { verb: 'ADD', conf, containerId, netns: await newNamespace(h) });
  expect(r.exitCode).toBe(0);
}

it("refuses while another hcn-cni conflist's network has a pod; --force DELs it through that network's IPAM", async () => {
  const neta = bridgeConf({ name: 'neta', ipam: hostLocal(h) });
  const netb = bridgeConf({
    name: 'netb',
    networkName: 'cbr-b',
    subnet: '10.244.2.0/24',
    ipam: hostLocal(h, '10.244.2.0/24'),
  });
  putFiles({ '10-hcn-cni.conflist': neta, '20-hcn-cni-b.conflist': netb });
  await add(neta, 'pa');
  await add(netb, 'pb');
  const del = await cni(h, { verb: 'DEL', conf: neta, containerId: 'pa' });
  expect(del.exitCode).toBe(0);
  const filesBefore = files();
  const endpointsBefore = await endpoints();
  expect(endpointsBefore).toHaveLength(1);

  for (const args of [['--dry-run'], []]) {
    const r = await uninstallIn(h, args);
    expect({ code: r.code, err: r.err }).toEqual({
      code: 1,
      err: 'hcn-cni uninstall: 1 pod(s) still attached (pb@eth0 on netb); nothing was changed — drain the node so the runtime DELs them, or --force to DEL them here\n',
    });
    expect(files()).toEqual(filesBefore);
    expect(await endpoints()).toEqual(endpointsBefore);
  }
  expect(Object.values(heldIps(h, 'netb'))).toEqual(['pb']);

  const forced = await uninstallIn(h, ['--force']);
  expect({ code: forced.code, err: forced.err }).toEqual({ code: 0, err: '' });
  expect(forced.out).toMatch(/^DEL pod pb@eth0 on netb: .* released through ipam host-local$/m);
  // The conflists last, both: the plugin they name is gone.
  expect(forced.out.split('\n').filter((l) => l.startsWith('remove '))).toEqual([
    `remove shim ${path.join(nodeBin(h), 'hcn-cni')}`,
    `remove standalone executable ${path.join(nodeBin(h), 'hcn-cni-standalone')}`,
    `remove conflist ${path.join(nodeConf(h), '10-hcn-cni.conflist')}`,
    `remove conflist ${path.join(nodeConf(h), '20-hcn-cni-b.conflist')}`,
  ]);
  expect(await endpoints()).toEqual([]);
  expect(heldIps(h, 'netb')).toEqual({});
  expect(files()).toEqual([]);
});

it("another conflist's own state directory: its pod is judged there, not as this directory's orphan", async () => {
  const neta = bridgeConf({ name: 'neta', ipam: hostLocal(h) });
  const netb = bridgeConf({
    name: 'netb',
    networkName: 'cbr-b',
    subnet: '10.244.2.0/24',
    ipam: hostLocal(h, '10.244.2.0/24'),
    stateDir: path.join(h.tmp, 'state-b'),
  });
  putFiles({ '10-hcn-cni.conflist': neta, '20-hcn-cni-b.conflist': netb });
  await add(neta, 'pa');
  await add(netb, 'pb');
  const dry = await uninstallIn(h, ['--dry-run']);
  expect(dry.err).toMatch(/^hcn-cni uninstall: 2 pod\(s\) still attached \(pa@eth0 on neta, pb@eth0 on netb\)/);
  expect(dry.out).not.toMatch(/^\S*delete endpoint/m);

  const forced = await uninstallIn(h, ['--force']);
  expect({ code: forced.code, err: forced.err }).toEqual({ code: 0, err: '' });
  expect(forced.out).toContain(
    `conflist ${path.join(nodeConf(h), '20-hcn-cni-b.conflist')}; state ${path.join(h.tmp, 'state-b')}`,
  );
  expect(await endpoints()).toEqual([]);
  expect({ a: heldIps(h, 'neta'), b: heldIps(h, 'netb') }).toEqual({ a: {}, b: {} });
  expect(files()).toEqual([]);
});

it('a --force run that HNS stops leaves every file for the next run, which finishes and releases the address', async () => {
  const conf = bridgeConf({ name: 'neta', ipam: hostLocal(h) });
  putFiles({ '10-hcn-cni.conflist': conf });
  await add(conf, 'p1');
  const filesBefore = files();
  await h.sim.control.failCall('HcnDeleteEndpoint', E_ACCESSDENIED, { count: 5 });

  const failed = await uninstallIn(h, ['--force']);
  expect(failed.code).toBe(1);
  expect(failed.err).toMatch(/^hcn-cni uninstall: uninstall stopped with 1 error\(s\) .* run it again/);
  expect(failed.out).toMatch(/^ERROR .*E_ACCESSDENIED/m);
  expect(files()).toEqual(filesBefore);
  expect(Object.values(heldIps(h, 'neta'))).toEqual(['p1']);

  await h.sim.control.reset({ objects: false });
  const rerun = await uninstallIn(h, ['--force']);
  expect({ code: rerun.code, err: rerun.err }).toEqual({ code: 0, err: '' });
  expect(rerun.out).toMatch(new RegExp(`^conflist ${path.join(nodeConf(h), '10-hcn-cni.conflist')}; state `, 'm'));
  expect(await endpoints()).toEqual([]);
  expect(heldIps(h, 'neta')).toEqual({});
  expect(files()).toEqual([]);
});

it('with no hcn-cni conflist it refuses unless --state-dir names the state directory', async () => {
  putFiles({});
  const refused = await uninstallIn(h, ['--force']);
  expect(refused.code).toBe(1);
  expect(refused.err).toBe(
    `hcn-cni uninstall: no hcn-cni conflist in ${nodeConf(h)}, so the state directory of the pods is not known (the built-in /var/lib/hcn-cni may be another's); nothing was changed — give --state-dir DIR, or the --conf-dir that holds the conflist\n`,
  );
  expect(refused.out).toBe('');
  expect(files()).toEqual(['hcn-cni', 'hcn-cni-standalone']);

  fs.mkdirSync(h.stateDir, { recursive: true });
  const told = await uninstallIn(h, ['--force', '--state-dir', h.stateDir]);
  expect({ code: told.code, err: told.err }).toEqual({ code: 0, err: '' });
  expect(told.out).toMatch(new RegExp(`^conflist built-in defaults .*; state ${h.stateDir}$`, 'm'));
  expect(files()).toEqual([]);
});

/** A delegated-NIC pod, its conflist installed; its network. */
async function delegatedNicPod(): Promise<{ id: string; name: string }> {
  const nic = { Name: 'Ethernet 3', MacAddress: '00-15-5D-AA-00-03' };
  // The host (its adapters) outlives a test: add the NIC once.
  if (!(await h.sim.control.host()).adapters.some((x) => x.Name === nic.Name)) await h.sim.control.addAdapter(nic);
  const conf = delegatedNicConf(nic.MacAddress);
  putFiles({ '10-hcn-cni.conflist': conf });
  await add(conf, 'pod-nic');
  const net = (await h.sim.control.dump()).networks.find((n) => n.Name.startsWith('hcn-nic-'))!;
  return { id: net.ID, name: net.Name };
}

/** Another plugin's endpoint (a migrated node, a tool's probe) on a network; its id. */
async function peerEndpointOn(sim: WireClient, networkId: string): Promise<string> {
  const r = await sim.createEndpoint(
    networkId,
    null,
    JSON.stringify({ SchemaVersion: { Major: 2, Minor: 0 }, Name: 'c0ffee_peer' }),
  );
  expect(r.hr).toBe(0);
  return r.result!;
}

const networkIds = async () => (await h.sim.control.dump()).networks.map((n) => n.ID);

it("a delegated-NIC pod whose network also holds another plugin's endpoint: refused with or without --force, dry run or not, nothing changed (its DEL would keep the network, and nothing would remove it after)", async () => {
  const net = await delegatedNicPod();
  const sim = new WireClient(h.sim.address);
  const peer = await peerEndpointOn(sim, net.id);
  const before = await h.sim.control.dump();
  const filesBefore = files();
  for (const args of [['--force', '--dry-run'], ['--force'], []]) {
    const r = await uninstallIn(h, args);
    expect([args, r.code]).toEqual([args, 1]);
    expect(r.err).toContain(`1 network(s) of ours also hold endpoints not named by hcn-cni (${net.name}: c0ffee_peer)`);
    expect(r.err).toMatch(/remove the endpoints not named by hcn-cni with the plugin that made them/);
    const after = await h.sim.control.dump();
    expect([after.networks, after.endpoints]).toEqual([before.networks, before.endpoints]);
    expect(files()).toEqual(filesBefore);
  }
  // Once that plugin removed its endpoint, --force DELs the pod (its network goes with it) and removes the files.
  expect((await sim.deleteEndpoint(peer)).hr).toBe(0);
  const r = await uninstallIn(h, ['--force']);
  expect([r.code, r.err]).toEqual([0, '']);
  expect(await networkIds()).not.toContain(net.id);
  expect(files()).toEqual([]);
});

it("another plugin's endpoint put on the pod's network while its DEL runs: the network stays, and so do the files, with an ERROR saying why; the rerun finishes once it is gone", async () => {
  const net = await delegatedNicPod();
  const sim = new WireClient(h.sim.address);
  const filesBefore = files();
  // The DEL's endpoint delete hangs in HNS; the peer's create queues behind it, so HNS runs it before the DEL looks
  // at what else is on the network.
  await h.sim.control.hang('HcnDeleteEndpoint');
  const running = uninstallIn(h, ['--force']);
  await hungOn(h.sim.control, 'HcnDeleteEndpoint');
  const peer = peerEndpointOn(sim, net.id);
  await until(async () => ((await h.sim.control.stats()).pendingMutations >= 2 ? true : undefined));
  await h.sim.control.release();
  const first = await running;
  expect(first.code).toBe(1);
  expect(first.out).toContain(
    `ERROR network ${net.name} (${net.id}) is still there: it still holds 1 endpoint(s) that are not orphans (c0ffee_peer); remove the endpoints not named by hcn-cni`,
  );
  expect(await endpoints()).toEqual(['c0ffee_peer']);
  expect(await networkIds()).toContain(net.id);
  expect(files()).toEqual(filesBefore);

  expect((await sim.deleteEndpoint(await peer)).hr).toBe(0);
  const second = await uninstallIn(h, []);
  expect([second.code, second.err]).toEqual([0, '']);
  expect(await networkIds()).not.toContain(net.id);
  expect(files()).toEqual([]);
});
