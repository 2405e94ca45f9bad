/**
 * Shared by the peer-corpus and libcni suites: the corpus of upstream configurations (test/fixtures/peers, with
 * sources.json naming repository, commit and path of each), a libcni runtime that runs hcn-cni in process and every
 * other plugin (host-local, static, the stand-in IPAM) as an executable, and readers of what HNS holds.
 */
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import type { LogLevel } from '../../src/cni/types';
import { runCni } from '../../src/run';
import { RecordingLogger, type LogRecord } from '../cni/helpers';
import { CNI_BIN, type Harness } from '../helpers/cni-harness';
import { Libcni, execOnPath, loadConfList, type NetworkConfigList, type PluginExec } from '../helpers/libcni';
import { script } from '../plugin/support';

export const PEERS = path.join(__dirname, '..', 'fixtures', 'peers');

export interface Source {
  file: string;
  repository: string;
  commit: string;
  path: string;
}

export const SOURCES: Source[] = JSON.parse(fs.readFileSync(path.join(PEERS, 'sources.json'), 'utf8')) as Source[];

/** The upstream file as libcni loads it, with the one change a migration makes: the peer's `type` becomes hcn-cni. */
export function peerList(file: string, extra: Record<string, unknown> = {}): NetworkConfigList {
  const list = loadConfList(path.join(PEERS, file));
  list.plugins = list.plugins.map((p) => ({ ...p, type: 'hcn-cni', ...extra }));
  return list;
}

export interface Runtime {
  cni: Libcni;
  logs: LogRecord[];
  bin: string;
}

/**
 * A node's CNI set-up: CNI_PATH = [the test's bin dir (stand-in IPAMs), /usr/lib/cni (host-local, static)], hcn-cni run
 * through runCni with the harness's state directory (the configurations have none) and its simulator.
 */
export function runtime(h: Harness): Runtime {
  const bin = path.join(h.tmp, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  const logs: LogRecord[] = [];
  const dirs = [bin, CNI_BIN];
  const hcnCni: PluginExec = async (_type, env, stdin) =>
    runCni({
      env: { ...env, HCN_SIM: h.sim.address },
      stdin,
      deps: h.deps,
      defaults: { stateDir: h.stateDir },
      createLogger: (_o: { level: LogLevel; file?: string }) => new RecordingLogger(logs),
    });
  const cni = new Libcni({
    path: dirs,
    cacheDir: path.join(h.tmp, 'cni-cache'),
    exec: execOnPath(dirs),
    inProcess: { 'hcn-cni': hcnCni },
  });
  return { cni, logs, bin };
}

/**
 * A stand-in for an IPAM that needs its vendor's daemon (Azure's azure-vnet-ipam and azure-cns): host-local over a
 * fixed range, with the rest of the request untouched. It exists only so the rest of the configuration can run.
 */
export function standInIpam(h: Harness, bin: string, name: string, subnet = '10.240.0.0/16'): void {
  const base = subnet.split('/')[0]!.split('.').slice(0, 3).join('.');
  const range = { subnet, rangeStart: `${base}.10`, rangeEnd: `${base}.60`, gateway: `${base}.1` };
  const js = path.join(bin, `${name}.js`);
  fs.writeFileSync(
    js,
    `const { spawnSync } = require('child_process');
const conf = JSON.parse(require('fs').readFileSync(0, 'utf8'));
conf.ipam = { type: 'host-local', dataDir: ${JSON.stringify(path.join(h.tmp, 'ipam'))}, ranges: [[${JSON.stringify(range)}]] };
const r = spawnSync(${JSON.stringify(path.join(CNI_BIN, 'host-local'))}, [], { input: JSON.stringify(conf), env: process.env });
process.stdout.write(r.stdout);
process.exit(r.status === null ? 1 : r.status);
`,
  );
  script(bin, name, `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(js)}`);
}

/** A network as the operator (or the peer) made it before the first pod, through HNS v1 (ManagementIP included). */
export async function makeNetwork(
  h: Harness,
  spec: { name: string; type: string; subnet: string; gateway: string; adapter?: string; managementIp?: string },
): Promise<string> {
  const body: Record<string, unknown> = {
    Name: spec.name,
    Type: spec.type,
    Subnets: [{ AddressPrefix: spec.subnet, GatewayAddress: spec.gateway }],
  };
  if (spec.adapter) body.NetworkAdapterName = spec.adapter;
  if (spec.managementIp) body.ManagementIP = spec.managementIp;
  const n = await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).hnsCall<{ ID: string }>('POST', '/networks/', body);
  return n.ID;
}

/** win-bridge's network: the L2Bridge `cbr0` on `Ethernet` that its samples (and our libcni suite) attach to. */
export function makeCbr0(h: Harness): Promise<string> {
  return makeNetwork(h, {
    name: 'cbr0',
    type: 'L2Bridge',
    subnet: '10.244.1.0/24',
    gateway: '10.244.1.1',
    adapter: 'Ethernet',
  });
}

/** A fresh HCN namespace: what containerd creates and passes as CNI_NETNS on Windows. */
export async function namespace(h: Harness): Promise<string> {
  const id = randomUUID();
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, id);
  return id;
}

/** The endpoints HNS holds, in HCN's (v2) view. */
export async function endpoints(h: Harness): Promise<Array<Record<string, unknown>>> {
  return (await h.sim.control.dump()).endpoints;
}

export async function networks(h: Harness): Promise<Array<Record<string, unknown>>> {
  return (await h.sim.control.dump()).networks;
}

type Policy = { Type: string; Settings: Record<string, unknown> };
/** The settings of an endpoint's (or network's) policies of one type, as HCN shows them. */
export const ofType = (o: Record<string, unknown>, type: string) =>
  ((o.Policies ?? []) as Policy[]).filter((p) => p.Type === type).map((p) => p.Settings);
