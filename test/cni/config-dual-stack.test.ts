/**
 * Dual-stack configuration: IPv6 wherever an address is accepted, each value validated by its family, and error 7
 * naming the key. Each rule below is one of parseSubnets' (src/cni/config-network.ts).
 */
import { cniFailure, parseAddConf } from '../helpers/net-conf';

const parse = (extra: Record<string, unknown>) => parseAddConf({ name: 'dual', ...extra });
const refusal = (extra: Record<string, unknown>) => cniFailure(() => parse(extra), 'accepted');

describe('subnets and gateways of both families', () => {
  it('a dual-stack subnet list gets one gateway default per family, IPv4 first', () => {
    expect(parse({ createNetwork: true, subnet: ['fd00:10::/64', '10.244.0.0/24'] }).subnets).toEqual([
      { family: 4, prefix: '10.244.0.0/24', gateway: '10.244.0.1' },
      { family: 6, prefix: 'fd00:10::/64', gateway: 'fd00:10::1' },
    ]);
  });
  it('an IPv6-only subnet, with its gateway matched by family', () => {
    expect(parse({ createNetwork: true, subnet: 'fd00:10::/64', gateway: 'fd00:10::fe' }).subnets).toEqual([
      { family: 6, prefix: 'fd00:10::/64', gateway: 'fd00:10::fe' },
    ]);
  });
  it('gateways are matched to the subnet of their own family, in any order', () => {
    const c = parse({ subnet: ['10.244.0.0/24', 'fd00:10::/64'], gateway: ['fd00:10::2', '10.244.0.2'] });
    expect(c.subnets).toEqual([
      { family: 4, prefix: '10.244.0.0/24', gateway: '10.244.0.2' },
      { family: 6, prefix: 'fd00:10::/64', gateway: 'fd00:10::2' },
    ]);
  });
  it.each([
    [
      { subnet: ['10.0.0.0/24', '10.1.0.0/24'] },
      '"subnet[1]" must be one subnet per address family (a second IPv4 subnet cannot be given to one HNS endpoint), got "10.1.0.0/24"',
    ],
    [{ subnet: ['fd00::/64', 'fd01::/64'] }, '"subnet[1]" must be one subnet per address family (a second IPv6 subnet'],
    [{ subnet: 'fd00::/127' }, '"subnet" must be an IPv6 CIDR with a prefix from /1 to /126, got "fd00::/127"'],
    [
      { subnet: 'fd00::1/64' },
      '"subnet" must be a network address (host bits zero, e.g. "fd00::/64"), got "fd00::1/64"',
    ],
    [
      { subnet: ['10.0.0.0/24', 'fd00::/64', '10.1.0.0/24'] },
      '"subnet" must be an IPv4 or IPv6 CIDR, or a list of one per address family',
    ],
    [{ subnet: ['10.0.0.0/24', 42] }, '"subnet[1]" must be an IPv4 or IPv6 CIDR, got 42'],
    [
      { subnet: '10.0.0.0/24', gateway: 'fd00::1' },
      '"gateway" must be an address of the family of a configured subnet (10.0.0.0/24); no IPv6 subnet is set, got "fd00::1"',
    ],
    [
      { subnet: ['10.0.0.0/24', 'fd00::/64'], gateway: ['10.0.0.1', 'fd01::1'] },
      '"gateway[1]" must be a host address inside subnet fd00::/64, got "fd01::1"',
    ],
    [
      { subnet: 'fd00::/64', gateway: 'fd00::' },
      '"gateway" must be a host address inside subnet fd00::/64, got "fd00::"',
    ],
    [
      { gateway: ['fd00::1', 'fd00::2'] },
      '"gateway[1]" must be one gateway per address family (a second IPv6 gateway), got "fd00::2"',
    ],
  ])('%j is code 7 naming the key', (extra, msg) => {
    const r = refusal(extra);
    expect(r.code).toBe(7);
    expect(r.msg).toContain(msg);
  });
});

describe('IPv6 wherever an address is accepted', () => {
  it('outbound-NAT exceptions, ipMasqNetwork, DNS servers and port-mapping host IPs of either family', () => {
    const c = parse({
      outboundNatExceptions: ['10.0.0.0/8', 'fd00::/8'],
      ipMasqNetwork: 'fd01::/64',
      dns: { nameservers: ['10.96.0.10', 'fd00::a'] },
      runtimeConfig: {
        portMappings: [{ hostPort: 80, containerPort: 80, hostIP: 'fd00::1' }],
        dns: { servers: ['fd00::a'] },
      },
    });
    expect(c.outboundNatExceptions).toEqual(['10.0.0.0/8', 'fd00::/8', 'fd01::/64']);
    expect(c.dns.nameservers).toEqual(['10.96.0.10', 'fd00::a']);
    expect(c.runtimeDns?.servers).toEqual(['fd00::a']);
    expect(c.portMappings[0]!.hostIP).toBe('fd00::1');
  });
  it.each([
    [
      { outboundNatExceptions: ['fd00::/200'] },
      '"outboundNatExceptions[0]" must be an IPv4 or IPv6 CIDR, got "fd00::/200"',
    ],
    [{ ipMasqNetwork: 'fd00::1' }, '"ipMasqNetwork" must be an IPv4 or IPv6 CIDR, got "fd00::1"'],
    [
      { runtimeConfig: { portMappings: [{ hostPort: 80, containerPort: 80, hostIP: 'fd00:::1' }] } },
      '"runtimeConfig.portMappings[0].hostIP" must be an IPv4 or IPv6 address, got "fd00:::1"',
    ],
  ])('%j is code 7 naming the key', (extra, msg) => {
    const r = refusal(extra);
    expect(r.code).toBe(7);
    expect(r.msg).toContain(msg);
  });
});
