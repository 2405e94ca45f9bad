/**
 * `hcn-cni uninstall` (src/cli/uninstall.ts, in-process) on a node of the simulator holding: two pods of ours with
 * host-local addresses, a leaked endpoint of ours (no record: an orphan), a win-bridge network and endpoint, and
 * kube-proxy-style load balancer and v1 policy list. Pods attached without --force: refused, nothing changed. With
 * --force: the dry run prints the plan; the real run prints the same plan and does exactly it — our pods DELed and
 * their IPs released through host-local, the orphan deleted, the files install put removed; the win-bridge network
 * and endpoint, the load balancer and the policy list untouched.
 */
import * as fs from 'fs';
import * as path from 'path';
import { endpointName, nicNetworkName } from '../../src/orphans/ownership';
import { WireClient } from '../../src/sim';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, newNamespace } from '../plugin/support';
import { uninstallIn } from './uninstall-support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

const V2 = { SchemaVersion: { Major: 2, Minor: 0 } };
const GUID_NULL = '00000000-0000-0000-0000-000000000000';

function okOut(r: { hr: number; result?: string | null }): string {
  if (r.hr !== 0) throw new Error(`simulator call failed: 0x${(r.hr >>> 0).toString(16)} ${r.result ?? ''}`);
  return r.result ?? '';
}

const uninstall = (args: string[]) => uninstallIn(h, args);

it('refuses with pods attached unless --force; with --force does exactly what its dry run said, and nothing to what is not ours', async () => {
  const conf = bridgeConf({ ipam: hostLocal(h) });
  // The files install put.
  const bin = path.join(h.tmp, 'node-bin');
  const confDir = path.join(h.tmp, 'node-conf');
  fs.mkdirSync(bin, { recursive: true });
  fs.mkdirSync(confDir, { recursive: true });
  for (const f of ['hcn-cni', 'hcn-cni-standalone', 'hcn-cni.old-1']) fs.writeFileSync(path.join(bin, f), f);
  fs.writeFileSync(path.join(bin, 'host-local-not-ours'), 'x');
  fs.writeFileSync(
    path.join(confDir, '10-hcn-cni.conflist'),
    JSON.stringify({ cniVersion: '1.0.0', name: 'cbr0', plugins: [{ ...conf, stateDir: h.stateDir }] }),
  );

  // Two pods of ours.
  for (const id of ['pod-a', 'pod-b']) {
    const add = await cni(h, { verb: 'ADD', conf, containerId: id, netns: await newNamespace(h) });
    expect(add.exitCode).toBe(0);
  }
  expect(Object.values(heldIps(h, 'cbr0')).sort()).toEqual(['pod-a', 'pod-b']);
  const sim = new WireClient(h.sim.address);
  const dump0 = await h.sim.control.dump();
  const cbr0 = dump0.networks.find((n) => n.Name === 'cbr0')!.ID;
  // A leak of ours: an endpoint with our name for a pod the state does not know.
  const leak = okOut(
    await sim.createEndpoint(
      cbr0,
      null,
      JSON.stringify({ ...V2, Name: endpointName({ containerId: 'gone', ifname: 'eth0' }) }),
    ),
  );
  // win-bridge's: its network and a pod's endpoint (<container id>_<network name>, here a pod of a win-bridge conflist also named cbr0: a migrated node), kube-proxy's load balancer and policy list.
  const winbr = okOut(
    await sim.createNetwork(
      null,
      JSON.stringify({
        ...V2,
        Name: 'winbr',
        Type: 'L2Bridge',
        Ipams: [{ Type: 'Static', Subnets: [{ IpAddressPrefix: '10.250.0.0/24' }] }],
      }),
    ),
  );
  const winEp = okOut(await sim.createEndpoint(winbr, null, JSON.stringify({ ...V2, Name: 'c0ffee_cbr0' })));
  const lb = okOut(
    await sim.call({
      op: 'HcnCreateLoadBalancer',
      id: GUID_NULL,
      settings: JSON.stringify({
        ...V2,
        HostComputeEndpoints: [winEp],
        SourceVIP: '10.0.0.10',
        FrontendVIPs: ['10.96.0.10'],
        PortMappings: [{ Protocol: 6, InternalPort: 8080, ExternalPort: 80 }],
      }),
    }),
  );
  const policyList = JSON.parse(
    okOut(
      await sim.hnsCall(
        'POST',
        '/policylists/',
        JSON.stringify({
          References: [`/endpoints/${winEp}`],
          Policies: [
            { Type: 'ELB', Protocol: 6, InternalPort: 80, ExternalPort: 8080, VIPs: ['10.96.0.1'], ILB: true },
          ],
        }),
      ),
    ),
  ).Output.ID as string;

  const before = await h.sim.control.dump();
  /** What HNS holds (the dump also carries call counts, which reading changes). */
  const objects = async () => {
    const d = await h.sim.control.dump();
    return { networks: d.networks, endpoints: d.endpoints, namespaces: d.namespaces };
  };
  const objectsBefore = await objects();
  const files = () => fs.readdirSync(bin).sort().concat(fs.readdirSync(confDir).sort());
  const filesBefore = files();

  // Pods attached, no --force: one line, exit 1, nothing changed (dry run or not).
  for (const args of [['--dry-run'], []]) {
    const r = await uninstall(args);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^hcn-cni uninstall: 2 pod\(s\) still attached \(pod-a@eth0, pod-b@eth0\); nothing was changed — drain the node .* or --force/,
    );
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(await objects()).toEqual(objectsBefore);
    expect(files()).toEqual(filesBefore);
  }

  const planLines = (out: string) =>
    out
      .split('\n')
      .filter((l) => /^(\(dry run\) )?(DEL pod|delete|remove|leave) /.test(l))
      .map((l) => l.replace('(dry run) ', ''));
  const dry = await uninstall(['--force', '--dry-run']);
  expect(dry.code).toBe(0);
  expect(await objects()).toEqual(objectsBefore);
  expect(files()).toEqual(filesBefore);
  const plan = planLines(dry.out);
  expect(plan).toEqual([
    expect.stringMatching(
      /^DEL pod pod-a@eth0: endpoint hcn-ep-\S+ \(\S+\), 10\.244\.1\.\d+\/24 released through ipam host-local$/,
    ),
    expect.stringMatching(/^DEL pod pod-b@eth0: /),
    expect.stringMatching(
      new RegExp(`^delete endpoint ${endpointName({ containerId: 'gone', ifname: 'eth0' })} \\(${leak}\\)`, 'i'),
    ),
    `remove shim ${path.join(bin, 'hcn-cni')}`,
    `remove leftover ${path.join(bin, 'hcn-cni.old-1')}`,
    `remove standalone executable ${path.join(bin, 'hcn-cni-standalone')}`,
    `remove conflist ${path.join(confDir, '10-hcn-cni.conflist')}`,
    'leave 2 network(s) and 1 endpoint(s) not named by hcn-cni, and every load balancer and policy list (hcn-cni makes none)',
  ]);

  const real = await uninstall(['--force']);
  expect({ code: real.code, err: real.err }).toEqual({ code: 0, err: '' });
  expect(planLines(real.out)).toEqual(plan);

  const after = await h.sim.control.dump();
  // Ours gone: the pods' endpoints and the leak; their addresses released through host-local.
  const ourEndpoints = before.endpoints.filter((e) => e.Name.startsWith('hcn-ep-')).map((e) => e.ID);
  expect(ourEndpoints).toHaveLength(3);
  expect(after.endpoints.map((e) => e.ID)).toEqual([winEp]);
  expect(heldIps(h, 'cbr0')).toEqual({});
  // Theirs untouched: the win-bridge network and endpoint exactly as before, cbr0 (named by the configuration, not
  // provably ours), the load balancer and the policy list.
  expect(after.networks).toEqual(before.networks);
  expect(after.endpoints).toEqual(before.endpoints.filter((e) => e.ID === winEp));
  expect(okOut(await sim.call({ op: 'HcnOpenLoadBalancer', id: lb }))).toBe(lb);
  expect(JSON.parse(okOut(await sim.hnsCall('GET', '/policylists/'))).Output.map((p: { ID: string }) => p.ID)).toEqual([
    policyList,
  ]);
  // The files install put are gone, and nothing else.
  expect(files()).toEqual(['host-local-not-ours']);
});

it('refuses, with or without --force, while an object of ours is protected (a pod whose record is unreadable), and changes nothing', async () => {
  const conf = bridgeConf({ ipam: hostLocal(h) });
  const bin = path.join(h.tmp, 'node-bin');
  const confDir = path.join(h.tmp, 'node-conf');
  fs.mkdirSync(bin, { recursive: true });
  fs.mkdirSync(confDir, { recursive: true });
  fs.writeFileSync(path.join(bin, 'hcn-cni'), 'hcn-cni');
  fs.writeFileSync(
    path.join(confDir, '10-hcn-cni.conflist'),
    JSON.stringify({ cniVersion: '1.0.0', name: 'cbr0', plugins: [{ ...conf, stateDir: h.stateDir }] }),
  );
  expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-q', netns: await newNamespace(h) })).exitCode).toBe(0);
  // Its record cannot be read (a torn write): its attached endpoint may be in use, nothing says it is gone.
  fs.writeFileSync(path.join(h.stateDir, 'attachments', 'pod-q@eth0.json'), '{"kind":"attach');
  const objects = async () => {
    const d = await h.sim.control.dump();
    return { networks: d.networks, endpoints: d.endpoints };
  };
  const objectsBefore = await objects();
  const files = () => fs.readdirSync(bin).sort().concat(fs.readdirSync(confDir).sort());
  const filesBefore = files();
  for (const args of [['--force', '--dry-run'], ['--force'], []]) {
    const r = await uninstall(args);
    expect([args, r.code]).toEqual([args, 1]);
    expect(r.err).toMatch(
      /^hcn-cni uninstall: 1 HNS object\(s\) of ours are not provably unused \(endpoint \S+: protected, /,
    );
    expect(r.err).toMatch(/hcn-cni state --clear-quarantine/);
    expect(await objects()).toEqual(objectsBefore);
    expect(files()).toEqual(filesBefore);
  }
  expect(Object.values(heldIps(h, 'cbr0'))).toEqual(['pod-q']);
});

it("refuses while a network of ours holds another plugin's endpoint, saying that endpoint is what to remove — not a quarantine there is not", async () => {
  const conf = bridgeConf({ ipam: hostLocal(h) });
  const confDir = path.join(h.tmp, 'node-conf');
  fs.mkdirSync(confDir, { recursive: true });
  fs.writeFileSync(
    path.join(confDir, '10-hcn-cni.conflist'),
    JSON.stringify({ cniVersion: '1.0.0', name: 'cbr0', plugins: [{ ...conf, stateDir: h.stateDir }] }),
  );
  // The node has served a pod (its state directory exists), which is gone.
  const ns = await newNamespace(h);
  for (const verb of ['ADD', 'DEL'] as const)
    expect((await cni(h, { verb, conf, containerId: 'pod-was', netns: ns })).exitCode).toBe(0);
  // A delegated-NIC network of ours that no record claims (a leak), with another plugin's endpoint on it: deleting
  // the network would take that endpoint with it.
  const sim = new WireClient(h.sim.address);
  const leaked = okOut(
    await sim.createNetwork(
      null,
      JSON.stringify({
        ...V2,
        Name: nicNetworkName({ containerId: 'gone', ifname: 'eth0' }),
        Type: 'L2Bridge',
        Ipams: [{ Type: 'Static', Subnets: [{ IpAddressPrefix: '10.251.0.0/24' }] }],
      }),
    ),
  );
  okOut(await sim.createEndpoint(leaked, null, JSON.stringify({ ...V2, Name: 'c0ffee_peer' })));
  const before = await h.sim.control.dump();
  for (const args of [['--force'], []]) {
    const r = await uninstall(args);
    expect([args, r.code]).toEqual([args, 1]);
    expect(r.err).toMatch(/it still holds 1 endpoint\(s\) that are not orphans \(c0ffee_peer\)/);
    expect(r.err).toMatch(/remove the endpoints not named by hcn-cni with the plugin that made them/);
    expect(r.err).not.toMatch(/quarantine/);
    const after = await h.sim.control.dump();
    expect([after.networks, after.endpoints]).toEqual([before.networks, before.endpoints]);
  }
});
