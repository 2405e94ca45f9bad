/**
 * deploy/: every example conflist passes the plugin's own validation (parseNetConf, as on Windows) with no warnings,
 * answers VERSION and STATUS through the dispatcher, and works: ADD then DEL against the simulator. The DaemonSet has
 * what a Windows HostProcess installer needs, and its ConfigMap's conflist is valid too.
 */
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { parseNetConf } from '../../src/cni/config';
import type { NetConf } from '../../src/cni/types';
import { parseMetricsAddress } from '../../src/cli/metrics-address';
import { hcnPluginConf } from '../../src/cli/operator/conf';
import { silentLogger } from '../../src/log/logger';
import { runCni } from '../../src/run';
import { ROOT, cni, startHarness, type Harness } from '../helpers/cni-harness';
import { nicNetworkName } from '../../src/orphans/ownership';

const DEPLOY = path.join(ROOT, 'deploy');
const CONFLISTS = ['bridge.conflist', 'overlay.conflist', 'delegated-nic.conflist'];
const RUNTIME_CAPABILITIES = ['portMappings', 'dns', 'mac']; // what parseRuntimeConfig honours

function readConflist(name: string): Record<string, any> {
  return JSON.parse(fs.readFileSync(path.join(DEPLOY, name), 'utf8'));
}

/** The hcn-cni entry as libcni hands it to the plugin (with the list's name and cniVersion). */
function pluginConf(doc: unknown): Record<string, unknown> {
  const raw = hcnPluginConf(doc);
  if (!raw) throw new Error('no hcn-cni plugin in the conflist');
  return raw;
}

function parseWindows(raw: Record<string, unknown>): NetConf {
  return parseNetConf(raw, {
    platform: 'win32',
    defaults: { stateDir: 'C:\\ProgramData\\hcn-cni\\state' },
    verb: 'ADD',
  });
}

describe('example conflists', () => {
  it.each(CONFLISTS)('%s: cniVersion 1.1.0, one hcn-cni plugin, valid for the plugin with no warnings', (name) => {
    const doc = readConflist(name);
    expect(doc.cniVersion).toBe('1.1.0');
    expect(doc.plugins.filter((p: { type: string }) => p.type === 'hcn-cni')).toHaveLength(1);
    const conf = parseWindows(pluginConf(doc));
    expect(conf).toMatchObject({ cniVersion: '1.1.0', type: 'hcn-cni', name: doc.name });
    expect(conf.warnings).toEqual([]);
    const caps = Object.keys(pluginConf(doc).capabilities as object);
    expect(caps.every((c) => RUNTIME_CAPABILITIES.includes(c))).toBe(true);
  });

  it('bridge: an L2Bridge network "cbr0" created on demand with a subnet, HNS assigning addresses', () => {
    const conf = parseWindows(pluginConf(readConflist('bridge.conflist')));
    expect(conf).toMatchObject({
      mode: 'bridge',
      networkName: 'cbr0',
      networkType: 'L2Bridge',
      createNetwork: true,
      subnets: [{ family: 4, prefix: '10.244.1.0/24', gateway: '10.244.1.1' }],
      logFile: 'C:\\ProgramData\\hcn-cni\\hcn-cni.log',
    });
    expect(conf.ipam).toBeUndefined();
  });

  it('overlay: an existing Overlay network, outbound NAT exceptions and SDNRoute endpoint policies', () => {
    const conf = parseWindows(pluginConf(readConflist('overlay.conflist')));
    expect(conf).toMatchObject({ mode: 'bridge', networkType: 'Overlay', createNetwork: false, apiVersion: 2 });
    expect(conf.outboundNatExceptions).toEqual(['10.244.0.0/16', '10.96.0.0/12', '192.168.0.0/16']);
    expect(conf.endpointPolicies.map((p) => p.value.Type)).toEqual(['SDNRoute', 'SDNRoute']);
    expect(conf.endpointPolicies[0]!.value).toEqual({
      Type: 'SDNRoute',
      Settings: { DestinationPrefix: '10.96.0.0/12', NeedEncap: true },
    });
  });

  it('delegated NIC: mode delegatedNic with the mac, portMappings and dns capabilities', () => {
    const raw = pluginConf(readConflist('delegated-nic.conflist'));
    expect(raw.capabilities).toEqual({ mac: true, portMappings: true, dns: true });
    expect(parseWindows(raw)).toMatchObject({
      mode: 'delegatedNic',
      subnets: [{ family: 4, prefix: '172.30.8.0/24', gateway: '172.30.8.1' }],
    });
  });
});

describe('example conflists against the simulator', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });
  beforeEach(async () => {
    await h.reset();
  });

  /** The plugin entry for this machine: the Windows log file path would not be absolute here. */
  function local(name: string): Record<string, unknown> {
    const raw = pluginConf(readConflist(name));
    delete raw.logFile;
    return { ...raw, stateDir: h.stateDir, logLevel: 'silent' };
  }

  async function namespace(): Promise<string> {
    const id = randomUUID();
    await h.runtime.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, id);
    return id;
  }

  it.each(CONFLISTS)('%s answers VERSION and STATUS through the dispatcher', async (name) => {
    const conf = local(name);
    const version = await runCni({
      env: { CNI_COMMAND: 'VERSION' },
      stdin: JSON.stringify(conf),
      runtime: h.runtime,
      createLogger: () => silentLogger,
    });
    expect(version.exitCode).toBe(0);
    expect(JSON.parse(version.stdout)).toEqual({
      cniVersion: '1.1.0',
      supportedVersions: expect.arrayContaining(['1.1.0']),
    });
    const status = await runCni({
      env: { CNI_COMMAND: 'STATUS', CNI_PATH: '/opt/cni/bin', HCN_SIM: h.sim.address },
      stdin: JSON.stringify(conf),
      runtime: h.runtime,
      createLogger: () => silentLogger,
    });
    expect(status).toEqual({ exitCode: 0, stdout: '' });
  });

  it('bridge.conflist: ADD creates cbr0 and an endpoint from its subnet; DEL removes the endpoint', async () => {
    const conf = local('bridge.conflist');
    const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-a', netns: await namespace() });
    expect(add.exitCode).toBe(0);
    expect((add.json as { ips: Array<{ address: string; gateway: string }> }).ips).toEqual([
      { address: expect.stringMatching(/^10\.244\.1\.\d+\/24$/), gateway: '10.244.1.1', interface: 0 },
    ]);
    const dump = await h.sim.control.dump();
    expect(dump.networks.map((n) => [n.Name, n.Type])).toEqual([['cbr0', 'L2Bridge']]);
    const del = await cni(h, { verb: 'DEL', conf, containerId: 'pod-a' });
    expect(del.exitCode).toBe(0);
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
  });

  it('overlay.conflist: ADD joins the existing vxlan0 with the SDNRoute and OutBoundNAT policies', async () => {
    await h.runtime.hcn({ hnsTimeoutSeconds: 10 }).createNetwork({
      Name: 'vxlan0',
      Type: 'Overlay',
      Ipams: [
        {
          Type: 'Static',
          Subnets: [
            { IpAddressPrefix: '10.244.2.0/24', Routes: [{ NextHop: '10.244.2.1', DestinationPrefix: '0.0.0.0/0' }] },
          ],
        },
      ],
    });
    const conf = local('overlay.conflist');
    const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-o', netns: await namespace() });
    expect(add.exitCode).toBe(0);
    expect((add.json as { ips: Array<{ address: string }> }).ips[0]!.address).toMatch(/^10\.244\.2\.\d+\/24$/);
    const ep = (await h.sim.control.dump()).endpoints[0]!;
    const policies = ep.Policies as Array<{ Type: string; Settings: Record<string, unknown> }>;
    expect(policies.filter((p) => p.Type === 'SDNRoute').map((p) => p.Settings.DestinationPrefix)).toEqual([
      '10.96.0.0/12',
      '192.168.0.10/32',
    ]);
    expect(policies.find((p) => p.Type === 'OutBoundNAT')?.Settings.Exceptions).toEqual(
      expect.arrayContaining(['10.244.0.0/16', '10.96.0.0/12', '192.168.0.0/16']),
    );
    expect((await cni(h, { verb: 'DEL', conf, containerId: 'pod-o' })).exitCode).toBe(0);
  });

  it('dual-stack.conflist: valid with no warnings; ADD gives the pod an address of each family from host-local, CHECK and DEL', async () => {
    const doc = readConflist('dual-stack.conflist');
    const parsed = parseWindows(pluginConf(doc));
    expect(parsed.warnings).toEqual([]);
    expect(parsed.subnets?.map((s) => s.family)).toEqual([4, 6]);
    const raw = local('dual-stack.conflist');
    const conf = {
      ...raw,
      cniVersion: doc.cniVersion,
      name: doc.name,
      ipam: { ...(raw.ipam as object), dataDir: path.join(h.tmp, 'ipam') },
    };
    const ns = await namespace();
    const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-d', netns: ns });
    expect(add.exitCode).toBe(0);
    expect((add.json as { ips: Array<{ address: string }> }).ips.map((ip) => ip.address)).toEqual([
      '10.244.1.10/24',
      'fd00:10:244:1::10/64',
    ]);
    expect(
      (await cni(h, { verb: 'CHECK', conf: { ...conf, prevResult: add.json }, containerId: 'pod-d', netns: ns }))
        .exitCode,
    ).toBe(0);
    expect((await cni(h, { verb: 'DEL', conf, containerId: 'pod-d', netns: ns })).exitCode).toBe(0);
    expect((await h.sim.control.dump()).endpoints).toEqual([]);
  });

  it('delegated-nic.conflist: ADD binds the NIC with the runtime MAC in its own network; DEL removes it', async () => {
    const conf = {
      ...local('delegated-nic.conflist'),
      runtimeConfig: { mac: '00:15:5d:aa:00:02', portMappings: [], dns: {} },
    };
    const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-n', netns: await namespace() });
    expect(add.exitCode).toBe(0);
    expect((add.json as { ips: Array<{ address: string; gateway: string }> }).ips).toEqual([
      { address: expect.stringMatching(/^172\.30\.8\.\d+\/24$/), gateway: '172.30.8.1', interface: 0 },
    ]);
    const dump = await h.sim.control.dump();
    expect(dump.boundAdapters['Ethernet 2']).toBeDefined();
    expect(dump.networks.map((n) => n.Name)).toEqual([nicNetworkName({ containerId: 'pod-n', ifname: 'eth0' })]);
    expect((await cni(h, { verb: 'DEL', conf, containerId: 'pod-n' })).exitCode).toBe(0);
    expect((await h.sim.control.dump()).networks).toEqual([]);
  });
});

describe('daemonset.yaml', () => {
  type Obj = Record<string, any>;
  const docs = parseAllDocuments(fs.readFileSync(path.join(DEPLOY, 'daemonset.yaml'), 'utf8')).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS() as Obj;
  });
  const find = (kind: string): Obj => {
    const hit = docs.find((d) => d.kind === kind);
    if (!hit) throw new Error(`no ${kind} in daemonset.yaml`);
    return hit;
  };
  const ds = find('DaemonSet');
  const pod = ds.spec.template.spec as Obj;
  const container = pod.containers[0] as Obj;
  const configMap = find('ConfigMap');

  /** Kubernetes' toleration matching (key/operator/value/effect). */
  function tolerated(taint: { key: string; value?: string; effect: string }): boolean {
    return (pod.tolerations as Obj[]).some((t) => {
      if (t.effect && t.effect !== taint.effect) return false;
      if (t.operator === 'Exists') return !t.key || t.key === taint.key;
      return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
    });
  }

  it('is an apps/v1 DaemonSet of a Windows HostProcess pod on the host network, as SYSTEM', () => {
    expect(ds.apiVersion).toBe('apps/v1');
    expect(ds.spec.selector.matchLabels).toEqual(ds.spec.template.metadata.labels);
    expect(pod.nodeSelector).toEqual({ 'kubernetes.io/os': 'windows' });
    expect(pod.hostNetwork).toBe(true);
    expect(pod.securityContext.windowsOptions).toEqual({ hostProcess: true, runAsUserName: 'NT AUTHORITY\\SYSTEM' });
    expect(pod.containers).toHaveLength(1);
  });

  it('tolerates the Windows taints and the not-ready taint of a node without CNI', () => {
    expect(tolerated({ key: 'os', value: 'windows', effect: 'NoSchedule' })).toBe(true);
    expect(tolerated({ key: 'node.kubernetes.io/os', value: 'windows', effect: 'NoSchedule' })).toBe(true);
    expect(tolerated({ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' })).toBe(true);
    expect(tolerated({ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' })).toBe(true);
  });

  it('installs into the containerd CNI directories, from a ConfigMap it mounts', () => {
    const env = Object.fromEntries((container.env as Obj[]).map((e) => [e.name, e.value ?? e.valueFrom]));
    // containerd's own Windows defaults (containerd internal/cri/config/config_windows.go).
    expect(env.CNI_BIN_DIR).toBe('C:\\Program Files\\containerd\\cni\\bin');
    expect(env.CNI_CONF_DIR).toBe('C:\\Program Files\\containerd\\cni\\conf');
    expect(env.NODE_NAME).toEqual({ fieldRef: { fieldPath: 'spec.nodeName' } });
    const volume = (pod.volumes as Obj[]).find((v) => v.configMap?.name === configMap.metadata.name);
    expect(volume).toBeDefined();
    const mount = (container.volumeMounts as Obj[]).find((m) => m.name === volume!.name);
    expect(mount?.mountPath.replace(/\/$/, '')).toBe('/etc/hcn-cni');
    // The command runs install.ps1 from that mount, inside the HostProcess sandbox.
    expect(container.command[0]).toBe('powershell.exe');
    expect(container.command.join(' ')).toContain("$env:CONTAINER_SANDBOX_MOUNT_POINT 'etc\\hcn-cni\\install.ps1'");
    expect(Object.keys(configMap.data).sort()).toEqual(['10-hcn-cni.conflist', 'install.ps1']);
    expect(pod.serviceAccountName).toBe(find('ServiceAccount').metadata.name);
    expect(find('ClusterRole').rules).toEqual([{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }]);
  });

  it('the installer copies under a temporary name and renames (atomic), fills in the pod subnet, then runs the service', () => {
    const script = configMap.data['install.ps1'] as string;
    expect(script).toContain('$tmp = "$To.tmp"');
    expect(script).toContain('[System.IO.File]::Replace($tmp, $To');
    expect(script).toContain('[System.IO.File]::Move($tmp, $To)');
    // The standalone executable (the shim's fallback) is installed before the shim that needs it.
    const standalone = script.search(
      /Install-Atomically -From \(Join-Path \$sandbox 'hcn-cni\.exe'\) -To \(Join-Path \$binDir 'hcn-cni-standalone\.exe'\)/,
    );
    const shim = script.search(
      /Install-Atomically -From \(Join-Path \$sandbox 'hcn-cni-shim\.exe'\) -To \(Join-Path \$binDir 'hcn-cni\.exe'\)/,
    );
    expect(standalone).toBeGreaterThan(0);
    expect(shim).toBeGreaterThan(standalone);
    expect(script).toMatch(/Install-Atomically -From \$staged -To \(Join-Path \$confDir '10-hcn-cni\.conflist'\)/);
    expect(script).toContain("'etc\\hcn-cni\\10-hcn-cni.conflist'");
    expect(script).toContain(".Replace('__POD_SUBNET__', $subnet)");
    expect(script).toMatch(/& \(Join-Path \$binDir 'hcn-cni-standalone\.exe'\) @serve\n/);
    expect(script).toContain("$serve = @('serve')");
  });

  it('the service serves metrics on the node address and the port the scrape annotations name', () => {
    const script = configMap.data['install.ps1'] as string;
    const env = Object.fromEntries((container.env as Obj[]).map((e) => [e.name, e.value ?? e.valueFrom]));
    const annotations = ds.spec.template.metadata.annotations as Record<string, string>;
    expect(annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': env.METRICS_PORT,
      'prometheus.io/path': '/metrics',
    });
    expect(env.HOST_IP).toEqual({ fieldRef: { fieldPath: 'status.hostIP' } });
    expect(container.ports).toEqual([{ name: 'metrics', containerPort: Number(env.METRICS_PORT), protocol: 'TCP' }]);
    expect(script).toContain(`$serve += @('--metrics', "$($ip):$($env:METRICS_PORT)", '--metrics-allow-remote')`);
    // What the script builds for a node is an address hcn-cni serve accepts (the node's is not loopback).
    for (const ip of ['10.0.0.4', '[fd00::4]'])
      expect(parseMetricsAddress(`${ip}:${env.METRICS_PORT}`, true)).toEqual({
        host: ip.replace(/[[\]]/g, ''),
        port: 9464,
      });
    expect(parseMetricsAddress(`10.0.0.4:${env.METRICS_PORT}`, false)).toEqual(expect.any(String));
  });

  it("the ConfigMap's conflist is valid once the pod subnet is filled in, and matches bridge.conflist", () => {
    const text = configMap.data['10-hcn-cni.conflist'] as string;
    expect(text).toContain('"subnet": "__POD_SUBNET__"');
    const doc = JSON.parse(text.replace('__POD_SUBNET__', '10.244.7.0/24'));
    expect(doc.cniVersion).toBe('1.1.0');
    const conf = parseWindows(pluginConf(doc));
    expect(conf.warnings).toEqual([]);
    expect(conf).toMatchObject({
      type: 'hcn-cni',
      createNetwork: true,
      subnets: [{ family: 4, prefix: '10.244.7.0/24', gateway: '10.244.7.1' }],
    });
    // Same settings as the bridge example, apart from the per-node ones.
    const strip = ({ subnet, gateway, adapterName, ...rest }: Record<string, unknown>) => (
      void subnet,
      void gateway,
      void adapterName,
      rest
    );
    expect(strip(pluginConf(doc))).toEqual(strip(pluginConf(readConflist('bridge.conflist'))));
  });
});
