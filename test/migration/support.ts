/**
 * A simulated node that ran another Windows CNI plugin, switched to hcn-cni with pods still running. The
 * peer's objects are made here with the bodies that peer sends (each builder cites the peer's source), its IPAM state
 * as it left it (host-local run exactly as the peer runs it: pkg/ipam ExecAdd with the same stdin and CNI_* env), and
 * then the runtime drives hcn-cni: DEL of 3 of the 5 pods, ADD of 5 new ones, GC with the rest valid.
 *
 * What `migrate` asserts, after every step: no IP address is on two live endpoints; at the end: no endpoint of a
 * deleted pod is left, the 2 surviving pods' endpoints (and their IPAM allocations) are exactly as the peer left them,
 * and the bystanders (another configuration's still-running pods) are untouched.
 */
import { spawnSync } from 'child_process';
import { randomUUID } from 'crypto';
import * as path from 'path';
import { CNI_BIN, cni, type CniCall, type CniOutcome, type Harness } from '../helpers/cni-harness';
import { heldIps } from '../plugin/support';

export type Json = Record<string, unknown>;

/** What a peer left of one pod: its attachment, the endpoint it made, the address IPAM gave it, its ADD result. */
export interface PeerPod {
  containerId: string;
  ifname: string;
  netns: string;
  endpointId: string;
  endpointName: string;
  ip?: string;
  /** The ADD result the runtime cached (libcni) and sends back as prevResult on DEL. */
  result?: Json;
}

const hcn = (h: Harness) => h.deps.hns.hcn({ hnsTimeoutSeconds: 10 });

/** A containerd-style pod sandbox id: 64 hex digits. */
export function sandboxId(): string {
  return (randomUUID() + randomUUID()).replace(/-/g, '');
}

/** A fresh HCN namespace: what containerd creates and passes as CNI_NETNS. */
export async function newNamespace(h: Harness): Promise<string> {
  const id = randomUUID();
  await hcn(h).createNamespace({}, id);
  return id;
}

/**
 * host-local run as a peer's ADD runs its IPAM (containernetworking/plugins pkg/ipam ExecAdd: the plugin's own stdin,
 * CNI_COMMAND=ADD and the attachment's CNI_* variables): the allocation file under dataDir is then what the peer left.
 */
export function hostLocalAdd(conf: Json, pod: { containerId: string; ifname: string; netns: string }): Json {
  const r = spawnSync(path.join(CNI_BIN, 'host-local'), [], {
    input: JSON.stringify(conf),
    env: {
      CNI_COMMAND: 'ADD',
      CNI_CONTAINERID: pod.containerId,
      CNI_IFNAME: pod.ifname,
      CNI_NETNS: pod.netns || 'none',
      CNI_PATH: CNI_BIN,
    },
  });
  if (r.status !== 0) throw new Error(`host-local ADD failed: ${r.stdout.toString()} ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString()) as Json;
}

/** The first IPv4 address (no prefix) of a CNI result. */
export function ipOf(result: Json): string {
  const ips = (result.ips ?? []) as Array<{ address: string }>;
  return ips[0]!.address.split('/')[0]!;
}

/** HcnCreateNetwork with the peer's body (its schema, HCN JSON). */
export async function createNetworkV2(h: Harness, body: Json): Promise<string> {
  return (await hcn(h).createNetwork(body as never)).ID as string;
}

/** HcnCreateEndpoint with the peer's body, then HcnModifyNamespace Add (hcsshim hcn AddNamespaceEndpoint). */
export async function createEndpointV2(h: Harness, networkId: string, body: Json, namespace?: string): Promise<string> {
  const ep = await hcn(h).createEndpoint(networkId, body as never);
  if (namespace) await hcn(h).addNamespaceEndpoint(namespace, ep.ID as string);
  return ep.ID as string;
}

/**
 * HNS v1 POST /endpoints/ with the peer's HNSEndpoint body (hcsshim HNSEndpoint.Create), then hcsshim
 * HotAttachEndpoint: HCS Modify {"ResourceType":"Network","RequestType":"Add","Settings":<id>} on the running
 * sandbox container (hcsshim hnsendpoint.go).
 */
export async function createEndpointV1(h: Harness, body: Json, container?: string): Promise<string> {
  const ep = await hcn(h).hnsCall<{ ID: string }>('POST', '/endpoints/', body);
  if (container) {
    await h.sim.control.addContainer(container).catch((e: Error) => {
      if (!/exists/.test(e.message)) throw e;
    });
    await hcn(h).modifyComputeSystem(container, { ResourceType: 'Network', RequestType: 'Add', Settings: ep.ID });
  }
  return ep.ID;
}

/** Every endpoint HNS holds, as the simulator dumps it (HCN view plus SharedContainers). */
export async function liveEndpoints(h: Harness): Promise<Json[]> {
  return (await h.sim.control.dump()).endpoints as Json[];
}

/** The addresses of an endpoint in the dump. */
export function addressesOfDump(ep: Json): string[] {
  return ((ep.IpConfigurations ?? []) as Array<{ IpAddress: string }>).map((c) => c.IpAddress);
}

/** Fails with the address and its endpoints when one address is on two live endpoints. */
export async function expectNoAddressTwice(h: Harness, when: string): Promise<void> {
  const seen = new Map<string, string[]>();
  for (const ep of await liveEndpoints(h))
    for (const a of addressesOfDump(ep)) seen.set(a, [...(seen.get(a) ?? []), ep.Name as string]);
  const twice = [...seen].filter(([, eps]) => eps.length > 1);
  expect({ when, twice }).toEqual({ when, twice: [] });
}

export interface Migration {
  h: Harness;
  /** The hcn-cni configuration: the peer's, with `type` changed (and what the test adds, named there). */
  conf: Json;
  pods: PeerPod[];
  /** Endpoint ids of another configuration's running pods: never touched. */
  bystanders: string[];
  /** A fresh CNI_NETNS for a new pod (a namespace GUID, or "none" for a Docker-style sandbox). */
  netns: () => Promise<string>;
  /** The host-local network directory (the configuration's name) when IPAM is host-local. */
  ipamName?: string;
  /** Extra configuration for one pod's calls (delegated NIC: runtimeConfig.mac). */
  perPod?: (i: number, pod: { containerId: string }) => Json;
  /** Whether DEL gets the cached ADD result as prevResult (containerd sends it; libcni's second DEL does not). */
  prevResult?: boolean;
  /** How the runtime invokes hcn-cni: in process (default) or through the shim and the service. */
  run?: Runner;
}

/** One CNI call as the runtime makes it. */
export type Runner = (h: Harness, c: CniCall) => Promise<CniOutcome>;

export interface MigrationOutcome {
  dels: CniOutcome[];
  adds: CniOutcome[];
  gc: CniOutcome;
  newPods: PeerPod[];
}

/** The 5 pods' switch-over: DEL 3, ADD 5 new, GC with the 2 survivors and the 5 new valid; asserted as above. */
export async function migrate(m: Migration): Promise<MigrationOutcome> {
  const { h, conf, pods } = m;
  const run = m.run ?? cni;
  const deleted = pods.slice(0, 3);
  const survivors = pods.slice(3);
  const byId = async (ids: string[]) => {
    const all = await liveEndpoints(h);
    return ids.map((id) => all.find((e) => String(e.ID).toLowerCase() === id.toLowerCase()));
  };
  const keptBefore = await byId([...survivors.map((p) => p.endpointId), ...m.bystanders]);
  expect(keptBefore.every((e) => e !== undefined)).toBe(true);
  const heldBefore = m.ipamName ? heldIps(h, m.ipamName) : {};
  await expectNoAddressTwice(h, 'before the switch');

  const dels: CniOutcome[] = [];
  for (const [i, p] of deleted.entries()) {
    const prev = m.prevResult !== false && p.result ? { prevResult: p.result } : {};
    const out = await run(h, {
      verb: 'DEL',
      conf: { ...conf, ...prev, ...(m.perPod?.(i, p) ?? {}) },
      containerId: p.containerId,
      ifname: p.ifname,
      netns: p.netns,
    });
    dels.push(out);
    expect([p.endpointName, out.exitCode, out.stdout]).toEqual([p.endpointName, 0, '']);
    await expectNoAddressTwice(h, `after the DEL of ${p.endpointName}`);
  }

  const adds: CniOutcome[] = [];
  const newPods: PeerPod[] = [];
  for (let i = 0; i < 5; i++) {
    const pod = { containerId: sandboxId(), ifname: 'eth0', netns: await m.netns() };
    const out = await run(h, {
      verb: 'ADD',
      conf: { ...conf, ...(m.perPod?.(3 + i, pod) ?? {}) },
      ...pod,
    });
    adds.push(out);
    expect([i, out.exitCode, out.exitCode === 0 ? '' : out.stdout]).toEqual([i, 0, '']);
    newPods.push({ ...pod, endpointId: '', endpointName: '', ...(out.json ? { result: out.json } : {}) });
    await expectNoAddressTwice(h, `after the ADD of new pod ${i}`);
  }

  const valid = [...survivors, ...newPods].map((p) => ({ containerID: p.containerId, ifname: p.ifname }));
  const gc = await run(h, {
    verb: 'GC',
    conf: { ...conf, cniVersion: '1.1.0', 'cni.dev/valid-attachments': valid },
  });
  expect([gc.exitCode, gc.stdout]).toEqual([0, '']);
  await expectNoAddressTwice(h, 'after GC');

  const after = await liveEndpoints(h);
  // No endpoint of a deleted pod is left (by id, and by the peer's name for it, but for a bystander that shares it).
  const bystander = (e: Json) => m.bystanders.some((id) => id.toLowerCase() === String(e.ID).toLowerCase());
  const leftOfDeleted = after.filter(
    (e) =>
      !bystander(e) &&
      deleted.some((p) => String(e.ID).toLowerCase() === p.endpointId.toLowerCase() || e.Name === p.endpointName),
  );
  expect(leftOfDeleted.map((e) => e.Name)).toEqual([]);
  // The survivors and the bystanders are exactly as they were.
  expect(await byId([...survivors.map((p) => p.endpointId), ...m.bystanders])).toEqual(keptBefore);
  // Their IPAM allocations are still theirs.
  if (m.ipamName) {
    const held = heldIps(h, m.ipamName);
    for (const p of survivors) if (p.ip) expect([p.ip, held[p.ip]]).toEqual([p.ip, heldBefore[p.ip]]);
  }
  return { dels, adds, gc, newPods };
}
