/** Our IP syntax checks (no node:net: it costs start-up time) agree with node:net's on hand-picked and random inputs. */
import * as net from 'net';
import {
  canonicalIp,
  familyOf,
  formatIpv6,
  ipFamily,
  isIpAddress,
  isIpCidr,
  isIpv4,
  isIpv6,
  parseCidr,
  parseIpv4,
  parseIpv6,
} from '../../src/net/addr';

const CASES = [
  '::',
  '::1',
  '1::',
  'fe80::1%eth0',
  '2001:db8::8a2e:370:7334',
  '1:2:3:4:5:6:7:8',
  '1:2:3:4:5:6:7:8:9',
  '1::2::3',
  '::ffff:10.0.0.1',
  '1:2:3:4:5:6:10.0.0.1',
  '1:2:3:4:5:6:7:10.0.0.1',
  '12345::',
  'g::1',
  '10.0.0.1',
  '01.0.0.1',
  '256.0.0.1',
  '1.2.3',
  '0.0.0.0',
  '255.255.255.255',
  ':1',
  ':::',
  '1:::2',
  '::1:2:3:4:5:6:7',
  '1:2:3:4:5:6:7::',
  '::10.0.0.1',
  'fe80::1%',
  '',
  ' 10.0.0.1',
  '10.0.0.1 ',
  '1.2.3.4.5',
  '::ffff:1.2.3',
  'ABCD::EF01',
];

function random(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe('IP syntax', () => {
  it.each(CASES)('agrees with node:net on %j', (s) => {
    expect([isIpv4(s), isIpv6(s)]).toEqual([net.isIPv4(s), net.isIPv6(s)]);
  });

  it('agrees with node:net on 20 000 random strings over the address alphabet', () => {
    const r = random(42);
    const alphabet = '0123456789abcdefABCDEF:.%';
    const mismatches: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const len = 1 + Math.floor(r() * 20);
      let s = '';
      for (let j = 0; j < len; j++) s += alphabet[Math.floor(r() * alphabet.length)];
      if (isIpv4(s) !== net.isIPv4(s) || isIpv6(s) !== net.isIPv6(s)) mismatches.push(s);
    }
    expect(mismatches).toEqual([]);
  });
});

describe('IPv6 numbers and text (dual-stack arithmetic)', () => {
  it.each([
    ['::', '::'],
    ['::1', '::1'],
    ['FD00:0:0::0102', 'fd00::102'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:0db8:0000:0000:0000:ff00:0042:8329', '2001:db8::ff00:42:8329'],
    ['1:0:2:3:4:5:6:7', '1:0:2:3:4:5:6:7'],
    ['::ffff:10.0.0.1', '::ffff:a00:1'],
  ])('%s is %s in RFC 5952 form', (text, canonical) => {
    expect(canonicalIp(text)).toBe(canonical);
    expect(formatIpv6(parseIpv6(text)!)).toBe(canonical);
  });
  it('parseCidr gives network and last address per family', () => {
    expect(parseCidr('fd00:10::5/64')).toMatchObject({
      family: 6,
      prefix: 64,
      network: parseIpv6('fd00:10::'),
      last: parseIpv6('fd00:10::ffff:ffff:ffff:ffff'),
    });
    expect(parseCidr('10.1.2.5/24')).toMatchObject({
      family: 4,
      prefix: 24,
      network: BigInt(parseIpv4('10.1.2.0')!),
      last: BigInt(parseIpv4('10.1.2.255')!),
    });
    expect([
      parseCidr('fd00::/129'),
      parseCidr('10.0.0.0/33'),
      parseCidr('fd00::'),
      parseCidr('fe80::1%eth0/64'),
    ]).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe('the family of an address (one rule: familyOf; ipFamily spells it as the pre-1.0.0 `version`)', () => {
  it.each([
    ['10.0.0.1', 4],
    ['10.0.0.0/8', 4],
    ['fd00::1', 6],
    ['fd00::/64', 6],
    ['::ffff:10.0.0.1', 6],
    // Go's net.ParseIP and net.ParseCIDR, which CNI reads addresses with, refuse an IPv6 zone; HNS has no field for
    // one: a zoned address is no address of either family.
    ['fe80::1%eth0', undefined],
    ['fe80::1%eth0/64', undefined],
    ['10.0.0.256', undefined],
    ['', undefined],
  ] as const)('%j is family %p', (s, family) => {
    expect(familyOf(s)).toBe(family);
    expect(ipFamily(s)).toBe(family === undefined ? undefined : String(family));
  });

  it('a zoned IPv6 address is IPv6 syntax (as node:net says) but not an address or CIDR a CNI result may carry', () => {
    expect(isIpv6('fe80::1%eth0')).toBe(true);
    expect([isIpAddress('fe80::1%eth0'), isIpCidr('fe80::1%eth0/64')]).toEqual([false, false]);
    expect([isIpAddress('fe80::1'), isIpCidr('fe80::1/64')]).toEqual([true, true]);
  });
});
