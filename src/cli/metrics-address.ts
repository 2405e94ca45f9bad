/**
 * The address of `hcn-cni serve --metrics HOST:PORT` (or HCN_CNI_METRICS). HOST is an IP address, `[v6]`, or
 * `localhost` (taken as 127.0.0.1, so the bound address never depends on name resolution); no names otherwise, so
 * what is exposed is exactly what the operator wrote. The metrics describe this node's pod activity (verbs, HNS
 * operations and errors, state directories), so an address other than loopback is refused unless the operator also
 * gives --metrics-allow-remote: a scraper on another machine (Prometheus in the cluster) needs the node's address,
 * and whoever else reaches that address reads the same.
 */
import { isIpv4, isIpv6 } from '../net/addr';

export interface MetricsAddress {
  host: string;
  port: number;
}

export function isLoopback(host: string): boolean {
  if (isIpv4(host)) return host.split('.')[0] === '127';
  return host === '::1' || /^(0{0,4}:){7}0{0,3}1$/.test(host) || /^::ffff:127\./i.test(host);
}

/** The address, or what is wrong with it (one line for the operator). */
export function parseMetricsAddress(text: string, allowRemote: boolean): MetricsAddress | string {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port <= 65535))
    return `--metrics needs HOST:PORT (e.g. 127.0.0.1:9464 or [::1]:9464), got ${JSON.stringify(text)}`;
  let host = m[1] ?? m[2]!;
  if (host.toLowerCase() === 'localhost') host = '127.0.0.1';
  if (m[1] !== undefined ? !isIpv6(host) : !isIpv4(host))
    return `--metrics needs an IP address (or localhost) as HOST, got ${JSON.stringify(m[1] ?? m[2])}`;
  if (!isLoopback(host) && !allowRemote)
    return `--metrics ${text}: ${host} is not a loopback address, and the metrics describe this node's pods and HNS; add --metrics-allow-remote if whoever reaches it may read them`;
  return { host, port };
}
