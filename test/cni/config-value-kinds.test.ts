/**
 * Every free-text value the configuration (or the runtime's runtimeConfig, or IPAM's result) carries into an HNS body
 * is read by its kind: DNS search domains and the DNS domain as RFC 1123 names, nameservers as IP addresses, resolver
 * options as "name[:value]", the host adapter's name as HNS name text. A wrong one is error 7 naming the key (IPAM's:
 * its own code, naming the result's key), before HNS sees anything. HNS v1 joins the search list with "," into one
 * DNSSuffix, so "corp.example,evil.example" would otherwise be two suffixes.
 */
import { parseIpamResult, parsePrevResult } from '../../src/cni/result';
import { cniFailure as failure, parseAddConf as parse } from '../helpers/net-conf';

const BIG = 'a'.repeat(60000);
const LABEL_64 = 'a'.repeat(64);
const NAME_254 = `${'a'.repeat(62)}.`.repeat(4) + 'ab'; // 254 characters, every label ≤ 63

/** Where each value goes: the key as it is spelled in the configuration, and how to build a configuration with it. */
const PLACES: Array<{ key: string; conf: (v: unknown) => Record<string, unknown> }> = [
  { key: 'dns.search[0]', conf: (v) => ({ dns: { search: [v] } }) },
  { key: 'dns.domain', conf: (v) => ({ dns: { domain: v } }) },
  { key: 'runtimeConfig.dns.searches[0]', conf: (v) => ({ runtimeConfig: { dns: { searches: [v] } } }) },
];

describe('DNS domain names (search lists, domain)', () => {
  const good = ['svc.cluster.local', 'CORP.Example.com', 'cluster.local.', '1-2.example', 'a', NAME_254.slice(1)];
  const bad: Array<[string, string, RegExp]> = [
    [
      'a comma (HNS v1 would split it)',
      'corp.example,evil.example',
      /label "corp.example,evil.example"|label "example,evil"/,
    ],
    ['a blank', 'with space.example', /label "with space"/],
    ['a tab and a control character', 'with\tctl\u0001.example', /label/],
    ['a semicolon', 'a;b.example', /label "a;b"/],
    ['an underscore', 'under_score.example', /label "under_score"/],
    ['an empty label', 'a..example', /empty label/],
    ['a leading dot', '.example', /empty label/],
    ['a hyphen at a label end', 'a-.example', /label "a-"/],
    ['a 64-character label', `${LABEL_64}.example`, /label/],
    ['254 characters', NAME_254, /254 characters long \(at most 253\)/],
    ['60 000 characters', `${BIG}.example`, /60008 characters long/],
    ['the empty name', '.', /it is empty/],
    ['a NUL', 'a\u0000.example', /label/],
    ['non-ASCII', 'bücher.example', /label "bücher"/],
  ];
  it.each(PLACES)('$key: every RFC 1123 name is taken as it is', ({ conf }) => {
    for (const v of good) {
      const c = parse(conf(v));
      expect([v, c.dns.search?.[0] ?? c.dns.domain ?? c.runtimeDns?.searches?.[0]]).toEqual([v, v]);
    }
  });
  describe.each(PLACES)('$key', ({ key, conf }) => {
    it.each(bad)('%s is error 7 naming the key', (_what, v, why) => {
      const f = failure(() => parse(conf(v)));
      expect(f.code).toBe(7);
      expect(f.msg).toContain(`"${key}" must be a DNS domain name (RFC 1123`);
      expect(f.msg).toMatch(why);
      // The message stays short whatever the value's size.
      expect(f.msg.length).toBeLessThan(600);
    });
    it('a value that is not a string is error 7 naming the key', () => {
      expect(failure(() => parse(conf(5)))).toEqual({ code: 7, msg: expect.stringContaining(`"${key}" must be`) });
    });
  });
  it('"dns.domain": "" is Go\'s zero value, not set', () => {
    expect(parse({ dns: { domain: '' } }).dns.domain).toBeUndefined();
  });
  it('a search list: at most 32 names and 2048 characters in all', () => {
    // Names of about `len` characters, in labels of at most 60.
    const names = (n: number, len = 10) =>
      Array.from({ length: n }, (_, i) => `${'a'.repeat(len - 3).replace(/(.{60})/g, '$1.')}${i % 10}.x`);
    expect(parse({ dns: { search: names(32) } }).dns.search).toHaveLength(32);
    expect(failure(() => parse({ dns: { search: names(33) } }))).toEqual({
      code: 7,
      msg: 'invalid network configuration: "dns.search" must have at most 32 entries, got 33',
    });
    // 20 names of about 110 characters: more than 2048 characters joined by blanks.
    const long = names(20, 110);
    expect(long.join(' ').length).toBeGreaterThan(2048);
    expect(failure(() => parse({ runtimeConfig: { dns: { searches: long } } }))).toEqual({
      code: 7,
      msg: `invalid network configuration: "runtimeConfig.dns.searches" must be at most 2048 characters in all (joined by blanks), got ${long.join(' ').length}`,
    });
  });
});

describe('nameservers and resolver options', () => {
  it.each([
    ['dns.nameservers[0]', (v: unknown) => ({ dns: { nameservers: [v] } })],
    ['runtimeConfig.dns.servers[0]', (v: unknown) => ({ runtimeConfig: { dns: { servers: [v] } } })],
  ])('%s: IP addresses only', (key, conf) => {
    expect(parse(conf('fd00::10')).dns.nameservers ?? parse(conf('fd00::10')).runtimeDns?.servers).toEqual([
      'fd00::10',
    ]);
    for (const v of ['10.0.0.10,10.0.0.11', '10.0.0.10 ', 'dns.example', '10.0.0.256', ''])
      expect([v, failure(() => parse(conf(v)))]).toEqual([
        v,
        { code: 7, msg: expect.stringContaining(`"${key}" must be an IP address`) },
      ]);
  });
  it.each([
    ['dns.options[0]', (v: unknown) => ({ dns: { options: [v] } })],
    ['runtimeConfig.dns.options[0]', (v: unknown) => ({ runtimeConfig: { dns: { options: [v] } } })],
  ])('%s: "name" or "name:value", no blanks, "," or control characters', (key, conf) => {
    for (const v of ['ndots:5', 'rotate', 'timeout:2', 'single-request-reopen', 'use-vc', 'x:a=b/c'])
      expect(parse(conf(v))).toBeDefined();
    for (const v of ['ndots: 5', 'ndots:5,rotate', 'nd\u0001ots', ':5', '', 'a'.repeat(256), 'x:\u00e9'])
      expect([v.slice(0, 20), failure(() => parse(conf(v)))]).toEqual([
        v.slice(0, 20),
        { code: 7, msg: expect.stringContaining(`"${key}" must be a resolver option`) },
      ]);
  });
  it('at most 32 of each', () => {
    const servers = Array.from({ length: 33 }, (_, i) => `10.0.0.${i + 1}`);
    expect(failure(() => parse({ dns: { nameservers: servers } }))).toEqual({
      code: 7,
      msg: 'invalid network configuration: "dns.nameservers" must have at most 32 entries, got 33',
    });
    expect(failure(() => parse({ runtimeConfig: { dns: { options: Array(33).fill('rotate') } } }))).toEqual({
      code: 7,
      msg: 'invalid network configuration: "runtimeConfig.dns.options" must have at most 32 entries, got 33',
    });
  });
});

describe('the host adapter name (NetAdapterName / NetworkAdapterName)', () => {
  it.each(['adapterName', 'master'])('%s: HNS name text, as networkName', (key) => {
    for (const v of ['Ethernet', 'Ethernet 2', 'vEthernet (Ethernet)', 'Intel/Port 1'])
      expect(parse({ [key]: v }).adapterName).toBe(v);
    for (const v of ['Ether\u0000net', 'Ether\nnet', ' Ethernet', 'Ethernet ', 'a'.repeat(257), '\ud800x'])
      expect([JSON.stringify(v).slice(0, 20), failure(() => parse({ [key]: v }))]).toEqual([
        JSON.stringify(v).slice(0, 20),
        { code: 7, msg: expect.stringContaining(`"${key}" must be an adapter name`) },
      ]);
  });
});

describe("IPAM's DNS goes to HNS too; a prevResult's only back to the runtime", () => {
  const result = (dns: Record<string, unknown>) => ({ cniVersion: '1.0.0', ips: [{ address: '10.0.0.5/24' }], dns });
  it.each([
    ['search', { search: ['corp.example,evil.example'] }, 'a DNS domain name'],
    ['domain', { domain: 'with space' }, 'a DNS domain name'],
    ['nameservers', { nameservers: ['10.0.0.1,10.0.0.2'] }, 'an IP address'],
    ['options', { options: ['ndots:5 rotate'] }, 'a resolver option'],
  ])("IPAM's %s is checked by kind (its own code, naming the result's key)", (key, dns, what) => {
    const f = failure(() => parseIpamResult(result(dns), 'host-local'));
    expect(f.code).toBe(102);
    expect(f.msg).toContain(`"result.dns.${key}`);
    expect(f.msg).toContain(`must be ${what}`);
  });
  it('a prevResult is read as it is (win-bridge results say search [""])', () => {
    expect(parsePrevResult(result({ search: [''] }), 'prevResult').dns).toEqual({ search: [''] });
  });
});
