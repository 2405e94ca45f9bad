/**
 * Every JSON body the plugin can send to HNS and HCS, checked against the real schema: field names (exact case),
 * JSON types, and the settings of each policy type, as hcsshim's Go structs define them (fixtures/hns-schema.json,
 * with the repository, commit and paths it was transcribed from). The plugin runs its real flows in process — bridge
 * and delegated-NIC, v2 and v1, HCN namespace and Docker hot attach, every policy family — over an addon wrapper that
 * records what crosses into the native layer; nothing is hand-written here except the configurations.
 */
import { randomUUID } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { loadNative } from '../../src/hns/native';
import type { NativeHcn } from '../../src/hns/native-types';
import { pluginDeps } from '../../src/plugin/deps';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';

interface Schema {
  structs: Record<string, Record<string, string>>;
  policiesV2: Record<string, Record<string, string>>;
  policiesV1: Record<string, Record<string, string>>;
}
const SCHEMA = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'hns-schema.json'), 'utf8')) as Schema;

interface Sent {
  /** The struct the body must be. */
  type: string;
  via: string;
  body: unknown;
}

/** Which struct each native entry point's JSON argument is (hcsshim: which struct it marshals there). */
function classify(fn: string, args: unknown[]): Array<Omit<Sent, 'via'>> {
  const json = (x: unknown) => (typeof x === 'string' ? (JSON.parse(x) as unknown) : x);
  const out: Array<Omit<Sent, 'via'>> = [];
  const query = (q: unknown) => q !== null && q !== undefined && out.push({ type: 'HostComputeQuery', body: json(q) });
  switch (fn) {
    case 'createNetwork':
      out.push({ type: 'HostComputeNetwork', body: json(args[1]) });
      query(args[2]);
      break;
    case 'createEndpoint':
      out.push({ type: 'HostComputeEndpoint', body: json(args[2]) });
      query(args[3]);
      break;
    case 'createNamespace':
      out.push({ type: 'HostComputeNamespace', body: json(args[1]) });
      query(args[2]);
      break;
    case 'modifyEndpoint':
      out.push({ type: 'ModifyEndpointSettingRequest', body: json(args[1]) });
      break;
    case 'modifyNamespace':
      out.push({ type: 'ModifyNamespaceSettingRequest', body: json(args[1]) });
      break;
    case 'modifyNetwork':
      out.push({ type: 'ModifyNetworkSettingRequest', body: json(args[1]) });
      break;
    case 'modifyComputeSystem':
      out.push({ type: 'ResourceModificationRequestResponse', body: json(args[1]) });
      break;
    case 'getNetworkProperties':
    case 'getEndpointProperties':
    case 'getNamespaceProperties':
      query(args[1]);
      break;
    case 'enumerateNetworks':
    case 'enumerateEndpoints':
    case 'enumerateNamespaces':
    case 'listNetworksDetailed':
    case 'listEndpointsDetailed':
    case 'listNamespacesDetailed':
      query(args[0]);
      break;
    case 'hnsCall': {
      const [method, p, body] = args as [string, string, string | null];
      if (body === null) break;
      const seg = p.split('/').filter(Boolean);
      if (method === 'POST' && seg[0] === 'networks' && seg.length === 1)
        out.push({ type: 'HNSNetwork', body: json(body) });
      else if (method === 'POST' && seg[0] === 'endpoints' && seg.length === 1)
        out.push({ type: 'HNSEndpoint', body: json(body) });
      else if (
        method === 'POST' &&
        seg[0] === 'namespaces' &&
        (seg[2] === 'addresource' || seg[2] === 'removeresource')
      )
        out.push({ type: 'NamespaceResourceRequestV1', body: json(body) });
      else out.push({ type: `unclassified HNSCall ${method} ${p}`, body: json(body) });
      break;
    }
    default:
      break;
  }
  return out;
}

function recording(native: NativeHcn, sent: Sent[]): NativeHcn {
  return new Proxy(native, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        for (const s of classify(String(prop), args)) sent.push({ ...s, via: String(prop) });
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const typeOf = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);

/** Problems of `value` as `type` (a struct name, Struct[], a policy list, or a JSON type). */
function check(value: unknown, type: string, at: string, problems: string[]): void {
  const list = type.endsWith('[]') ? type.slice(0, -2) : undefined;
  if (list !== undefined) {
    if (!Array.isArray(value)) return void problems.push(`${at}: expected a list, got ${typeOf(value)}`);
    value.forEach((x, i) => check(x, list === 'string' ? 'string' : list, `${at}[${i}]`, problems));
    return;
  }
  if (type === 'raw') return;
  if (type === 'string' || type === 'number' || type === 'boolean') {
    if (typeof value !== type) problems.push(`${at}: expected ${type}, got ${typeOf(value)} ${JSON.stringify(value)}`);
    return;
  }
  if (type === 'object') {
    if (typeOf(value) !== 'object') problems.push(`${at}: expected an object, got ${typeOf(value)}`);
    return;
  }
  if (typeOf(value) !== 'object') return void problems.push(`${at}: expected ${type}, got ${typeOf(value)}`);
  const obj = value as Record<string, unknown>;
  if (type === 'PolicyV2') return checkPolicy(obj, SCHEMA.policiesV2, true, at, problems);
  if (type === 'PolicyV1') return checkPolicy(obj, SCHEMA.policiesV1, false, at, problems);
  const fields = SCHEMA.structs[type];
  if (!fields) return void problems.push(`${at}: no struct ${type} in the fixture`);
  for (const [k, v] of Object.entries(obj)) {
    const t = fields[k];
    if (!t) problems.push(`${at}.${k}: not a field of ${type} (fields: ${Object.keys(fields).join(', ')})`);
    else check(v, t, `${at}.${k}`, problems);
  }
}

const policyTypesSeen = { v2: new Set<string>(), v1: new Set<string>() };

function checkPolicy(
  p: Record<string, unknown>,
  table: Record<string, Record<string, string>>,
  typed: boolean,
  at: string,
  problems: string[],
): void {
  const type = p.Type;
  if (typeof type !== 'string' || !table[type])
    return void problems.push(
      `${at}.Type: ${JSON.stringify(type)} is not a policy type of the ${typed ? 'v2' : 'v1'} schema`,
    );
  (typed ? policyTypesSeen.v2 : policyTypesSeen.v1).add(type);
  const fields = table[type]!;
  const settings = typed ? p.Settings : Object.fromEntries(Object.entries(p).filter(([k]) => k !== 'Type'));
  if (typed) {
    for (const k of Object.keys(p))
      if (k !== 'Type' && k !== 'Settings') problems.push(`${at}.${k}: a v2 policy has only Type and Settings`);
    if (typeOf(settings) !== 'object') return void problems.push(`${at}.Settings: expected an object`);
  }
  for (const [k, v] of Object.entries(settings as Record<string, unknown>)) {
    const t = fields[k];
    if (!t)
      problems.push(
        `${at}${typed ? '.Settings' : ''}.${k}: not a setting of ${type} (${Object.keys(fields).join(', ')})`,
      );
    else check(v, t, `${at}.${k}`, problems);
  }
}

let h: Harness;
useHarness(
  {
    adapters: [
      { Name: 'Ethernet', MacAddress: '00-15-5D-AA-00-01' },
      { Name: 'Ethernet 2', MacAddress: '00-15-5D-AA-00-02' },
      { Name: 'Ethernet 3', MacAddress: '00-15-5D-AA-00-03' },
    ],
  },
  (x) => (h = x),
);

const sent: Sent[] = [];
beforeEach(() => {
  h.deps = pluginDeps({ pid: process.pid, native: recording(loadNative().native, sent) });
});

/** Every policy family a configuration can carry, in the form the field has it (v1 flat from Azure, v2 typed). */
const EVERY_POLICY = [
  { Name: 'EndpointPolicy', Value: { Type: 'OutBoundNAT', ExceptionList: ['10.0.0.0/8'] } },
  { Name: 'EndpointPolicy', Value: { Type: 'ROUTE', DestinationPrefix: '10.0.0.0/16', NeedEncap: true } },
  {
    Name: 'EndpointPolicy',
    Value: {
      Type: 'ACL',
      Protocols: '6,17',
      Action: 'Allow',
      Direction: 'In',
      RemoteAddresses: '10.1.0.0/16',
      Priority: 200,
    },
  },
  { Name: 'EndpointPolicy', Value: { Type: 'QOS', MaximumOutgoingBandwidthInBytes: 1000000 } },
];

async function namespace(): Promise<string> {
  const id = randomUUID();
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, id);
  return id;
}

async function ok(c: Parameters<typeof cni>[1]): Promise<void> {
  const r = await cni(h, c);
  expect({ verb: c.verb, exitCode: r.exitCode, out: r.exitCode === 0 ? '' : r.stdout }).toEqual({
    verb: c.verb,
    exitCode: 0,
    out: '',
  });
}

describe("every body the plugin sends matches hcsshim's structs", () => {
  const flows: Array<[string, () => Promise<void>]> = [
    [
      'bridge, HCN: network + endpoint with every policy, port mapping with host IP, DNS options, MTU, loopback DSR, namespace',
      async () => {
        const conf = bridgeConf({
          cniVersion: '1.1.0',
          apiVersion: 2,
          mtu: 1450,
          loopbackDSR: true,
          AdditionalArgs: EVERY_POLICY,
          dns: { nameservers: ['10.0.0.10'], search: ['svc.cluster.local'], options: ['ndots:5'] },
          runtimeConfig: {
            portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp', hostIP: '10.244.1.1' }],
          },
        });
        const ns = await namespace();
        await ok({ verb: 'ADD', conf, containerId: 'pod-v2', netns: ns });
        await ok({ verb: 'DEL', conf, containerId: 'pod-v2', netns: ns });
      },
    ],
    [
      'bridge, HNS v1: network + endpoint with every policy, port mapping, namespace through addresource',
      async () => {
        const conf = bridgeConf({
          apiVersion: 1,
          AdditionalArgs: EVERY_POLICY,
          dns: { nameservers: ['10.0.0.10'], search: ['svc.cluster.local'], options: ['ndots:5'] },
          runtimeConfig: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'udp' }] },
        });
        const ns = await namespace();
        await ok({ verb: 'ADD', conf, containerId: 'pod-v1', netns: ns });
        await ok({ verb: 'DEL', conf, containerId: 'pod-v1', netns: ns });
      },
    ],
    [
      'Docker sandbox: HCS hot attach and detach (v2 endpoint)',
      async () => {
        const conf = bridgeConf();
        await ok({ verb: 'ADD', conf, containerId: 'sandbox', netns: 'none' });
        await ok({ verb: 'DEL', conf, containerId: 'sandbox', netns: 'none' });
      },
    ],
    [
      'delegated NIC, HCN: flags, NetAdapterName, Iov, loopback DSR added once HNS assigned the address',
      async () => {
        const conf = {
          cniVersion: '1.0.0',
          name: 'nic',
          type: 'hcn-cni',
          mode: 'delegatedNic',
          subnet: '10.9.0.0/24',
          iov: true,
          loopbackDSR: true,
          runtimeConfig: { mac: '00-15-5D-AA-00-02' },
        };
        const ns = await namespace();
        await ok({ verb: 'ADD', conf, containerId: 'pod-nic', netns: ns });
        await ok({ verb: 'DEL', conf, containerId: 'pod-nic', netns: ns });
      },
    ],
    [
      'delegated NIC, HNS v1: NetworkAdapterName, no flags',
      async () => {
        const conf = {
          cniVersion: '1.0.0',
          name: 'nic1',
          type: 'hcn-cni',
          mode: 'delegatedNic',
          apiVersion: 1,
          subnet: '10.8.0.0/24',
          runtimeConfig: { mac: '00-15-5D-AA-00-03' },
        };
        const ns = await namespace();
        await ok({ verb: 'ADD', conf, containerId: 'pod-nic1', netns: ns });
        await ok({ verb: 'DEL', conf, containerId: 'pod-nic1', netns: ns });
      },
    ],
  ];

  it.each(flows)('%s', async (_name, flow) => {
    const from = sent.length;
    await flow();
    const problems: string[] = [];
    for (const s of sent.slice(from)) check(s.body, s.type, `${s.via} ${s.type}`, problems);
    expect(problems).toEqual([]);
  });

  it('the flows covered every body type and every policy type the plugin can send (run after the flows)', () => {
    expect([...new Set(sent.map((s) => s.type))].sort()).toEqual(
      [
        'HNSEndpoint',
        'HNSNetwork',
        'HostComputeEndpoint',
        'HostComputeNamespace',
        'HostComputeNetwork',
        'HostComputeQuery',
        'ModifyEndpointSettingRequest',
        'ModifyNamespaceSettingRequest',
        'NamespaceResourceRequestV1',
        'ResourceModificationRequestResponse',
      ].sort(),
    );
    expect([...policyTypesSeen.v2].sort()).toEqual([
      'ACL',
      'InterfaceParameters',
      'Iov',
      'NetAdapterName',
      'OutBoundNAT',
      'PortMapping',
      'QOS',
      'SDNRoute',
    ]);
    expect([...policyTypesSeen.v1].sort()).toEqual(['ACL', 'NAT', 'OutBoundNAT', 'QOS', 'ROUTE']);
  });

  it('the check catches a wrong case, a wrong type and a setting a policy does not have (negative control)', () => {
    const problems: string[] = [];
    check(
      { Name: 'x', IpConfigurations: [{ IPAddress: '10.0.0.2' }], Flags: '8' },
      'HostComputeEndpoint',
      'ep',
      problems,
    );
    check(
      { Policies: [{ Type: 'NAT', Protocol: 'tcp', InternalPort: 80, VIP: '1.2.3.4' }] },
      'HNSEndpoint',
      'v1',
      problems,
    );
    check({ Policies: [{ Type: 'ACL', Settings: { Protocol: 6 } }] }, 'HostComputeEndpoint', 'v2', problems);
    expect(problems).toEqual([
      expect.stringContaining('ep.IpConfigurations[0].IPAddress: not a field of IpConfig'),
      expect.stringContaining('ep.Flags: expected number'),
      expect.stringContaining('VIP: not a setting of NAT'),
      expect.stringContaining('Protocol: not a setting of ACL'),
    ]);
  });
});
