/**
 * Configuration parsing: the incumbents' real shapes (Azure CNI from seed 001 verbatim, win-bridge, sdnbridge,
 * and an all-capitalised variant), every default, aliases, and the validation rules with their codes and messages.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { parseNetConf, type ConfContextOptions } from '../../src/cni/config';
import { CONFIG_KEYS, TOP_LEVEL_KEYS } from '../../src/cni/config-keys';
import { cniFailure } from '../helpers/net-conf';
import type { NetConf, Verb } from '../../src/cni/types';

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8')) as Record<string, unknown>;

const ctx = (verb: Verb = 'ADD', platform: NodeJS.Platform = 'linux'): ConfContextOptions => ({
  platform,
  defaults: { stateDir: platform === 'win32' ? 'C:\\ProgramData\\hcn-cni\\state' : '/var/lib/hcn-cni' },
  verb,
});

const parse = (raw: Record<string, unknown>, verb: Verb = 'ADD'): NetConf => parseNetConf(raw, ctx(verb));
const base = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  cniVersion: '1.0.0',
  name: 'cbr0',
  type: 'hcn-cni',
  ...extra,
});

/** failure: the CniError a parse throws (fails the test when it does not throw one). */
function failure(raw: Record<string, unknown>, verb: Verb = 'ADD'): { code: number; msg: string } {
  return cniFailure(() => parse(raw, verb), 'expected parseNetConf to fail');
}

describe('incumbent configurations', () => {
  it('Azure CNI (seed 001, verbatim from a production log)', () => {
    // test/cni/fixtures/azure-seed-001.json is the StdinData of the first ADD in /work/shared/seeds/001_*.txt with the
    // log's line wrapping removed and nothing else changed.
    const raw = fixture('azure-seed-001.json');
    const c = parse(raw);
    expect(c.cniVersion).toBe('0.3.0');
    expect(c.name).toBe('azure');
    expect(c.type).toBe('azure-vnet');
    expect(c.mode).toBe('bridge');
    expect(c.networkName).toBe('azure');
    expect(c.dns).toEqual({ nameservers: ['10.0.0.10', '168.63.129.16'], search: ['svc.cluster.local'] });
    expect(c.ipam).toEqual({ type: 'azure-vnet-ipam' });
    expect(c.endpointPolicies).toEqual([
      {
        source: 'AdditionalArgs[0].Value',
        value: { ExceptionList: ['10.240.0.0/12', '10.240.0.0/12', '10.0.0.0/8'], Type: 'OutBoundNAT' },
      },
      {
        source: 'AdditionalArgs[1].Value',
        value: { DestinationPrefix: '10.0.0.0/16', NeedEncap: true, Type: 'ROUTE' },
      },
    ]);
    expect(c.networkPolicies).toEqual([]);
    expect(c.runtimeDns).toEqual({
      servers: ['10.0.0.10'],
      searches: ['default.svc.cluster.local', 'svc.cluster.local', 'cluster.local'],
      options: ['ndots:5'],
    });
    expect(c.portMappings).toEqual([{ hostPort: 8123, containerPort: 80, protocol: 'tcp', hostIP: '127.0.0.1' }]);
    expect(c.warnings).toEqual(['unknown key "bridge" is ignored']);
    expect(c.raw).toBe(raw);
  });

  it('win-bridge: policies, ipMasqNetwork, apiVersion, loopbackDSR', () => {
    const c = parse(fixture('win-bridge.json'));
    expect(c.cniVersion).toBe('0.3.1');
    expect(c.apiVersion).toBe(2);
    expect(c.loopbackDSR).toBe(true);
    expect(c.outboundNatExceptions).toEqual(['10.244.0.0/16']);
    expect(c.ipam).toEqual({ type: 'host-local', subnet: '10.244.1.0/24', routes: [{ dst: '0.0.0.0/0' }] });
    expect(c.dns).toEqual({ nameservers: ['10.96.0.10'], search: ['svc.cluster.local'] });
    expect(c.endpointPolicies.map((p) => [p.source, p.value.Type])).toEqual([
      ['policies[0].value', 'OutBoundNAT'],
      ['policies[1].value', 'SDNRoute'],
      ['policies[2].value', 'ROUTE'],
    ]);
    expect(c.warnings).toEqual([]);
  });

  it('sdnbridge: AdditionalArgs with a NetworkPolicy, capitalised DNS keys, optionalFlags, an ipam block without type', () => {
    const c = parse(fixture('sdnbridge.json'));
    expect(c.dns).toEqual({ nameservers: ['10.0.0.10'], search: ['default.svc.cluster.local', 'svc.cluster.local'] });
    expect(c.endpointPolicies.map((p) => p.value.Type)).toEqual(['OutBoundNAT', 'SDNRoute']);
    expect(c.networkPolicies).toEqual([
      {
        source: 'AdditionalArgs[2].Value',
        value: { Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet' } },
      },
    ]);
    expect(c.loopbackDSR).toBe(true);
    expect(c.ipam).toBeUndefined();
    // sdnbridge creates its network from master + ipam.subnet (+ ipam.routes[0].GW as the gateway).
    expect([c.adapterName, c.createNetwork, c.subnets]).toEqual([
      'Ethernet',
      true,
      [{ family: 4, prefix: '10.0.0.0/16', gateway: '10.0.0.1' }],
    ]);
    expect(c.warnings).toEqual([
      '"optionalFlags.localRoutedPortMapping" is not supported and is ignored',
      '"optionalFlags.allowAclPortMapping" is not supported and is ignored',
      '"ipam" has no "type"; HNS assigns addresses and "ipam.environment" ignored',
    ]);
  });

  it('keys in any case at every level (Go decodes them that way)', () => {
    const c = parse({
      CniVersion: '0.4.0',
      Name: 'OVNHybrid',
      Type: 'win-overlay',
      ApiVersion: 2,
      Capabilities: { portMappings: true, Dns: true },
      Ipam: { Type: 'host-local', Subnet: '10.132.0.0/24' },
      DNS: { NameServers: ['10.0.0.10'], SEARCH: ['svc.cluster.local'] },
      Policies: [{ Name: 'EndpointPolicy', Value: { type: 'OutBoundNAT', Settings: { Exceptions: ['10.0.0.0/8'] } } }],
      RuntimeConfig: {
        PortMappings: [{ HostPort: 8080, ContainerPort: 80, Protocol: 'UDP' }],
        MAC: '0e:2a:0a:84:00:05',
      },
      WindowsSettings: { EnableLoopbackDSR: true, HnsTimeoutDurationInSeconds: 120 },
      MTU: 1450,
    });
    expect(c.cniVersion).toBe('0.4.0');
    expect(c.name).toBe('OVNHybrid');
    expect(c.apiVersion).toBe(2);
    expect(c.ipam).toEqual({ type: 'host-local', Subnet: '10.132.0.0/24' });
    expect(c.dns).toEqual({ nameservers: ['10.0.0.10'], search: ['svc.cluster.local'] });
    expect(c.endpointPolicies).toEqual([
      { source: 'Policies[0].Value', value: { type: 'OutBoundNAT', Settings: { Exceptions: ['10.0.0.0/8'] } } },
    ]);
    expect(c.portMappings).toEqual([{ hostPort: 8080, containerPort: 80, protocol: 'udp' }]);
    expect(c.runtimeMac).toBe('0E-2A-0A-84-00-05');
    expect(c.loopbackDSR).toBe(true);
    expect(c.hnsTimeoutSeconds).toBe(120);
    expect(c.mtu).toBe(1450);
    expect(c.warnings).toEqual([]);
  });
});

describe('defaults', () => {
  it('a minimal configuration gets every documented default', () => {
    const raw = base();
    expect(parse(raw)).toEqual({
      cniVersion: '1.0.0',
      name: 'cbr0',
      type: 'hcn-cni',
      mode: 'bridge',
      apiVersion: 'auto',
      networkName: 'cbr0',
      networkType: 'L2Bridge',
      networkTypeSet: false,
      createNetwork: false,
      createNetworkFromMaster: false,
      ipMasq: false,
      endpointMacPrefix: '0E-2A',
      dns: {},
      endpointPolicies: [],
      networkPolicies: [],
      loopbackDSR: false,
      iov: false,
      outboundNatExceptions: [],
      portMappings: [],
      hnsTimeoutSeconds: 30,
      ipamTimeoutSeconds: 30,
      stateDir: '/var/lib/hcn-cni',
      logLevel: 'info',
      audit: true,
      auditIntervalSeconds: 60,
      repair: false,
      adopt: [],
      warnings: [],
      raw,
    });
  });

  it('stateDir and logFile defaults come from the caller (per platform)', () => {
    const c = parseNetConf(base(), {
      platform: 'win32',
      defaults: { stateDir: 'C:\\ProgramData\\hcn-cni\\state', logFile: 'C:\\k\\hcn-cni.log' },
      verb: 'DEL',
    });
    expect(c.stateDir).toBe('C:\\ProgramData\\hcn-cni\\state');
    expect(c.logFile).toBe('C:\\k\\hcn-cni.log');
  });

  it('the gateway defaults to the first address only when the plugin creates the network', () => {
    expect(parse(base({ createNetwork: true, subnet: '10.5.0.0/24' })).subnets?.[0]?.gateway).toBe('10.5.0.1');
    expect(parse(base({ mode: 'delegatedNic', subnet: '172.16.8.0/22' })).subnets?.[0]?.gateway).toBe('172.16.8.1');
    expect(parse(base({ subnet: '10.5.0.0/24' })).subnets?.[0]?.gateway).toBeUndefined();
    expect(
      parse(base({ createNetwork: true, subnet: '10.5.0.0/24', gateway: '10.5.0.254' })).subnets?.[0]?.gateway,
    ).toBe('10.5.0.254');
  });
});

describe("CONFIG_KEYS is the parser's list of known keys", () => {
  // A valid value for every documented top-level key: parsing it must produce no "unknown key" warning.
  const everything: Record<string, unknown> = {
    cniVersion: '1.1.0',
    name: 'net',
    type: 'hcn-cni',
    capabilities: { portMappings: true },
    runtimeConfig: { portMappings: [], dns: { servers: ['10.0.0.10'] }, mac: '02-00-00-00-00-01' },
    args: { cni: { ips: ['10.0.0.5'] } },
    prevResult: { cniVersion: '1.1.0', ips: [{ address: '10.0.0.5/24' }] },
    ipam: { type: 'host-local' },
    dns: { nameservers: ['10.0.0.10'] },
    ipMasq: false,
    mode: 'bridge',
    apiVersion: 2,
    networkName: 'cbr0',
    networkType: 'Overlay',
    createNetwork: true,
    subnet: '10.0.0.0/24',
    gateway: '10.0.0.1',
    adapterName: 'Ethernet 2',
    master: 'Ethernet 2',
    endpointMacPrefix: '0e-2a',
    delegate: {},
    mtu: 1450,
    loopbackDSR: true,
    iov: false,
    disableHostPort: true,
    outboundNatExceptions: ['10.0.0.0/8'],
    ipMasqNetwork: '10.244.0.0/16',
    AdditionalArgs: [],
    policies: [],
    windowsSettings: { enableLoopbackDSR: true },
    optionalFlags: { loopbackDSR: true },
    hnsTimeoutSeconds: 60,
    ipamTimeoutSeconds: 10,
    stateDir: '/var/lib/x',
    logFile: '/var/log/x.log',
    logLevel: 'debug',
    audit: false,
    auditIntervalSeconds: 30,
    repair: true,
    adopt: ['azure'],
    'cni.dev/valid-attachments': [],
    'cni.dev/attachments': [],
  };

  it('every documented top-level key is in this test configuration', () => {
    expect(new Set(Object.keys(everything).map((k) => k.toLowerCase()))).toEqual(TOP_LEVEL_KEYS);
  });

  it('parses with no warnings but the one saying a flannel-style "delegate" is read as top-level keys', () => {
    expect(parseNetConf(everything, ctx('GC')).warnings).toEqual([
      '"delegate" (a flannel-style wrapper): its settings are applied as top-level keys; flannel\'s subnet lease is not read, so HNS assigns addresses unless "ipam" is set',
    ]);
  });

  it('an undocumented key is reported', () => {
    expect(parse(base({ bridgeName: 'cbr0' })).warnings).toEqual(['unknown key "bridgeName" is ignored']);
  });

  it('every row has a type, a default and a meaning', () => {
    for (const k of CONFIG_KEYS) {
      expect(k.type.length).toBeGreaterThan(0);
      expect(k.default.length).toBeGreaterThan(0);
      expect(k.meaning.length).toBeGreaterThan(10);
    }
  });

  it('reserved and network-list keys are tolerated silently', () => {
    expect(parse(base({ 'cni.dev/something': 1, cniVersions: ['1.0.0'], disableCheck: true })).warnings).toEqual([]);
  });
});

describe('values', () => {
  it.each([
    ['apiVersion', 1, 1],
    ['apiVersion', '2', 2],
    ['apiVersion', 'AUTO', 'auto'],
    ['networkType', 'l2tunnel', 'L2Tunnel'],
    ['networkType', 'nat', 'NAT'],
    ['mode', 'DelegatedNIC', 'delegatedNic'],
    ['logLevel', 'WARN', 'warn'],
  ])('%s %j → %j', (key, input, expected) => {
    expect((parse(base({ [key]: input })) as unknown as Record<string, unknown>)[key]).toEqual(expected);
  });

  it.each([
    [{ apiVersion: 3 }, 7, '"apiVersion" must be "auto", 1 or 2, got 3'],
    [
      { networkType: 'Transparent' },
      7,
      '"networkType" must be one of "L2Bridge", "Overlay", "NAT", "L2Tunnel", got "Transparent"',
    ],
    [{ logLevel: 'verbose' }, 7, '"logLevel" must be one of'],
    [{ mtu: 575 }, 7, '"mtu" must be an integer from 576 to 9000, got 575'],
    [{ mtu: 1500.5 }, 7, 'got 1500.5'],
    [{ mtu: '1500' }, 7, 'got "1500"'],
    [{ hnsTimeoutSeconds: 0 }, 7, '"hnsTimeoutSeconds" must be an integer from 1 to 3600, got 0'],
    [{ ipamTimeoutSeconds: 3601 }, 7, '"ipamTimeoutSeconds" must be an integer from 1 to 3600, got 3601'],
    [{ networkName: '' }, 7, '"networkName" must be a non-empty string, got ""'],
    [{ audit: 'no' }, 7, '"audit" must be true or false, got "no"'],
    [{ stateDir: 'state' }, 7, '"stateDir" must be an absolute path, got "state"'],
    [{ logFile: 'wincni.log' }, 7, '"logFile" must be an absolute path, got "wincni.log"'],
    [{ createNetwork: true }, 7, '"createNetwork" is true but "subnet" is not set'],
    [
      { subnet: '10.0.0.5/24' },
      7,
      '"subnet" must be a network address (host bits zero, e.g. "10.0.0.0/24"), got "10.0.0.5/24"',
    ],
    [{ subnet: '10.0.0.0/31' }, 7, '"subnet" must be an IPv4 CIDR with a prefix from /1 to /30, got "10.0.0.0/31"'],
    [{ subnet: '10.0.0.0' }, 7, 'got "10.0.0.0"'],
    [
      { subnet: '10.0.0.0/24', gateway: '10.0.1.1' },
      7,
      '"gateway" must be a host address inside subnet 10.0.0.0/24, got "10.0.1.1"',
    ],
    [{ subnet: '10.0.0.0/24', gateway: '10.0.0.255' }, 7, 'inside subnet'],
    [{ gateway: '10.0.0.256' }, 7, '"gateway" must be an IPv4 or IPv6 address, got "10.0.0.256"'],
    [
      { outboundNatExceptions: ['10.0.0.0/8', 'bogus'] },
      7,
      '"outboundNatExceptions[1]" must be an IPv4 or IPv6 CIDR, got "bogus"',
    ],
    [
      { outboundNatExceptions: ['fd00::/129'] },
      7,
      '"outboundNatExceptions[0]" must be an IPv4 or IPv6 CIDR, got "fd00::/129"',
    ],
    [
      { outboundNatExceptions: '10.0.0.0/8' },
      7,
      '"outboundNatExceptions" must be a list of strings (each an IPv4 or IPv6 CIDR), got "10.0.0.0/8"',
    ],
    [{ ipMasqNetwork: '10.244.0.0' }, 7, '"ipMasqNetwork" must be an IPv4 or IPv6 CIDR, got "10.244.0.0"'],
    [{ ipMasq: 'false' }, 7, '"ipMasq" must be true or false, got "false"'],
    [{ dns: { nameservers: ['dns.example'] } }, 7, '"dns.nameservers[0]" must be an IP address, got "dns.example"'],
    [{ ipam: { type: '' } }, 7, '"ipam.type" must be a plain executable name'],
    [{ ipam: 'host-local' }, 7, '"ipam" must be an object, got "host-local"'],
    [
      { loopbackDSR: false, windowsSettings: { enableLoopbackDSR: true } },
      7,
      '"loopbackDSR" (false) and "windowsSettings.enableLoopbackDSR" (true) are the same setting and disagree',
    ],
    [
      { hnsTimeoutSeconds: 30, windowsSettings: { hnsTimeoutDurationInSeconds: 120 } },
      7,
      '"hnsTimeoutSeconds" (30) and "windowsSettings.hnsTimeoutDurationInSeconds" (120)',
    ],
    [
      { windowsSettings: { hnsTimeoutDurationInSeconds: 0 } },
      7,
      '"windowsSettings.hnsTimeoutDurationInSeconds" must be an integer from 1 to 3600, got 0',
    ],
  ])('%j → code %i: %s', (extra, code, msg) => {
    const f = failure(base(extra));
    expect(f.code).toBe(code);
    expect(f.msg).toContain(msg);
  });

  it('ipMasqNetwork is added to outboundNatExceptions once', () => {
    expect(
      parse(base({ outboundNatExceptions: ['10.244.0.0/16', '192.168.0.0/16'], ipMasqNetwork: '10.244.0.0/16' }))
        .outboundNatExceptions,
    ).toEqual(['10.244.0.0/16', '192.168.0.0/16']);
  });

  it('Windows absolute paths are absolute on win32 only', () => {
    expect(parseNetConf(base({ stateDir: 'C:\\state' }), ctx('ADD', 'win32')).stateDir).toBe('C:\\state');
    expect(() => parseNetConf(base({ stateDir: 'C:\\state' }), ctx('ADD', 'linux'))).toThrow(
      '"stateDir" must be an absolute path',
    );
    expect(() => parseNetConf(base({ logFile: 'logs\\x.log' }), ctx('ADD', 'win32'))).toThrow(
      '"logFile" must be an absolute Windows path',
    );
  });
});

describe('policies', () => {
  it('entries that are neither EndpointPolicy nor NetworkPolicy are ignored with a warning', () => {
    const c = parse(
      base({
        AdditionalArgs: [
          { Name: 'ClusterPolicy', Value: { Type: 'X' } },
          { Name: 'EndpointPolicy', Value: { Type: 'ACL' } },
        ],
      }),
    );
    expect(c.endpointPolicies).toEqual([{ source: 'AdditionalArgs[1].Value', value: { Type: 'ACL' } }]);
    expect(c.warnings).toEqual([
      '"AdditionalArgs[0]" (Name "ClusterPolicy") is ignored: only EndpointPolicy and NetworkPolicy are applied',
    ]);
  });

  it('AdditionalArgs come before policies when both are given', () => {
    const c = parse(
      base({
        policies: [{ name: 'EndpointPolicy', value: { Type: 'B' } }],
        AdditionalArgs: [{ Name: 'EndpointPolicy', Value: { Type: 'A' } }],
      }),
    );
    expect(c.endpointPolicies.map((p) => p.value.Type)).toEqual(['A', 'B']);
  });

  it.each([
    [
      { AdditionalArgs: [{ Name: 'EndpointPolicy', Value: { ExceptionList: [] } }] },
      '"AdditionalArgs[0].Value.Type" must be a non-empty string, got nothing',
    ],
    [
      { AdditionalArgs: [{ Name: 'EndpointPolicy', Value: '{"Type":"ACL"}' }] },
      '"AdditionalArgs[0].Value" must be an HNS policy object, got "{\\"Type\\":\\"ACL\\"}"',
    ],
    [{ AdditionalArgs: ['EndpointPolicy'] }, '"AdditionalArgs[0]" must be an object with "Name" and "Value"'],
    [{ policies: { name: 'EndpointPolicy' } }, '"policies" must be a list of {name, value} objects'],
    [
      { policies: [{ name: 'EndpointPolicy', value: { Type: 7 } }] },
      '"policies[0].value.Type" must be a non-empty string, got 7',
    ],
    [
      { AdditionalArgs: [{ Name: 'EndpointPolicy', name: 'NetworkPolicy', Value: { Type: 'A' } }] },
      'keys "Name" and "name" in "AdditionalArgs[0]" differ only by case',
    ],
  ])('%j → code 7: %s', (extra, msg) => {
    const f = failure(base(extra));
    expect(f).toEqual({ code: 7, msg: expect.stringContaining(msg) });
  });
});

describe('runtimeConfig', () => {
  it.each([
    ['aa:bb:cc:dd:ee:f0', 'AA-BB-CC-DD-EE-F0'],
    ['AA-BB-CC-DD-EE-F0', 'AA-BB-CC-DD-EE-F0'],
    ['aabbccddeef0', 'AA-BB-CC-DD-EE-F0'],
    ['02:00:5E:10:00:00', '02-00-5E-10-00-00'],
  ])('mac %s → %s', (mac, expected) => {
    expect(parse(base({ runtimeConfig: { mac } })).runtimeMac).toBe(expected);
  });

  it.each([
    ['01:00:5e:00:00:01', 'a unicast MAC address, not a multicast address'],
    ['00:00:00:00:00:00', 'not the all-zero address'],
    ['ff-ff-ff-ff-ff-ff', 'not the broadcast address'],
    ['aa:bb-cc:dd:ee:ff', 'must be a MAC address'],
    ['aa:bb:cc:dd:ee', 'must be a MAC address'],
    ['gg:bb:cc:dd:ee:ff', 'must be a MAC address'],
  ])('mac %s is refused (%s)', (mac, msg) => {
    const f = failure(base({ runtimeConfig: { mac } }));
    expect(f.code).toBe(7);
    expect(f.msg).toContain('"runtimeConfig.mac"');
    expect(f.msg).toContain(msg);
  });

  it('port mappings: protocol in any case, tcp by default, hostIP "" means none', () => {
    const c = parse(
      base({
        runtimeConfig: {
          portMappings: [
            { hostPort: 1, containerPort: 65535, protocol: 'SCTP' },
            { hostPort: 8080, containerPort: 80 },
            { hostPort: 8443, containerPort: 443, protocol: 'tcp', hostIP: '' },
          ],
        },
      }),
    );
    expect(c.portMappings).toEqual([
      { hostPort: 1, containerPort: 65535, protocol: 'sctp' },
      { hostPort: 8080, containerPort: 80, protocol: 'tcp' },
      { hostPort: 8443, containerPort: 443, protocol: 'tcp' },
    ]);
  });

  it.each([
    [
      { hostPort: 0, containerPort: 80 },
      '"runtimeConfig.portMappings[0].hostPort" must be an integer from 1 to 65535, got 0',
    ],
    [
      { hostPort: 80, containerPort: 65536 },
      '"runtimeConfig.portMappings[0].containerPort" must be an integer from 1 to 65535, got 65536',
    ],
    [{ containerPort: 80 }, '"runtimeConfig.portMappings[0].hostPort" must be an integer from 1 to 65535, got nothing'],
    [
      { hostPort: 80, containerPort: 80, protocol: 'icmp' },
      '"runtimeConfig.portMappings[0].protocol" must be one of "tcp", "udp", "sctp", got "icmp"',
    ],
    [
      { hostPort: 80, containerPort: 80, hostIP: 'localhost' },
      '"runtimeConfig.portMappings[0].hostIP" must be an IPv4 or IPv6 address, got "localhost"',
    ],
  ])('%j is refused', (pm, msg) => {
    expect(failure(base({ runtimeConfig: { portMappings: [pm] } }))).toEqual({
      code: 7,
      msg: expect.stringContaining(msg),
    });
  });

  it('the same host port twice is refused, naming both entries', () => {
    const f = failure(
      base({
        runtimeConfig: {
          portMappings: [
            { hostPort: 80, containerPort: 80 },
            { hostPort: 80, containerPort: 8080, protocol: 'TCP' },
          ],
        },
      }),
    );
    expect(f).toEqual({
      code: 7,
      msg: 'invalid network configuration: "runtimeConfig.portMappings[1]" maps tcp host port 80 again (already mapped by "runtimeConfig.portMappings[0]")',
    });
    // Different protocols or host IPs do not collide.
    expect(
      parse(
        base({
          runtimeConfig: {
            portMappings: [
              { hostPort: 80, containerPort: 80 },
              { hostPort: 80, containerPort: 80, protocol: 'udp' },
            ],
          },
        }),
      ).portMappings,
    ).toHaveLength(2);
  });

  it('runtime dns and unimplemented capabilities', () => {
    const c = parse(
      base({
        runtimeConfig: {
          dns: { servers: ['10.0.0.10'], searches: ['a.local'], options: ['ndots:5'] },
          bandwidth: { ingressRate: 1 },
        },
      }),
    );
    expect(c.runtimeDns).toEqual({ servers: ['10.0.0.10'], searches: ['a.local'], options: ['ndots:5'] });
    expect(c.warnings).toEqual(['"runtimeConfig.bandwidth" (capability bandwidth) is not supported and is ignored']);
  });
});

describe('GC attachments', () => {
  const gc = (extra: Record<string, unknown>) => parse({ ...base(extra), cniVersion: '1.1.0' }, 'GC');

  it('valid-attachments is read first', () => {
    expect(
      gc({
        'cni.dev/attachments': [{ containerID: 'old', ifname: 'eth0' }],
        'cni.dev/valid-attachments': [{ containerID: 'new', ifname: 'eth1' }],
      }).validAttachments,
    ).toEqual([{ containerId: 'new', ifname: 'eth1' }]);
  });

  it('the older attachments key is the fallback', () => {
    expect(gc({ 'cni.dev/attachments': [{ containerID: 'old', ifname: 'eth0' }] }).validAttachments).toEqual([
      { containerId: 'old', ifname: 'eth0' },
    ]);
  });

  it('null is an empty list (Go marshals an empty slice as null)', () => {
    expect(gc({ 'cni.dev/valid-attachments': null }).validAttachments).toEqual([]);
  });

  it('only GC reads them', () => {
    expect(
      parse(base({ 'cni.dev/valid-attachments': [{ containerID: 'a', ifname: 'eth0' }] })).validAttachments,
    ).toBeUndefined();
  });

  it.each([
    [
      { 'cni.dev/valid-attachments': {} },
      '"cni.dev/valid-attachments" must be a list of {containerID, ifname} objects',
    ],
    [
      { 'cni.dev/valid-attachments': [{ ifname: 'eth0' }] },
      '"cni.dev/valid-attachments[0].containerID" must be a non-empty string, got nothing',
    ],
    [
      { 'cni.dev/valid-attachments': [{ containerID: 'a', ifname: 3 }] },
      '"cni.dev/valid-attachments[0].ifname" must be a non-empty string, got 3',
    ],
  ])('%j is refused', (extra, msg) => {
    expect(failure({ ...base(extra), cniVersion: '1.1.0' }, 'GC')).toEqual({
      code: 7,
      msg: expect.stringContaining(msg),
    });
  });
});

describe('prevResult', () => {
  it('a 0.3.1 result with ips[].version becomes the neutral form', () => {
    const c = parse(
      {
        ...base(),
        cniVersion: '0.3.1',
        prevResult: {
          cniVersion: '0.3.1',
          interfaces: [{ name: 'ctr-1_cbr0', mac: '00-15-5D-01-02-03' }],
          ips: [{ version: '4', address: '10.244.1.7/24', gateway: '10.244.1.2', interface: 0 }],
          routes: [{ dst: '0.0.0.0/0', gw: '10.244.1.2' }],
          dns: { nameservers: ['10.96.0.10'] },
        },
      },
      'DEL',
    );
    expect(c.prevResult).toEqual({
      interfaces: [{ name: 'ctr-1_cbr0', mac: '00:15:5d:01:02:03' }],
      ips: [{ address: '10.244.1.7/24', gateway: '10.244.1.2', interface: 0 }],
      routes: [{ dst: '0.0.0.0/0', gw: '10.244.1.2' }],
      dns: { nameservers: ['10.96.0.10'] },
    });
  });

  it('an empty prevResult is an empty result', () => {
    expect(parse(base({ prevResult: {} }), 'DEL').prevResult).toEqual({ interfaces: [], ips: [], routes: [], dns: {} });
  });
});
