/**
 * `hcn-cni networks | endpoints | namespaces`: what HNS holds, through the API the configuration selects (v2 HCN
 * or v1 HNSCall), with the attachment each object of ours belongs to (decoded from its name).
 */
import type { EndpointInfo, HnsApi, NetworkInfo } from '../../hns/api';
import { sameId } from '../../hns/api';
import type { HnsV1Namespace, HostComputeNamespace } from '../../hns/schema';
import type { OpsContext } from './context';
import { dash, flagNames, list, ownerOfName, ownerText, table } from './format';

type Owner = ReturnType<typeof ownerOfName>;

export interface NetworkView extends NetworkInfo {
  flagNames: string[];
  owner: Owner | null;
}

export interface EndpointView extends EndpointInfo {
  networkName?: string;
  owner: Owner | null;
}

export interface NamespaceView {
  id: string;
  type?: string;
  /** HNS compartment / namespace number. */
  compartment?: number;
  resources: Array<{ type: string; id: string; name?: string; owner: Owner | null }>;
}

export function networkView(n: NetworkInfo, known?: Parameters<typeof ownerOfName>[1]): NetworkView {
  return { ...n, flagNames: flagNames(n.flags), owner: ownerOfName(n.name, known) ?? null };
}

export async function networks(ctx: OpsContext): Promise<number> {
  const { api } = await ctx.api();
  const known = ctx.knownOwners();
  const views = (await api.listNetworks()).map((n) => networkView(n, known));
  if (ctx.args.json) {
    ctx.json(views);
    return 0;
  }
  if (views.length === 0) {
    ctx.out('no HNS networks\n');
    return 0;
  }
  ctx.out(
    table(
      ['ID', 'NAME', 'TYPE', 'ADAPTER', 'SUBNETS', 'FLAGS', 'OWNER'],
      views.map((n) => [
        n.id,
        n.name,
        n.type,
        dash(n.adapterName),
        list(n.subnets.map((s) => (s.gateway ? `${s.prefix} via ${s.gateway}` : s.prefix))),
        n.flags === 0 ? '-' : `${n.flags} (${n.flagNames.join('|')})`,
        ownerText(n.owner ?? undefined),
      ]),
    ),
  );
  return 0;
}

export async function endpoints(ctx: OpsContext): Promise<number> {
  const { api } = await ctx.api();
  const [eps, nets] = await Promise.all([api.listEndpoints(), api.listNetworks()]);
  const known = ctx.knownOwners();
  const views: EndpointView[] = eps.map((e) => {
    const net = nets.find((n) => sameId(n.id, e.networkId));
    return { ...e, ...(net ? { networkName: net.name } : {}), owner: ownerOfName(e.name, known) ?? null };
  });
  if (ctx.args.json) {
    ctx.json(views);
    return 0;
  }
  if (views.length === 0) {
    ctx.out('no HNS endpoints\n');
    return 0;
  }
  ctx.out(
    table(
      ['ID', 'NAME', 'NETWORK', 'IPS', 'MAC', 'NAMESPACE', 'OWNER'],
      views.map((e) => [
        e.id,
        e.name,
        e.networkName ?? dash(e.networkId),
        list(e.ips.map((ip) => (ip.prefixLength !== undefined ? `${ip.address}/${ip.prefixLength}` : ip.address))),
        dash(e.mac),
        dash(e.namespaceId),
        ownerText(e.owner ?? undefined),
      ]),
    ),
  );
  return 0;
}

export async function namespaces(ctx: OpsContext): Promise<number> {
  const { api } = await ctx.api();
  const [raw, eps] = await Promise.all([listNamespaces(api), api.listEndpoints()]);
  const known = ctx.knownOwners();
  const views = raw.map((ns) => ({
    ...ns,
    resources: ns.resources.map((r) => {
      const ep = r.type.toLowerCase() === 'endpoint' ? eps.find((e) => sameId(e.id, r.id)) : undefined;
      return { ...r, ...(ep ? { name: ep.name } : {}), owner: (ep && ownerOfName(ep.name, known)) ?? null };
    }),
  }));
  if (ctx.args.json) {
    ctx.json(views);
    return 0;
  }
  if (views.length === 0) {
    ctx.out('no HNS namespaces\n');
    return 0;
  }
  ctx.out(
    table(
      ['ID', 'TYPE', 'COMPARTMENT', 'RESOURCES', 'OWNER'],
      views.map((ns) => [
        ns.id,
        dash(ns.type),
        dash(ns.compartment),
        list(ns.resources.map((r) => `${r.type.toLowerCase()} ${r.name ?? r.id}`)),
        list([...new Set(ns.resources.map((r) => (r.owner ? ownerText(r.owner) : undefined)))]),
      ]),
    ),
  );
  return 0;
}

/** Namespaces through HCN (v2), or HNSCall GET /namespaces/ (v1). */
async function listNamespaces(api: HnsApi): Promise<NamespaceView[]> {
  if (api.version === 2) {
    return (await api.hcn.listNamespaces()).map((ns: HostComputeNamespace) => ({
      id: String(ns.ID ?? ''),
      // HNS omits a zero-valued enum, and Host is zero.
      type: ns.Type ? String(ns.Type) : 'Host',
      ...(typeof ns.NamespaceId === 'number' ? { compartment: ns.NamespaceId } : {}),
      resources: (ns.Resources ?? []).map((r) => ({ type: String(r.Type), id: String(r.Data?.Id ?? ''), owner: null })),
    }));
  }
  const v1 = (await api.hcn.hnsCall<HnsV1Namespace[]>('GET', '/namespaces/')) ?? [];
  return v1.map((ns) => ({
    id: String(ns.ID ?? ''),
    ...(typeof ns.IsDefault === 'boolean' ? { type: ns.IsDefault ? 'HostDefault' : 'Host' } : {}),
    ...(typeof ns.CompartmentId === 'number' ? { compartment: ns.CompartmentId } : {}),
    resources: (ns.ResourceList ?? []).map((r) => {
      const res = (r ?? {}) as { Type?: unknown; Data?: { Id?: unknown } };
      return { type: String(res.Type ?? ''), id: String(res.Data?.Id ?? ''), owner: null };
    }),
  }));
}
