/**
 * Results on the wire: rendering a version-neutral CniResult in the shape a spec version defines, and parsing a
 * result of any supported version (prevResult from the runtime, the output of delegated IPAM) back into neutral form.
 *
 * Shapes by version (containernetworking/cni SPEC.md at each version's tag):
 * - 0.1.0 / 0.2.0: no interfaces; `ip4` and `ip6` objects {ip, gateway, routes} holding the first address of each
 *   family and the routes of that family; `dns`. Converted as containernetworking/cni pkg/types/040/types.go
 *   (convertTo02x) does: later addresses of a family are dropped, a route goes with its destination's family.
 * - 0.3.0 – 0.4.0: ips[].version ("4"/"6") is REQUIRED (libcni 1.1.2 turns a missing one into "", which breaks).
 * - 1.0.0: ips[].version is gone.
 * - 1.1.0: interfaces gain mtu/socketPath/pciID, routes gain mtu/advmss/priority/table/scope.
 * Empty lists, empty strings and an empty dns are omitted, as Go's `omitempty` does for the reference types.
 */
import { CniCode, CniError } from './cni-error';
import { Fields, isPlainObject } from './fields';
import { ipFamily, isIpAddress, isIpCidr, parseMac, formatMacColon } from '../net/addr';
import type { CniResult, CniVersion, Dns, Interface, IpConfig, IpamResult, Route } from './types';
import { versionAtLeast } from './version';

/** renderResult: the JSON object for `result` in `version`'s shape, with `cniVersion` set. */
export function renderResult(result: CniResult, version: CniVersion): Record<string, unknown> {
  if (!versionAtLeast(version, '0.3.0')) return renderLegacy(result, version);
  const v11 = versionAtLeast(version, '1.1.0');
  const out: Record<string, unknown> = { cniVersion: version };
  if (result.interfaces.length > 0) out.interfaces = result.interfaces.map((i) => renderInterface(i, v11));
  if (result.ips.length > 0) out.ips = result.ips.map((ip) => renderIp(ip, !versionAtLeast(version, '1.0.0')));
  if (result.routes.length > 0) out.routes = result.routes.map((r) => renderRoute(r, v11));
  const dns = renderDns(result.dns);
  if (dns) out.dns = dns;
  return out;
}

/** An interface; mtu, socketPath and pciID exist from 1.1.0. */
function renderInterface(i: Interface, v11: boolean): Record<string, unknown> {
  const o: Record<string, unknown> = { name: i.name };
  if (i.mac) o.mac = i.mac;
  if (i.sandbox) o.sandbox = i.sandbox;
  if (v11) {
    if (i.mtu !== undefined && i.mtu > 0) o.mtu = i.mtu;
    if (i.socketPath) o.socketPath = i.socketPath;
    if (i.pciID) o.pciID = i.pciID;
  }
  return o;
}

/** An address; before 1.0.0 each carries its family as `version` ("4" or "6"). */
function renderIp(ip: IpConfig, withIpVersion: boolean): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  if (withIpVersion) {
    const family = ipFamily(ip.address);
    if (family === undefined) throw new TypeError(`result ips[].address ${JSON.stringify(ip.address)} is not a CIDR`);
    o.version = family;
  }
  o.address = ip.address;
  if (ip.gateway) o.gateway = ip.gateway;
  if (ip.interface !== undefined) o.interface = ip.interface;
  return o;
}

/** A route; mtu, advmss, priority, table and scope exist from 1.1.0. */
function renderRoute(r: Route, v11: boolean): Record<string, unknown> {
  const o: Record<string, unknown> = { dst: r.dst };
  if (r.gw) o.gw = r.gw;
  if (v11) {
    for (const k of ['mtu', 'advmss', 'priority', 'table', 'scope'] as const) {
      if (r[k] !== undefined) o[k] = r[k];
    }
  }
  return o;
}

/**
 * renderLegacy: the 0.1.0/0.2.0 shape. An IPv6 address becomes `ip6` exactly as an IPv4 one becomes `ip4`, so a
 * dual-stack result keeps both families.
 */
export function renderLegacy(result: CniResult, version: CniVersion): Record<string, unknown> {
  const out: Record<string, unknown> = { cniVersion: version };
  const byFamily: Partial<
    Record<'4' | '6', { ip: string; gateway?: string; routes?: Array<{ dst: string; gw?: string }> }>
  > = {};
  for (const ip of result.ips) {
    const family = ipFamily(ip.address);
    if (family === undefined) throw new TypeError(`result ips[].address ${JSON.stringify(ip.address)} is not a CIDR`);
    if (byFamily[family]) continue;
    byFamily[family] = ip.gateway ? { ip: ip.address, gateway: ip.gateway } : { ip: ip.address };
  }
  for (const r of result.routes) {
    const target = byFamily[ipFamily(r.dst) ?? '4'];
    if (!target) continue;
    (target.routes ??= []).push(r.gw ? { dst: r.dst, gw: r.gw } : { dst: r.dst });
  }
  if (byFamily['4']) out.ip4 = byFamily['4'];
  if (byFamily['6']) out.ip6 = byFamily['6'];
  const dns = renderDns(result.dns);
  if (dns) out.dns = dns;
  return out;
}

/** renderDns: the non-empty parts of a Dns, or undefined when nothing is set. */
export function renderDns(dns: Dns): Dns | undefined {
  const o: Dns = {};
  if (dns.nameservers?.length) o.nameservers = [...dns.nameservers];
  if (dns.domain) o.domain = dns.domain;
  if (dns.search?.length) o.search = [...dns.search];
  if (dns.options?.length) o.options = [...dns.options];
  return Object.keys(o).length > 0 ? o : undefined;
}

/**
 * parseResult: a result object of any supported version (0.1.0 – 1.1.0 shapes) into neutral form. `fail` turns a
 * problem sentence into the caller's error (code 6 for prevResult, 102 for IPAM output). Keys match
 * case-insensitively, like the Go types that produce these results; unknown keys are ignored.
 */
export function parseResult(
  raw: unknown,
  path: string,
  fail: (sentence: string) => CniError,
  options: { dropInterfaceIndex?: boolean; dnsByKind?: boolean } = {},
): CniResult {
  if (!isPlainObject(raw))
    throw fail(
      `"${path}" must be an object, got ${raw === null ? 'null' : Array.isArray(raw) ? 'a list' : typeof raw}`,
    );
  const f = new Fields(raw, path, { strict: false, fail });

  // 0.1/0.2 results: an IPAM asked at those versions (host-local answers a 0.2.0 conflist so), or a 0.2.0 prevResult.
  if (f.has('ip4') || f.has('ip6')) {
    if (f.has('ips') || f.has('interfaces'))
      throw fail(`"${path}" mixes the 0.2.0 shape (ip4/ip6) with ips/interfaces`);
    return { ...parseLegacy(f), dns: parseDnsField(f, options.dnsByKind === true) };
  }

  const interfaces = listOf(f, 'interfaces', (e) => parseInterface(e));
  const ips = listOf(f, 'ips', (e) => parseIpConfig(e, interfaces.length, options.dropInterfaceIndex === true));
  const routes = listOf(f, 'routes', (e) => parseRoute(e));
  return { interfaces, ips, routes, dns: parseDnsField(f, options.dnsByKind === true) };
}

/** parseLegacy: ip4/ip6 {ip, gateway, routes} → ips and routes (containernetworking/cni pkg/types/040 convertFrom02x). */
function parseLegacy(f: Fields): Pick<CniResult, 'interfaces' | 'ips' | 'routes'> {
  const ips: IpConfig[] = [];
  const routes: Route[] = [];
  for (const [key, family] of [
    ['ip4', '4'],
    ['ip6', '6'],
  ] as const) {
    const c = f.child(key, false);
    if (!c) continue;
    const address = c.get('ip');
    if (typeof address !== 'string' || !isIpCidr(address) || ipFamily(address) !== family) {
      throw c.invalid(c.pathOf('ip'), `an IPv${family} address in CIDR form`, address);
    }
    const ip: IpConfig = { address };
    const gateway = c.string('gateway');
    if (gateway) {
      if (!isIpAddress(gateway) || ipFamily(gateway) !== family)
        throw c.invalid(c.pathOf('gateway'), `an IPv${family} address`, gateway);
      ip.gateway = gateway;
    }
    ips.push(ip);
    routes.push(...listOf(c, 'routes', (e) => parseRoute(e)));
  }
  return { interfaces: [], ips, routes };
}

/**
 * `byKind`: IPAM's DNS goes into the endpoint HNS creates, so it is checked by kind as the configuration's is
 * (fields.ts domainNameList and the rest). A prevResult's is only passed back and is read as it is: win-bridge's
 * results say `search: [""]` when it has none (containernetworking/plugins pkg/hns/endpoint_windows.go
 * ConstructResult splits an empty DNSSuffix on ","), and refusing that would fail its pods' DELs.
 */
function parseDnsField(f: Fields, byKind: boolean): Dns {
  const dnsF = f.child('dns', false);
  const dns: Dns = {};
  if (dnsF) {
    const nameservers = byKind
      ? dnsF.ipAddressList('nameservers')
      : dnsF.stringArray('nameservers', 'an IP address', (s, p) => {
          if (!isIpAddress(s)) throw dnsF.invalid(p, 'an IP address', s);
        });
    const domain = byKind ? dnsF.domainName('domain') : dnsF.string('domain');
    const search = byKind ? dnsF.domainNameList('search') : dnsF.stringArray('search', 'a domain');
    const options = byKind ? dnsF.resolverOptionList('options') : dnsF.stringArray('options', 'a resolver option');
    if (nameservers) dns.nameservers = nameservers;
    if (domain) dns.domain = domain;
    if (search) dns.search = search;
    if (options) dns.options = options;
  }
  return dns;
}

/** parseIpamResult: parseResult plus IPAM-specific expectations (at least one address). */
export function parseIpamResult(raw: unknown, type: string): IpamResult {
  const fail = (sentence: string) =>
    new CniError(CniCode.IPAM_FAILURE, `ipam plugin ${JSON.stringify(type)} returned an unusable result: ${sentence}`);
  // The spec's abbreviated IPAM result has no ips[].interface; one that sends it anyway indexes its own interface
  // list, which means nothing for the result the plugin builds, so it is dropped rather than refused.
  const r = parseResult(raw, 'result', fail, { dropInterfaceIndex: true, dnsByKind: true });
  if (r.ips.length === 0) throw fail('"result.ips" is empty; expected at least one address');
  return r;
}

/** parsePrevResult: parseResult for the runtime's `prevResult` (code 6, decode failure). */
export function parsePrevResult(raw: unknown, path: string): CniResult {
  return parseResult(
    raw,
    path,
    (sentence) => new CniError(CniCode.DECODE_FAILURE, `failed to decode prevResult: ${sentence}`),
  );
}

function listOf<T>(f: Fields, name: string, parse: (entry: Fields) => T): T[] {
  const list = f.array(name);
  if (list === undefined) return [];
  return list.map((e, i) => {
    const p = `${f.pathOf(name)}[${i}]`;
    if (!isPlainObject(e)) throw f.invalid(p, 'an object', e);
    return parse(f.nested(e, p, false));
  });
}

function parseInterface(f: Fields): Interface {
  const name = f.string('name');
  if (name === undefined) throw f.invalid(f.pathOf('name'), 'a string', undefined);
  const out: Interface = { name };
  const mac = f.string('mac');
  if (mac) {
    const bytes = parseMac(mac);
    if (!bytes) throw f.invalid(f.pathOf('mac'), 'a MAC address', mac);
    out.mac = formatMacColon(bytes);
  }
  const sandbox = f.string('sandbox');
  if (sandbox) out.sandbox = sandbox;
  const mtu = f.integer('mtu', 0, 65535);
  if (mtu) out.mtu = mtu;
  const socketPath = f.string('socketPath');
  if (socketPath) out.socketPath = socketPath;
  const pciID = f.string('pciID');
  if (pciID) out.pciID = pciID;
  return out;
}

function parseIpConfig(f: Fields, interfaceCount: number, dropInterfaceIndex: boolean): IpConfig {
  const address = f.get('address');
  if (typeof address !== 'string' || !isIpCidr(address))
    throw f.invalid(f.pathOf('address'), 'an IP address in CIDR form', address);
  const out: IpConfig = { address };
  const version = f.get('version');
  if (version !== undefined && version !== '' && version !== ipFamily(address)) {
    throw f.invalid(f.pathOf('version'), `"${ipFamily(address)}" for ${address}`, version);
  }
  const gateway = f.string('gateway');
  if (gateway) {
    if (!isIpAddress(gateway) || ipFamily(gateway) !== ipFamily(address)) {
      throw f.invalid(f.pathOf('gateway'), `an IPv${ipFamily(address)} address`, gateway);
    }
    out.gateway = gateway;
  }
  const idx = f.get('interface');
  if (idx !== undefined && !dropInterfaceIndex) {
    if (typeof idx !== 'number' || !Number.isInteger(idx) || idx < 0 || idx >= interfaceCount) {
      throw f.invalid(f.pathOf('interface'), `an index into interfaces (0 to ${interfaceCount - 1})`, idx);
    }
    out.interface = idx;
  }
  return out;
}

function parseRoute(f: Fields): Route {
  const dst = f.get('dst');
  if (typeof dst !== 'string' || !isIpCidr(dst)) throw f.invalid(f.pathOf('dst'), 'an IP prefix in CIDR form', dst);
  const out: Route = { dst };
  const gw = f.string('gw');
  if (gw) {
    if (!isIpAddress(gw)) throw f.invalid(f.pathOf('gw'), 'an IP address', gw);
    out.gw = gw;
  }
  const mtu = f.integer('mtu', 0, 65535);
  if (mtu !== undefined) out.mtu = mtu;
  const advmss = f.integer('advmss', 0, 65535);
  if (advmss !== undefined) out.advmss = advmss;
  const priority = f.integer('priority', 0, 2 ** 32 - 1);
  if (priority !== undefined) out.priority = priority;
  const table = f.integer('table', 0, 2 ** 32 - 1);
  if (table !== undefined) out.table = table;
  const scope = f.integer('scope', 0, 255);
  if (scope !== undefined) out.scope = scope;
  return out;
}
