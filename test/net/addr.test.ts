/** Our IP syntax checks (no node:net: it costs start-up time) agree with node:net's on hand-picked and random inputs. */
import * as net from 'net';
import { isIpv4, isIpv6 } from '../../src/net/addr';

const CASES = [
  '::', '::1', '1::', 'fe80::1%eth0', '2001:db8::8a2e:370:7334', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9', '1::2::3',
  '::ffff:10.0.0.1', '1:2:3:4:5:6:10.0.0.1', '1:2:3:4:5:6:7:10.0.0.1', '12345::', 'g::1', '10.0.0.1', '01.0.0.1',
  '256.0.0.1', '1.2.3', '0.0.0.0', '255.255.255.255', ':1', ':::', '1:::2', '::1:2:3:4:5:6:7', '1:2:3:4:5:6:7::',
  '::10.0.0.1', 'fe80::1%', '', ' 10.0.0.1', '10.0.0.1 ', '1.2.3.4.5', '::ffff:1.2.3', 'ABCD::EF01',
];

function random(seed: number): () => number {
  let x = seed;
  return () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
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
