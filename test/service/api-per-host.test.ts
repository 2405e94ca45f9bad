/**
 * The host chooses the HNS API, in every mode: on a host with HCN (HNS 9.2 or later) every write of a pod's network,
 * endpoint and namespace attachment goes through HCN — the standalone executable and the shim + service alike, with a
 * Docker-style netns ("none", then "container:<id>", hot-attached through HCS) or an HCN namespace, with a delegated
 * IPAM (host-local) or HNS-assigned addresses. On a host without HCN (HNS 9.1) the same pods use HNS v1. The
 * simulator's call log is the proof: it names every call and which API it came through. One simulator and one service
 * per HNS version, each pod its own names.
 */
import * as fs from 'fs';
import { CNI_BIN, cni, startHarness, startSandboxContainer, type CniCall, type Harness } from '../helpers/cni-harness';
import { endpointName } from '../../src/orphans/ownership';
import { hostLocal, lastSeq, newNamespace } from '../plugin/support';
import { makeBin, startServiceProcess, viaShim, type Bin, type RunningService } from './support';

type Mode = 'standalone' | 'service';
type Netns = 'docker' | 'hcn-namespace';
type Addressing = 'delegated' | 'hns-assigned';

const HOSTS = [
  { name: 'HNS 15.4 with HCN', version: { major: 15, minor: 4 }, v2: true },
  { name: 'HNS 9.2 with HCN', version: { major: 9, minor: 2 }, v2: true },
  { name: 'HNS 9.1 without HCN', version: { major: 9, minor: 1 }, v2: false },
] as const;

const COMBOS: Array<[Mode, Netns, Addressing]> = [];
for (const mode of ['standalone', 'service'] as const)
  for (const netns of ['docker', 'hcn-namespace'] as const)
    for (const addressing of ['delegated', 'hns-assigned'] as const) COMBOS.push([mode, netns, addressing]);

const V1_WRITE = /^HNSCall (POST|PUT|DELETE) /;
const HCN_WRITE = /^Hcn(Create|Modify|Delete)/;
const DNS = { nameservers: ['10.0.0.10'], domain: 'corp.example', search: ['svc.cluster.local'] };

describe.each(HOSTS)('on $name', (host) => {
  let h: Harness;
  let bin: Bin;
  let service: RunningService;
  beforeAll(async () => {
    h = await startHarness({ version: host.version, v2: host.v2 });
    bin = makeBin(h);
    service = await startServiceProcess(h, undefined, ['--hns-probe-seconds', '0']);
  });
  afterAll(async () => {
    await service?.stop();
    await h?.stop();
  });

  /** An HCN namespace where the host has HCN, else one made through HNS v1 (POST /namespaces). */
  async function namespace(): Promise<string> {
    if (host.v2) return newNamespace(h);
    const ns = await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).hnsCall<{ ID: string }>('POST', '/namespaces/', {});
    return ns.ID;
  }

  function conf(addressing: Addressing): Record<string, unknown> {
    const subnet = addressing === 'delegated' ? '10.244.1.0/24' : '10.244.2.0/24';
    return {
      cniVersion: '1.0.0',
      name: `net-${addressing}`,
      type: 'hcn-cni',
      createNetwork: true,
      subnet,
      dns: DNS,
      ...(addressing === 'delegated' ? { ipam: hostLocal(h, subnet) } : {}),
    };
  }

  async function run(mode: Mode, c: CniCall): Promise<{ exitCode: number; stdout: string }> {
    if (mode === 'standalone') return cni(h, { path: CNI_BIN, ...c });
    await startSandboxContainer(h, c);
    return viaShim(h, bin, service.address, c);
  }

  it.each(COMBOS)('%s, %s netns, %s addresses', async (mode, netns, addressing) => {
    const id = `${mode}-${netns}-${addressing}`;
    const c = conf(addressing);
    const ns = netns === 'hcn-namespace' ? await namespace() : undefined;
    const seq = await lastSeq(h);
    const pods: CniCall[] =
      netns === 'docker'
        ? [
            { verb: 'ADD', conf: c, containerId: `${id}-sandbox`, netns: 'none' },
            { verb: 'ADD', conf: c, containerId: `${id}-app`, netns: `container:${id}-sandbox` },
          ]
        : [{ verb: 'ADD', conf: c, containerId: id, netns: ns }];
    for (const pod of pods) expect({ pod: pod.containerId, ...(await outcome(mode, pod)) }).toMatchObject({ code: 0 });
    for (const pod of pods)
      expect({ pod: pod.containerId, ...(await outcome(mode, { ...pod, verb: 'CHECK' })) }).toMatchObject({ code: 0 });
    // One endpoint body whatever the API: the DNS domain is the domain, not one more search suffix.
    const dump = await h.sim.control.dump();
    const name = endpointName({ containerId: pods[0]!.containerId!, ifname: 'eth0' });
    const ep = dump.endpoints.find((e) => e.Name === name);
    expect(ep?.Dns).toEqual({ Domain: DNS.domain, Search: DNS.search, ServerList: DNS.nameservers });
    for (const pod of [...pods].reverse())
      expect({ pod: pod.containerId, ...(await outcome(mode, { ...pod, verb: 'DEL' })) }).toMatchObject({ code: 0 });

    const ops = (await h.sim.control.calls()).filter((call) => call.seq > seq).map((call) => call.op);
    if (host.v2) {
      expect(ops.filter((op) => V1_WRITE.test(op))).toEqual([]);
      expect(ops).toContain('HcnCreateEndpoint');
      expect(ops).toContain('HcnDeleteEndpoint');
    } else {
      expect(ops.filter((op) => HCN_WRITE.test(op))).toEqual([]);
      expect(ops).toContain('HNSCall POST /endpoints');
      expect(ops).toContain('HNSCall DELETE /endpoints/{id}');
    }
    expect((await h.sim.control.dump()).endpoints.filter((e) => e.Name === name)).toEqual([]);
  });

  async function outcome(mode: Mode, c: CniCall): Promise<{ code: number; stdout: string }> {
    const r = await run(mode, c);
    return { code: r.exitCode, stdout: r.stdout };
  }

  it('leaves no address held once every pod is gone', () => {
    const dir = `${h.tmp}/ipam`;
    const held = fs.existsSync(dir)
      ? fs.readdirSync(dir, { recursive: true }).filter((f) => /^\d+\.\d+\.\d+\.\d+$/.test(String(f).split('/').pop()!))
      : [];
    expect(held).toEqual([]);
  });
});
