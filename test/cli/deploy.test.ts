/**
 * deploy/: every example conflist passes the plugin's own validation (parseNetConf, as on Windows) with no warnings,
 * answers VERSION and STATUS through the dispatcher, and works: ADD then DEL against the simulator. The DaemonSet has
 * what a Windows HostProcess installer needs, and its ConfigMap's conflist is valid too.
 */
import { randomUUID } from 'crypto';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runInstall } from '../../src/cli/install';
import { parseArgs } from '../../src/cli/operator/args';
import { parseAllDocuments } from 'yaml';
import { parseNetConf } from '../../src/cni/config';
import type { NetConf } from '../../src/cni/types';
import { parseMetricsAddress } from '../../src/cli/metrics-address';
import { hcnPluginConf } from '../../src/cli/operator/conf';
import { silentLogger } from '../../src/log/logger';
import { runCni } from '../../src/run';
import { ROOT, cni, useHarness, type Harness } from '../helpers/cni-harness';
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
  it.each(CONFLISTS)(
    '%s: cniVersion 1.0.0 (containerd 1.7 and 2.x both accept it), one hcn-cni plugin, valid for the plugin with no warnings',
    (name) => {
      const doc = readConflist(name);
      expect(doc.cniVersion).toBe('1.0.0');
      expect(doc.plugins.filter((p: { type: string }) => p.type === 'hcn-cni')).toHaveLength(1);
      const conf = parseWindows(pluginConf(doc));
      expect(conf).toMatchObject({ cniVersion: '1.0.0', type: 'hcn-cni', name: doc.name });
      expect(conf.warnings).toEqual([]);
      const caps = Object.keys(pluginConf(doc).capabilities as object);
      expect(caps.every((c) => RUNTIME_CAPABILITIES.includes(c))).toBe(true);
    },
  );

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
  useHarness(undefined, (x) => (h = x));

  /** The plugin entry for this machine: the Windows log file path would not be absolute here. */
  function local(name: string): Record<string, unknown> {
    const raw = pluginConf(readConflist(name));
    delete raw.logFile;
    return { ...raw, stateDir: h.stateDir, logLevel: 'silent' };
  }

  async function namespace(): Promise<string> {
    const id = randomUUID();
    await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, id);
    return id;
  }

  it.each(CONFLISTS)('%s answers VERSION and STATUS through the dispatcher', async (name) => {
    const conf = local(name);
    const version = await runCni({
      env: { CNI_COMMAND: 'VERSION' },
      stdin: JSON.stringify(conf),
      deps: h.deps,
      createLogger: () => silentLogger,
    });
    expect(version.exitCode).toBe(0);
    expect(JSON.parse(version.stdout)).toEqual({
      cniVersion: '1.0.0',
      supportedVersions: expect.arrayContaining(['1.1.0']),
    });
    // STATUS is 1.1.0's: what install writes for containerd 2.x, the only runtime that sends it.
    const status = await runCni({
      env: { CNI_COMMAND: 'STATUS', CNI_PATH: '/opt/cni/bin', HCN_SIM: h.sim.address },
      stdin: JSON.stringify({ ...conf, cniVersion: '1.1.0' }),
      deps: h.deps,
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
    await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNetwork({
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

  const init = (pod.initContainers as Obj[])[0] as Obj;
  const SANDBOX = '%CONTAINER_SANDBOX_MOUNT_POINT%\\';

  it('an init container runs `hcn-cni.exe install` from the image, with the ConfigMap it mounts; no shell anywhere', () => {
    expect(pod.initContainers).toHaveLength(1);
    expect(init.image).toBe(container.image);
    expect(init.command).toEqual([
      `${SANDBOX}hcn-cni.exe`,
      'install',
      '--conflist',
      `${SANDBOX}etc\\hcn-cni\\10-hcn-cni.conflist`,
      '--shim',
      `${SANDBOX}hcn-cni-shim.exe`,
    ]);
    const env = Object.fromEntries((init.env as Obj[]).map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env.NODE_NAME).toEqual({ fieldRef: { fieldPath: 'spec.nodeName' } });
    const volume = (pod.volumes as Obj[]).find((v) => v.configMap?.name === configMap.metadata.name);
    const mount = (init.volumeMounts as Obj[]).find((m) => m.name === volume!.name);
    expect(mount?.mountPath.replace(/\/$/, '')).toBe('/etc/hcn-cni');
    expect(Object.keys(configMap.data)).toEqual(['10-hcn-cni.conflist']);
    for (const c of [init, container, container.livenessProbe.exec, container.readinessProbe.exec])
      expect(c.command[0]).toBe(`${SANDBOX}hcn-cni.exe`);
    expect(pod.serviceAccountName).toBe(find('ServiceAccount').metadata.name);
    expect(find('ClusterRole').rules).toEqual([{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }]);
  });

  it("the install command, run as the manifest runs it (the sandbox a directory here), installs the ConfigMap's conflist", async () => {
    const sandbox = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-sandbox-'));
    try {
      const local = (a: string) => a.split(SANDBOX).join(`${sandbox}/`).replace(/\\/g, '/');
      fs.mkdirSync(path.join(sandbox, 'etc', 'hcn-cni'), { recursive: true });
      // The Windows log file path is not absolute here (the plugin's parser checks it for this platform).
      const text = (configMap.data['10-hcn-cni.conflist'] as string).replace(/\n\s*"logFile": "[^"]*",/, '');
      fs.writeFileSync(path.join(sandbox, 'etc', 'hcn-cni', '10-hcn-cni.conflist'), text);
      fs.writeFileSync(path.join(sandbox, 'hcn-cni.exe'), 'standalone');
      fs.writeFileSync(path.join(sandbox, 'hcn-cni-shim.exe'), 'shim');
      const bin = path.join(sandbox, 'host', 'bin');
      const conf = path.join(sandbox, 'host', 'conf');
      const config = path.join(sandbox, 'config.toml');
      fs.writeFileSync(
        config,
        `version = 3\n[plugins.'io.containerd.cri.v1.runtime'.cni]\n  bin_dirs = ['${bin}']\n  conf_dir = '${conf}'\n`,
      );
      const [exe, verb, ...args] = (init.command as string[]).map(local);
      expect([path.basename(exe!), verb]).toEqual(['hcn-cni.exe', 'install']);
      let err = '';
      const code = await runInstall([...args, '--containerd-config', config, '--executable', exe!], {
        env: { POD_SUBNET: '10.244.7.0/24', NODE_NAME: 'n' },
        platform: 'linux',
        out: () => undefined,
        err: (s) => (err += s),
      });
      expect({ code, err }).toEqual({ code: 0, err: '' });
      expect(fs.readFileSync(path.join(bin, 'hcn-cni'), 'utf8')).toBe('shim');
      expect(fs.readFileSync(path.join(bin, 'hcn-cni-standalone'), 'utf8')).toBe('standalone');
      const installed = JSON.parse(fs.readFileSync(path.join(conf, '10-hcn-cni.conflist'), 'utf8'));
      expect(installed).toMatchObject({ cniVersion: '1.1.0', plugins: [{ subnet: '10.244.7.0/24' }] });
    } finally {
      fs.rmSync(sandbox, { recursive: true, force: true });
    }
  });

  it('the probes are exec probes of `hcn-cni service --probe`, which the operator tool accepts', () => {
    expect(container.livenessProbe.exec.command.slice(1)).toEqual(['service', '--probe', 'liveness']);
    expect(container.readinessProbe.exec.command.slice(1)).toEqual(['service', '--probe', 'readiness']);
    for (const p of [container.livenessProbe, container.readinessProbe])
      expect(parseArgs(p.exec.command.slice(1))).toMatchObject({ command: 'service', probe: expect.any(String) });
  });

  it("validates against Kubernetes' own schemas (kubernetes-models, offline)", () => {
    const r = spawnSync(
      process.execPath,
      [path.join(__dirname, 'k8s-schema-validate.mjs'), path.join(DEPLOY, 'daemonset.yaml')],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    );
    expect(r.stderr).toBe('');
    const results = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(results.map((x) => x.kind)).toEqual([
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'ConfigMap',
      'DaemonSet',
    ]);
    expect(results.filter((x) => !x.ok)).toEqual([]);
  });

  it('the schema check catches a wrong type in the manifest', () => {
    const bad = path.join(os.tmpdir(), `hcn-bad-${process.pid}.yaml`);
    fs.writeFileSync(
      bad,
      fs.readFileSync(path.join(DEPLOY, 'daemonset.yaml'), 'utf8').replace('periodSeconds: 30', 'periodSeconds: "30"'),
    );
    try {
      const r = spawnSync(process.execPath, [path.join(__dirname, 'k8s-schema-validate.mjs'), bad], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      const ds = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .find((x) => x.kind === 'DaemonSet');
      expect(ds).toMatchObject({
        ok: false,
        error: expect.stringMatching(/livenessProbe\/periodSeconds must be integer/),
      });
    } finally {
      fs.rmSync(bad, { force: true });
    }
  });

  it('the service runs from the image and serves metrics on the node address and the port the scrape annotations name', () => {
    const annotations = ds.spec.template.metadata.annotations as Record<string, string>;
    expect(annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': '9464',
      'prometheus.io/path': '/metrics',
    });
    const env = Object.fromEntries((container.env as Obj[]).map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env.HOST_IP).toEqual({ fieldRef: { fieldPath: 'status.hostIP' } });
    // No containerPort: under hostNetwork it is a host port, which the update's new pod could not get beside the old.
    expect(container.ports).toBeUndefined();
    expect(container.command.slice(1)).toEqual([
      'serve',
      '--metrics',
      '$(HOST_IP):9464',
      '--metrics-allow-remote',
      '--create-network',
      'installed',
      '--conf-dir',
      'installed',
      '--stay-after-hand-over',
    ]);
    // What the kubelet makes of $(HOST_IP) for an IPv4 node is an address hcn-cni serve accepts with the flag.
    expect(parseMetricsAddress('$(HOST_IP):9464'.replace('$(HOST_IP)', '10.0.0.4'), true)).toEqual({
      host: '10.0.0.4',
      port: 9464,
    });
    expect(parseMetricsAddress('10.0.0.4:9464', false)).toEqual(expect.any(String));
  });

  it('an update starts the new pod beside the old one, whose service hands over and stays until deleted', () => {
    expect(ds.spec.updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: 1, maxUnavailable: 0 },
    });
    // Nothing in the pod that two pods of one node cannot both hold: no host port.
    for (const c of [...(pod.initContainers as Obj[]), ...(pod.containers as Obj[])])
      expect((c.ports as Obj[] | undefined)?.filter((p) => pod.hostNetwork || p.hostPort) ?? []).toEqual([]);
    // Hand-over is the default (no --no-take-over); the old service stays rather than be restarted and take it back.
    expect(container.command).not.toContain('--no-take-over');
    expect(container.command).toContain('--stay-after-hand-over');
    const env = Object.fromEntries((container.env as Obj[]).map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env.HCN_CNI_POD_UID).toEqual({ fieldRef: { fieldPath: 'metadata.uid' } });
  });

  it("the ConfigMap's conflist is valid once the pod subnet is filled in, and matches bridge.conflist", () => {
    const text = configMap.data['10-hcn-cni.conflist'] as string;
    expect(text).toContain('"subnet": "__POD_SUBNET__"');
    const doc = JSON.parse(text.replace('__POD_SUBNET__', '10.244.7.0/24'));
    expect(doc.cniVersion).toBe('1.0.0');
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
