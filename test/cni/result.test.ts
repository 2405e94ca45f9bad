/**
 * Results: rendering per version (what each version may and must carry) and parsing any version's shape back.
 */
import { CniCode, CniError } from '../../src/cni/cni-error';
import { parseIpamResult, parsePrevResult, renderResult } from '../../src/cni/result';
import { SUPPORTED_VERSIONS, type CniResult } from '../../src/cni/types';
import { FULL_RESULT } from './helpers';

describe('renderResult', () => {
  const MODERN = SUPPORTED_VERSIONS.filter((v) => v !== '0.1.0' && v !== '0.2.0');
  it.each([...MODERN])('%s: ips[].version exactly below 1.0.0; 1.1.0 fields exactly in 1.1.0', (v) => {
    const out = renderResult(FULL_RESULT, v) as {
      cniVersion: string;
      ips: Array<Record<string, unknown>>;
      interfaces: Array<Record<string, unknown>>;
      routes: Array<Record<string, unknown>>;
    };
    expect(out.cniVersion).toBe(v);
    const pre1 = v.startsWith('0.');
    expect(out.ips.map((ip) => ip.version)).toEqual(pre1 ? ['4', '6'] : [undefined, undefined]);
    expect('version' in out.ips[0]!).toBe(pre1);
    const is11 = v === '1.1.0';
    for (const k of ['mtu', 'socketPath', 'pciID']) expect(k in out.interfaces[0]!).toBe(is11);
    for (const k of ['mtu', 'advmss', 'priority', 'table', 'scope']) expect(k in out.routes[0]!).toBe(is11);
  });

  it.each(['0.1.0', '0.2.0'] as const)(
    '%s: the legacy shape: ip4 and ip6 (first of each family), routes by family, dns, no interfaces',
    (v) => {
      const r: CniResult = {
        interfaces: [{ name: 'eth0', mac: '0e:2a:0a:84:00:05' }],
        ips: [
          { address: 'fd00::5/64', gateway: 'fd00::1', interface: 0 },
          { address: '10.0.0.5/24', gateway: '10.0.0.1', interface: 0 },
          { address: '10.0.0.6/24', interface: 0 },
        ],
        routes: [{ dst: '0.0.0.0/0', gw: '10.0.0.1' }, { dst: '::/0', gw: 'fd00::1' }, { dst: '10.96.0.0/12' }],
        dns: { nameservers: ['10.96.0.10'] },
      };
      expect(renderResult(r, v)).toEqual({
        cniVersion: v,
        ip4: {
          ip: '10.0.0.5/24',
          gateway: '10.0.0.1',
          routes: [{ dst: '0.0.0.0/0', gw: '10.0.0.1' }, { dst: '10.96.0.0/12' }],
        },
        ip6: { ip: 'fd00::5/64', gateway: 'fd00::1', routes: [{ dst: '::/0', gw: 'fd00::1' }] },
        dns: { nameservers: ['10.96.0.10'] },
      });
      // An IPv6-only result is ip6 alone; routes of a family without an address are dropped (as libcni's converter).
      expect(
        renderResult({ interfaces: [], ips: [{ address: 'fd00::5/64' }], routes: [{ dst: '0.0.0.0/0' }], dns: {} }, v),
      ).toEqual({ cniVersion: v, ip6: { ip: 'fd00::5/64' } });
    },
  );

  it('a 0.2.0 result (host-local answering a 0.2.0 conflist, or a 0.2.0 prevResult) parses back into neutral form', () => {
    const legacy = {
      cniVersion: '0.2.0',
      ip4: { ip: '10.0.0.5/24', gateway: '10.0.0.1', routes: [{ dst: '0.0.0.0/0' }] },
      ip6: { ip: 'fd00::5/64' },
      dns: { nameservers: ['10.96.0.10'] },
    };
    expect(parsePrevResult(legacy, 'prevResult')).toEqual({
      interfaces: [],
      ips: [{ address: '10.0.0.5/24', gateway: '10.0.0.1' }, { address: 'fd00::5/64' }],
      routes: [{ dst: '0.0.0.0/0' }],
      dns: { nameservers: ['10.96.0.10'] },
    });
    expect(parseIpamResult(legacy, 'host-local').ips).toHaveLength(2);
  });

  it('keeps a zero route table and scope in 1.1.0 (they are meaningful), drops an interface mtu of 0', () => {
    const r: CniResult = {
      interfaces: [{ name: 'e', mtu: 0 }],
      ips: [],
      routes: [{ dst: '10.0.0.0/8', table: 0, scope: 0 }],
      dns: {},
    };
    expect(renderResult(r, '1.1.0')).toEqual({
      cniVersion: '1.1.0',
      interfaces: [{ name: 'e' }],
      routes: [{ dst: '10.0.0.0/8', table: 0, scope: 0 }],
    });
  });

  it('omits empty lists, empty strings and empty dns parts', () => {
    const r: CniResult = {
      interfaces: [{ name: 'eth0', mac: '', sandbox: '' }],
      ips: [{ address: '10.0.0.2/24', gateway: '' }],
      routes: [],
      dns: { nameservers: [], search: ['a'] },
    };
    expect(renderResult(r, '0.4.0')).toEqual({
      cniVersion: '0.4.0',
      interfaces: [{ name: 'eth0' }],
      ips: [{ version: '4', address: '10.0.0.2/24' }],
      dns: { search: ['a'] },
    });
  });
});

describe('parsing results of any version', () => {
  it.each([...SUPPORTED_VERSIONS])('round trip at %s', (v) => {
    const rendered = renderResult(FULL_RESULT, v);
    const back = parsePrevResult(JSON.parse(JSON.stringify(rendered)), 'prevResult');
    expect(renderResult(back, v)).toEqual(rendered);
  });

  it('1.1.0 extras survive parsing', () => {
    expect(parsePrevResult(renderResult(FULL_RESULT, '1.1.0'), 'prevResult')).toEqual(FULL_RESULT);
  });

  const bad: Array<[string, unknown, string]> = [
    [
      'a version that contradicts the address',
      { ips: [{ version: '6', address: '10.0.0.2/24' }] },
      '"prevResult.ips[0].version" must be "4" for 10.0.0.2/24, got "6"',
    ],
    [
      'an interface index out of range',
      { interfaces: [{ name: 'a' }], ips: [{ address: '10.0.0.2/24', interface: 1 }] },
      '"prevResult.ips[0].interface" must be an index into interfaces (0 to 0), got 1',
    ],
    [
      'a gateway of the other family',
      { ips: [{ address: '10.0.0.2/24', gateway: 'fd00::1' }] },
      '"prevResult.ips[0].gateway" must be an IPv4 address, got "fd00::1"',
    ],
    [
      'a bad MAC',
      { interfaces: [{ name: 'a', mac: 'zz' }] },
      '"prevResult.interfaces[0].mac" must be a MAC address, got "zz"',
    ],
    [
      'an interface without a name',
      { interfaces: [{ mac: '00:15:5d:00:00:01' }] },
      '"prevResult.interfaces[0].name" must be a string, got nothing',
    ],
    [
      'a route without dst',
      { routes: [{ gw: '10.0.0.1' }] },
      '"prevResult.routes[0].dst" must be an IP prefix in CIDR form, got nothing',
    ],
    ['ips that is not a list', { ips: {} }, '"prevResult.ips" must be a list, got {}'],
    [
      'a 0.2.0 result with an IPv6 ip4',
      { ip4: { ip: 'fd00::2/64' } },
      '"prevResult.ip4.ip" must be an IPv4 address in CIDR form, got "fd00::2/64"',
    ],
    [
      'a result in both shapes',
      { ip4: { ip: '10.0.0.2/24' }, ips: [] },
      '"prevResult" mixes the 0.2.0 shape (ip4/ip6) with ips/interfaces',
    ],
  ];
  it.each(bad)('%s is code 6 with the path', (_name, raw, msg) => {
    let err: unknown;
    try {
      parsePrevResult(raw, 'prevResult');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CniError);
    expect((err as CniError).code).toBe(CniCode.DECODE_FAILURE);
    expect((err as CniError).message).toBe(`failed to decode prevResult: ${msg}`);
  });

  it('IPAM output: errors are code 102 naming the plugin; an ips[].interface is dropped; no address is an error', () => {
    expect(
      parseIpamResult({ cniVersion: '1.0.0', ips: [{ address: '10.0.0.9/24', interface: 3 }] }, 'my-ipam'),
    ).toEqual({ interfaces: [], ips: [{ address: '10.0.0.9/24' }], routes: [], dns: {} });
    expect(() => parseIpamResult({ cniVersion: '1.0.0', ips: [] }, 'my-ipam')).toThrow(
      'ipam plugin "my-ipam" returned an unusable result: "result.ips" is empty; expected at least one address',
    );
    try {
      parseIpamResult({ ips: [{ address: 'x' }] }, 'my-ipam');
      throw new Error('expected a failure');
    } catch (e) {
      expect((e as CniError).code).toBe(CniCode.IPAM_FAILURE);
    }
  });
});
