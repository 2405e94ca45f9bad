/**
 * containerd's CNI library drives the Linux hcn-cni: the go-cni driver (test/gocni/driver) loads each
 * deploy/ conflist from a conf dir and runs Setup (portMappings and dns capability arguments, CRI's labels), Check and
 * Remove, for a GUID netns and `none`, against the standalone executable and against the shim + service. Results,
 * HNS objects and "nothing left" are asserted; GC and STATUS stay with the TypeScript libcni harness
 * (test/peers/libcni.test.ts), which go-cni 1.1.7 does not reach.
 */
import { randomUUID } from 'crypto';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { V2Api } from '../../src/hns/api';
import { CLI, useHarness, type Harness } from '../helpers/cni-harness';
import { makeBin, startServiceProcess, type RunningService } from '../service/support';
import {
  DEPLOY_CONFLISTS,
  DNS,
  PORTMAP,
  driverLines,
  newerThanLibcni,
  buildDriver,
  describeGo,
  extraArgs,
  forNode,
  netnsKinds,
  readConflist,
} from './gocni';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describeGo('go-cni drives the Linux hcn-cni on every deploy/ conflist', () => {
  let driver: string;
  let h: Harness;
  useHarness(undefined, (x) => (h = x));
  beforeAll(() => {
    driver = buildDriver('linux');
  }, 600_000);

  /** The node: a conf dir with the conflist, a bin dir holding hcn-cni (standalone wrapper or shim) and host-local. */
  async function node(file: string, mode: 'standalone' | 'service', cniVersion?: string) {
    const confDir = path.join(h.tmp, 'net.d');
    fs.mkdirSync(confDir, { recursive: true });
    const conf = forNode(readConflist(file), { state: h.stateDir, ipam: path.join(h.tmp, 'ipam') });
    if (cniVersion !== undefined) conf.cniVersion = cniVersion;
    fs.writeFileSync(path.join(confDir, file), JSON.stringify(conf));
    let binDir: string;
    let service: RunningService | undefined;
    if (mode === 'standalone') {
      binDir = path.join(h.tmp, 'bin');
      fs.mkdirSync(binDir, { recursive: true });
      fs.writeFileSync(path.join(binDir, 'hcn-cni'), `#!/bin/sh\nexec '${process.execPath}' '${CLI}' "$@"\n`, {
        mode: 0o755,
      });
    } else {
      binDir = makeBin(h).dir;
      service = await startServiceProcess(h);
    }
    if (/overlay/.test(file)) {
      // overlay.conflist joins an existing network (createNetwork false), as flannel's host-gw / vxlan setup makes.
      await new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 10 })).createNetwork({
        name: 'vxlan0',
        type: 'Overlay',
        flags: 0,
        subnets: [{ prefix: '10.244.3.0/24', gateway: '10.244.3.1' }],
        policies: [],
      });
    }
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HCN_SIM: h.sim.address,
      HCN_CNI_CLAIMS_DIR: path.join(h.tmp, 'claims'),
      ...(service ? { HCN_CNI_SERVICE: service.address } : {}),
    };
    const drive = (verb: string, id: string, netns: string) =>
      run(
        driver,
        [
          '-confdir',
          confDir,
          '-bindir',
          `${binDir},/usr/lib/cni`,
          '-id',
          id,
          '-netns',
          netns,
          '-verb',
          verb,
          '-portmap',
          JSON.stringify(PORTMAP),
          '-dns',
          JSON.stringify(DNS),
          ...extraArgs(file),
        ],
        env,
      );
    return { drive, service, conf };
  }

  const cases = DEPLOY_CONFLISTS.flatMap((file) =>
    (['standalone', 'service'] as const).flatMap((mode) =>
      netnsKinds(file).map((netns) => [file, mode, netns] as const),
    ),
  );

  test.each(cases)('%s, %s, netns %s: Setup, Check, Remove', async (file, mode, kind) => {
    const { drive, service } = await node(file, mode);
    try {
      const id = `pod-${randomUUID().slice(0, 8)}`;
      let netns = 'none';
      if (kind === 'guid') {
        netns = randomUUID();
        await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, netns);
      } else {
        await h.sim.control.addContainer(id); // Docker-style: the sandbox runs before CNI is called
      }
      const before = await h.sim.control.dump();

      const setup = await drive('setup', id, netns);
      expect({ code: setup.code, errors: driverLines(setup.stderr) }).toEqual({ code: 0, errors: [] });
      const result = JSON.parse(setup.stdout) as {
        interfaces: Record<string, { IPConfigs: Array<{ IP: string }>; Sandbox: string }>;
        raw: Array<{ cniVersion: string; interfaces: Array<{ sandbox?: string }>; ips: Array<{ address: string }> }>;
      };
      expect(result.raw).toHaveLength(1);
      const raw = result.raw[0]!;
      const families = new Set(raw.ips.map((i) => (i.address.includes(':') ? 6 : 4)));
      expect(families).toEqual(new Set(/dual-stack/.test(file) ? [4, 6] : [4]));
      expect(result.interfaces.eth0?.IPConfigs.length).toBe(raw.ips.length);
      if (kind === 'guid') expect(raw.interfaces.some((i) => i.sandbox?.toLowerCase() === netns)).toBe(true);

      // HNS: one new endpoint, with the port mapping and the DNS the runtime passed, attached where it belongs.
      const after = await h.sim.control.dump();
      const added = after.endpoints.filter((e) => !before.endpoints.some((b) => b.ID === e.ID));
      expect(added).toHaveLength(1);
      const ep = added[0]! as Record<string, any>;
      expect(ep.Policies).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            Type: 'PortMapping',
            Settings: expect.objectContaining({ InternalPort: 80, ExternalPort: 8080, Protocol: 6 }),
          }),
        ]),
      );
      expect(ep.Dns?.ServerList).toEqual(['10.96.0.10']);
      if (kind === 'guid') {
        const ns = after.namespaces.find((n) => n.ID.toLowerCase() === netns)! as Record<string, any>;
        expect(ns.Resources).toEqual([{ Type: 'Endpoint', Data: { Id: String(ep.ID).toUpperCase() } }]);
      } else {
        const cs = after.computeSystems.find((c) => c.ID === id)!;
        expect(cs.Endpoints.map((e) => e.toLowerCase())).toEqual([String(ep.ID).toLowerCase()]);
      }

      const check = await drive('check', id, netns);
      expect({ code: check.code, errors: driverLines(check.stderr), out: check.stdout }).toEqual({
        code: 0,
        errors: [],
        out: '',
      });

      const remove = await drive('remove', id, netns);
      expect({ code: remove.code, errors: driverLines(remove.stderr) }).toEqual({ code: 0, errors: [] });
      const end = await h.sim.control.dump();
      expect(end.endpoints.filter((e) => !before.endpoints.some((b) => b.ID === e.ID))).toEqual([]);
      for (const n of end.namespaces) expect((n as Record<string, any>).Resources ?? []).toEqual([]);
      for (const c of end.computeSystems) expect(c.Endpoints).toEqual([]);
      const attachments = path.join(h.stateDir, 'attachments');
      expect(fs.existsSync(attachments) ? fs.readdirSync(attachments) : []).toEqual([]);
      if (service) expect((await service.status()).served).toBeGreaterThanOrEqual(3);
    } finally {
      await service?.stop();
    }
  });

  // The deploy/ conflists at CNI 1.1.0 (what `hcn-cni install` writes only for a version 3 config, which only
  // containerd 2.x reads): containerd 1.7's libcni 1.1.2 refuses the plugin's 1.1.0 result after the ADD has
  // succeeded — why install writes 1.0.0 otherwise; CRI then tears the sandbox's network down with Remove (containerd
  // pkg/cri/server sandbox_run.go: a failed setupPodNetwork is followed by teardownPodNetwork), and nothing may be left.
  test.each(DEPLOY_CONFLISTS)(
    '%s at CNI 1.1.0: go-cni 1.1.7 refuses the result; the Remove CRI then sends leaves nothing',
    async (file) => {
      expect(newerThanLibcni('1.1.0')).toBe(true);
      const { drive } = await node(file, 'standalone', '1.1.0');
      const id = `pod-${randomUUID().slice(0, 8)}`;
      const netns = randomUUID();
      await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, netns);
      const before = await h.sim.control.dump();
      const setup = await drive('setup', id, netns);
      expect(setup.code).toBe(1);
      expect(driverLines(setup.stderr)).toEqual([expect.stringContaining('unsupported CNI result version "1.1.0"')]);
      const remove = await drive('remove', id, netns);
      expect({ code: remove.code, errors: driverLines(remove.stderr) }).toEqual({ code: 0, errors: [] });
      const end = await h.sim.control.dump();
      expect(end.endpoints.filter((e) => !before.endpoints.some((b) => b.ID === e.ID))).toEqual([]);
      const attachments = path.join(h.stateDir, 'attachments');
      expect(fs.existsSync(attachments) ? fs.readdirSync(attachments) : []).toEqual([]);
    },
  );
});
