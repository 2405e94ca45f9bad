/**
 * Seed 001, replayed: the Docker (dockershim) sequence from the Azure CNI issue — the sandbox ADD with netns "none",
 * the same ADD again, then the workload container with "container:<sandbox>" — on a host with HCN (v2). Azure CNI
 * picks HNS v1 here because "none" is not a GUID. We pick the API from the host, and the simulator's call log proves
 * the endpoint was created through HCN (HcnCreateEndpoint) and hot-added to the running sandbox through HCS, as
 * containernetworking/plugins pkg/hns/endpoint_windows.go does with hcsshim's HotAttachEndpoint (hnsendpoint.go):
 * v1 GET /endpoints/{id} (IsAttached), HcsOpenComputeSystem → HcsModifyComputeSystem → HcsCloseComputeSystem.
 * Every test runs the executable (dist/cli/hcn-cni.js) as the runtime would.
 */
import * as fs from 'fs';
import * as path from 'path';
import { cniProcess as cni, useHarness, type Harness } from '../helpers/cni-harness';

const SANDBOX = '6ad647ea8218c1a666b10706209708fd2b9ac846fd7e7f4d1106a379da65bad8';
const WORKLOAD = 'f533175419b952dc0ced8e891e5dd6766c0e10076144d8c3b0e3c38b9172cc9f';
const ARGS = (infra: string) =>
  `IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=nginx;K8S_POD_INFRA_CONTAINER_ID=${infra}`;

let h: Harness;
useHarness(undefined, (x) => (h = x));

/** The seed's stdin, verbatim but for the plugin type and an IPAM that exists here (Debian's host-local). */
function seedConf(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const conf = JSON.parse(
    fs.readFileSync(path.join(__dirname, '../cni/fixtures/azure-seed-001.json'), 'utf8'),
  ) as Record<string, unknown>;
  return {
    ...conf,
    type: 'hcn-cni',
    createNetwork: true,
    subnet: '10.240.0.0/12',
    ipam: {
      type: 'host-local',
      dataDir: path.join(h.tmp, 'ipam'),
      ranges: [[{ subnet: '10.240.0.0/12', rangeStart: '10.240.0.50', gateway: '10.240.0.1' }]],
    },
    ...extra,
  };
}

describe('seed 001: Docker-style netns on an HCN host', () => {
  it('creates the endpoint through HCN even though the netns is "none", and the workload shares it', async () => {
    const first = await cni(h, {
      verb: 'ADD',
      conf: seedConf(),
      containerId: SANDBOX,
      netns: 'none',
      args: ARGS(SANDBOX),
    });
    expect(first.exitCode).toBe(0);
    const result = first.json as {
      cniVersion: string;
      ips: Array<{ version: string; address: string }>;
      dns: Record<string, unknown>;
    };
    expect(result.cniVersion).toBe('0.3.0');
    expect(result.ips).toEqual([{ version: '4', address: '10.240.0.50/12', gateway: '10.240.0.1', interface: 0 }]);
    expect(result.dns).toEqual({
      nameservers: ['10.0.0.10'],
      search: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
      options: ['ndots:5'],
    });

    const again = await cni(h, {
      verb: 'ADD',
      conf: seedConf(),
      containerId: SANDBOX,
      netns: 'none',
      args: ARGS(SANDBOX),
    });
    expect(again.exitCode).toBe(0);
    expect(again.json).toEqual(first.json);

    const workload = await cni(h, {
      verb: 'ADD',
      conf: seedConf({ runtimeConfig: { portMappings: [] } }),
      containerId: WORKLOAD,
      netns: `container:${SANDBOX}`,
      args: ARGS(WORKLOAD),
    });
    expect(workload.exitCode).toBe(0);
    expect(workload.json).toEqual(first.json);

    const dump = await h.sim.control.dump();
    expect(dump.endpoints).toHaveLength(1);
    const ep = dump.endpoints[0]!;
    expect(ep.CreatedBy).toBe('v2');
    const calls = await h.sim.control.calls();
    const ops = calls.map((c) => c.op);
    expect(ops.filter((o) => o === 'HcnCreateEndpoint')).toHaveLength(1);
    expect(ops.filter((o) => o === 'HNSCall POST /endpoints')).toHaveLength(0);
    // Hot attach through HCS, once: each ADD asked v1 first (IsAttached), the repeated ADD found it attached. The
    // v1 attach (which adds no vNIC to a running container) is never used.
    expect(ops.filter((o) => o === 'HNSCall POST /endpoints/{id}/attach')).toHaveLength(0);
    const hcs = calls.filter((c) => c.api === 'hcs');
    expect(hcs.map((c) => [c.op, c.id, c.hr])).toEqual([
      ['HcsOpenComputeSystem', SANDBOX, 0],
      ['HcsModifyComputeSystem', SANDBOX, 0],
    ]);
    const isAttached = calls.filter(
      (c) => c.op === 'HNSCall GET /endpoints/{id}' && c.id?.toLowerCase() === String(ep.ID).toLowerCase(),
    );
    expect(isAttached.length).toBeGreaterThanOrEqual(2);
    expect(isAttached[0]!.seq).toBeLessThan(hcs[0]!.seq);
    // HcsCloseComputeSystem never reaches the service (the client library closes its handle); the addon counted it.
    const v1 = await h.deps.hns
      .hcn({ hnsTimeoutSeconds: 10 })
      .hnsCall<{ SharedContainers: string[]; Policies: Array<{ Type: string }> }>('GET', `/endpoints/${String(ep.ID)}`);
    expect(v1.SharedContainers.map((c) => c.toLowerCase())).toEqual([SANDBOX]);
    expect(dump.computeSystems).toEqual([{ ID: SANDBOX, Endpoints: [ep.ID] }]);
    // The seed's AdditionalArgs (v1 flat) and portMappings arrived as HCN policies.
    expect((ep.Policies as Array<{ Type: string }>).map((p) => p.Type).sort()).toEqual([
      'OutBoundNAT',
      'PortMapping',
      'SDNRoute',
    ]);
    // host-local allocated exactly one address for the whole pod.
    const ipamFiles = fs.readdirSync(path.join(h.tmp, 'ipam', 'azure')).filter((f) => /^\d+\.\d+\.\d+\.\d+$/.test(f));
    expect(ipamFiles).toEqual(['10.240.0.50']);
  });

  it('the workload DEL leaves the sandbox endpoint; the sandbox DEL hot-detaches, removes it and releases the address', async () => {
    await cni(h, { verb: 'ADD', conf: seedConf(), containerId: SANDBOX, netns: 'none', args: ARGS(SANDBOX) });
    await cni(h, {
      verb: 'ADD',
      conf: seedConf(),
      containerId: WORKLOAD,
      netns: `container:${SANDBOX}`,
      args: ARGS(WORKLOAD),
    });
    expect(
      (await cni(h, { verb: 'DEL', conf: seedConf(), containerId: WORKLOAD, netns: `container:${SANDBOX}` })).exitCode,
    ).toBe(0);
    expect((await h.sim.control.stats()).counts.endpoints).toBe(1);
    const before = (await h.sim.control.calls()).length;
    expect((await cni(h, { verb: 'DEL', conf: seedConf(), containerId: SANDBOX, netns: 'none' })).exitCode).toBe(0);
    const del = (await h.sim.control.calls()).slice(before).map((c) => c.op);
    expect(del.filter((o) => o.startsWith('Hcs'))).toEqual(['HcsOpenComputeSystem', 'HcsModifyComputeSystem']);
    expect(del.indexOf('HcsModifyComputeSystem')).toBeLessThan(del.indexOf('HcnDeleteEndpoint'));
    expect((await h.sim.control.dump()).computeSystems).toEqual([{ ID: SANDBOX, Endpoints: [] }]);
    expect((await h.sim.control.stats()).counts.endpoints).toBe(0);
    expect(fs.readdirSync(path.join(h.tmp, 'ipam', 'azure')).filter((f) => /^\d+\./.test(f))).toEqual([]);
  });

  it('a sandbox container that is gone before its ADD attaches: CNI error 3, and nothing is left behind', async () => {
    const r = await cni(h, {
      verb: 'ADD',
      conf: seedConf(),
      containerId: SANDBOX,
      netns: 'none',
      args: ARGS(SANDBOX),
      startContainer: false,
    });
    expect(r.exitCode).not.toBe(0);
    expect(r.json).toMatchObject({
      code: 3,
      msg: expect.stringContaining(`container ${SANDBOX} does not exist in HCS`),
    });
    const calls = await h.sim.control.calls();
    expect(calls.filter((c) => c.api === 'hcs').map((c) => [c.op, c.hr >>> 0])).toEqual([
      ['HcsOpenComputeSystem', 0xc037010e],
    ]);
    // The endpoint it created is deleted, the address released, no record, intent or tombstone stays.
    const dump = await h.sim.control.dump();
    expect(dump.endpoints).toEqual([]);
    expect(fs.readdirSync(path.join(h.tmp, 'ipam', 'azure')).filter((f) => /^\d+\./.test(f))).toEqual([]);
    for (const dir of ['attachments', 'intents']) {
      const d = path.join(h.stateDir, dir);
      expect(fs.existsSync(d) ? fs.readdirSync(d) : []).toEqual([]);
    }
  });

  it('DEL of a sandbox whose container is already gone exits 0 and removes the endpoint', async () => {
    expect(
      (await cni(h, { verb: 'ADD', conf: seedConf(), containerId: SANDBOX, netns: 'none', args: ARGS(SANDBOX) }))
        .exitCode,
    ).toBe(0);
    await h.sim.control.removeContainer(SANDBOX);
    const before = (await h.sim.control.calls()).length;
    const del = await cni(h, { verb: 'DEL', conf: seedConf(), containerId: SANDBOX, netns: 'none' });
    expect({ exitCode: del.exitCode, stdout: del.stdout }).toEqual({ exitCode: 0, stdout: '' });
    const calls = (await h.sim.control.calls()).slice(before);
    expect(calls.filter((c) => c.api === 'hcs').map((c) => [c.op, c.hr >>> 0])).toEqual([
      ['HcsOpenComputeSystem', 0xc037010e],
    ]);
    expect((await h.sim.control.stats()).counts.endpoints).toBe(0);
  });

  /** The seed's port mapping without its host IP, which HNS v1's NAT policy cannot carry. */
  const v1Ports = { runtimeConfig: { portMappings: [{ hostPort: 8123, containerPort: 80, protocol: 'tcp' }] } };

  it("on HNS v1 the seed's hostIP port mapping is error 2 naming it (v1 NAT has no host IP), before anything is created", async () => {
    const r = await cni(h, {
      verb: 'ADD',
      conf: seedConf({ apiVersion: 1 }),
      containerId: SANDBOX,
      netns: 'none',
      args: ARGS(SANDBOX),
    });
    expect(r.json).toMatchObject({
      code: 2,
      msg: expect.stringContaining('runtimeConfig.portMappings hostIP 127.0.0.1'),
    });
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
  });

  it('negative control: forcing apiVersion 1 does create through v1 (the assertion above can tell them apart)', async () => {
    const r = await cni(h, {
      verb: 'ADD',
      conf: seedConf({ apiVersion: 1, ...v1Ports }),
      containerId: SANDBOX,
      netns: 'none',
      args: ARGS(SANDBOX),
    });
    expect(r.exitCode).toBe(0);
    const dump = await h.sim.control.dump();
    expect(dump.endpoints.map((e) => e.CreatedBy)).toEqual(['v1']);
    // A v1 endpoint is hot-attached the same way (one object store).
    expect(dump.computeSystems).toEqual([{ ID: SANDBOX, Endpoints: [dump.endpoints[0]!.ID] }]);
  });

  it('on a host whose HNS is older than 9.2, auto picks v1 whatever the netns', async () => {
    await h.sim.control.setVersion(7, 2, { v2: false });
    try {
      const r = await cni(h, {
        verb: 'ADD',
        conf: seedConf(v1Ports),
        containerId: SANDBOX,
        netns: 'none',
        args: ARGS(SANDBOX),
      });
      expect(r.exitCode).toBe(0);
      expect((await h.sim.control.dump()).endpoints.map((e) => e.CreatedBy)).toEqual(['v1']);
    } finally {
      await h.sim.control.setVersion(15, 4, { v2: true });
    }
  });
});
