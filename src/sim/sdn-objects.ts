/**
 * Load balancers and SDN routes: what kube-proxy's Windows proxier (DSR included) and hcsshim create through
 * HcnCreateLoadBalancer / HcnCreateSdnRoute, and their HNS v1 form, policy lists (`/policylists/`).
 *
 * Shapes, from microsoft/hcsshim:
 *  - hcn/hcnloadbalancer.go HostComputeLoadBalancer {ID, HostComputeEndpoints[], SourceVIP, FrontendVIPs[],
 *    PortMappings[{Protocol, InternalPort, ExternalPort, DistributionType, Flags}], SchemaVersion, Flags}, flags
 *    1 = EnableDirectServerReturn, 2 = IPv6; port-mapping flags ILB 1, LocalRoutedVIP 2, UseMux 4, PreserveDIP 8;
 *    distribution 0..2. Update sends the whole document again through HcnModifyLoadBalancer (updateLoadBalancer).
 *  - hcn/hcnroute.go HostComputeRoute {ID, HostComputeEndpoints[], Setting[{DestinationPrefix, NextHop, NeedEncap}],
 *    SchemaVersion}; "HCNRoute doesn't implement modify functionality" (AddEndpoint/RemoveEndpoint delete and
 *    re-create), so HcnModifySdnRoute answers E_NOTIMPL, the code hcsshim names HCN_E_NOTIMPL (hcn/hcnerrors.go).
 *  - internal/hns/hnspolicylist.go PolicyList {ID, References["/endpoints/<id>"], Policies[]} with ELB
 *    {Type "ELB", Protocol, InternalPort, ExternalPort, SourceVIP, VIPs[], ILB, IsDSR} or ROUTE {Type "ROUTE",
 *    DestinationPrefix, NextHop, NeedEncap} policies (internal/hns/hnspolicy.go); created by POST, removed by
 *    DELETE, changed by delete + create (AddEndpoint).
 *
 * Validation, as far as sources say: DSR only where HNS has it (hcsshim hcn/hcnsupport.go DSRVersion; the same gate
 * as OutBoundNAT Destinations in version-gates.ts); the codes below are HNS's own (MicrosoftDocs/Virtualization-
 * Documentation virtualization/api/hcn/Reference/HCNHResult.md); which check answers which code is our assumption:
 * an endpoint that does not exist HCN_E_ENDPOINT_NOT_FOUND, a port mapping without internal port
 * HCN_E_INVALID_INTERNAL_PORT ("The internal port must exist and cannot be zero."), a bad prefix
 * HCN_E_INVALID_PREFIX, a bad address HCN_E_INVALID_IP, an unknown v1 policy type HCN_E_INVALID_POLICY_TYPE,
 * anything else malformed HCN_E_INVALID_POLICY. An unknown id is ERROR_NOT_FOUND, as for namespaces. Whether a v1
 * policy list and an HCN load balancer are one HNS object is not public: they are kept apart. Endpoints a load
 * balancer names are not checked again when they go (not public either); an HNS restart drops all of them, with the
 * endpoints they name (our assumption).
 */
import { formatVersion, supports } from '../hns/features';
import { HR } from '../hns/hresults';
import type { SimHost } from './control-types';
import { guidKey, parseGuid, type ApiFlavour } from './guid';
import { isObj, schemaVersionOf, type Obj } from './json-doc';
import { parseIp } from '../net/addr';
import { parsePrefix } from './prefix';
import { fail } from './sim-error';

const HCN_E_INVALID_INTERNAL_PORT = 0x803b002d;
const LB_FLAG_DSR = 1;

export interface LoadBalancerObj {
  id: string;
  createdBy: ApiFlavour;
  endpoints: string[];
  sourceVip?: string;
  frontendVips: string[];
  portMappings: Array<{
    protocol: number;
    internalPort: number;
    externalPort: number;
    distributionType: number;
    flags: number;
  }>;
  flags: number;
  schemaVersion: { major: number; minor: number };
}

export interface RouteObj {
  id: string;
  endpoints: string[];
  settings: Array<{ destinationPrefix: string; nextHop: string; needEncap: boolean }>;
  schemaVersion: { major: number; minor: number };
}

export interface PolicyListObj {
  id: string;
  references: string[];
  policies: Obj[];
}

type Host = Pick<SimHost, 'version'>;
type EndpointLookup = (id: string) => { id: string };

const uint = (v: unknown, max: number, what: string, hr: number = HR.INVALID_POLICY): number => {
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) return fail(hr, `${what}: ${String(v)}`);
  return v;
};

const ip = (v: unknown, what: string): string => {
  if (typeof v !== 'string' || parseIp(v) === undefined) return fail(HR.INVALID_IP, `${what}: ${JSON.stringify(v)}`);
  return v;
};

function strings(v: unknown, what: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    return fail(HR.INVALID_POLICY, `${what} is not a list`);
  return v as string[];
}

function endpointRefs(v: unknown, lookup: EndpointLookup): string[] {
  return strings(v, 'HostComputeEndpoints').map((id) => lookup(parseGuid(id) ?? id).id);
}

export class SdnObjects {
  readonly loadBalancers = new Map<string, LoadBalancerObj>();
  readonly routes = new Map<string, RouteObj>();
  readonly policyLists = new Map<string, PolicyListObj>();

  constructor(
    private readonly host: () => Host,
    private readonly endpoint: EndpointLookup,
  ) {}

  // ---- load balancers (HCN) ------------------------------------------------------------------------------

  private parseLoadBalancer(id: string, doc: Obj, api: ApiFlavour): LoadBalancerObj {
    const flags = uint(doc.Flags, 0xffffffff, 'Flags');
    const version = this.host().version;
    if ((flags & LB_FLAG_DSR) !== 0 && !supports(version, 'dsr'))
      fail(HR.INVALID_POLICY, `EnableDirectServerReturn on HNS ${formatVersion(version)}`);
    const raw = doc.PortMappings ?? [];
    if (!Array.isArray(raw) || raw.some((m) => !isObj(m))) return fail(HR.INVALID_POLICY, 'PortMappings');
    const portMappings = (raw as Obj[]).map((m) => ({
      protocol: uint(m.Protocol, 255, 'Protocol'),
      internalPort: uint(m.InternalPort, 65535, 'InternalPort'),
      externalPort: uint(m.ExternalPort, 65535, 'ExternalPort'),
      distributionType: uint(m.DistributionType, 2, 'DistributionType'),
      flags: uint(m.Flags, 0xffffffff, 'port mapping Flags'),
    }));
    for (const m of portMappings)
      if (m.internalPort === 0) fail(HCN_E_INVALID_INTERNAL_PORT, 'a port mapping without InternalPort');
    return {
      id,
      createdBy: api,
      endpoints: endpointRefs(doc.HostComputeEndpoints, this.endpoint),
      sourceVip: doc.SourceVIP === undefined || doc.SourceVIP === '' ? undefined : ip(doc.SourceVIP, 'SourceVIP'),
      frontendVips: strings(doc.FrontendVIPs, 'FrontendVIPs').map((v) => ip(v, 'FrontendVIPs')),
      portMappings,
      flags,
      schemaVersion: schemaVersionOf(doc) ?? { major: 2, minor: 0 },
    };
  }

  createLoadBalancer(id: string, doc: Obj): LoadBalancerObj {
    if (this.loadBalancers.has(guidKey(id))) fail(HR.ERROR_ALREADY_EXISTS, `load balancer ${id}`);
    const lb = this.parseLoadBalancer(id, doc, 'v2');
    this.loadBalancers.set(guidKey(id), lb);
    return lb;
  }

  loadBalancer(id: string): LoadBalancerObj {
    return this.loadBalancers.get(guidKey(id)) ?? fail(HR.ERROR_NOT_FOUND, `load balancer ${id}`);
  }

  /** hcsshim updateLoadBalancer sends the whole load balancer again: it replaces the old one, id kept. */
  modifyLoadBalancer(id: string, doc: Obj): LoadBalancerObj {
    const old = this.loadBalancer(id);
    const lb = this.parseLoadBalancer(old.id, doc, old.createdBy);
    this.loadBalancers.set(guidKey(id), lb);
    return lb;
  }

  deleteLoadBalancer(id: string): void {
    this.loadBalancer(id);
    this.loadBalancers.delete(guidKey(id));
  }

  // ---- SDN routes (HCN) ----------------------------------------------------------------------------------

  createRoute(id: string, doc: Obj): RouteObj {
    if (this.routes.has(guidKey(id))) fail(HR.ERROR_ALREADY_EXISTS, `route ${id}`);
    const raw = doc.Setting ?? [];
    if (!Array.isArray(raw) || raw.some((s) => !isObj(s))) return fail(HR.INVALID_POLICY, 'Setting');
    const settings = (raw as Obj[]).map((s) => {
      if (!parsePrefix(s.DestinationPrefix))
        fail(HR.INVALID_PREFIX, `DestinationPrefix ${String(s.DestinationPrefix)}`);
      if (s.NeedEncap !== undefined && typeof s.NeedEncap !== 'boolean') fail(HR.INVALID_POLICY, 'NeedEncap');
      return {
        destinationPrefix: s.DestinationPrefix as string,
        nextHop: s.NextHop === undefined || s.NextHop === '' ? '' : ip(s.NextHop, 'NextHop'),
        needEncap: s.NeedEncap === true,
      };
    });
    const route: RouteObj = {
      id,
      endpoints: endpointRefs(doc.HostComputeEndpoints, this.endpoint),
      settings,
      schemaVersion: schemaVersionOf(doc) ?? { major: 2, minor: 0 },
    };
    this.routes.set(guidKey(id), route);
    return route;
  }

  route(id: string): RouteObj {
    return this.routes.get(guidKey(id)) ?? fail(HR.ERROR_NOT_FOUND, `route ${id}`);
  }

  deleteRoute(id: string): void {
    this.route(id);
    this.routes.delete(guidKey(id));
  }

  // ---- v1 policy lists -----------------------------------------------------------------------------------

  createPolicyList(id: string, doc: Obj): PolicyListObj {
    const references = strings(doc.References, 'References');
    for (const r of references) {
      const m = /^\/endpoints\/([^/]+)$/i.exec(r);
      if (!m) fail(HR.INVALID_POLICY, `reference ${r}`);
      this.endpoint(parseGuid(m![1]) ?? m![1]!);
    }
    const policies = doc.Policies ?? [];
    if (!Array.isArray(policies) || policies.some((p) => !isObj(p))) return fail(HR.INVALID_POLICY, 'Policies');
    for (const p of policies as Obj[]) {
      if (p.Type === 'ELB') {
        uint(p.Protocol, 255, 'Protocol');
        uint(p.ExternalPort, 65535, 'ExternalPort');
        if (uint(p.InternalPort, 65535, 'InternalPort') === 0)
          fail(HCN_E_INVALID_INTERNAL_PORT, 'an ELB policy without InternalPort');
        if (p.SourceVIP !== undefined && p.SourceVIP !== '') ip(p.SourceVIP, 'SourceVIP');
        for (const v of strings(p.VIPs, 'VIPs')) ip(v, 'VIPs');
        const version = this.host().version;
        if (p.IsDSR === true && !supports(version, 'dsr'))
          fail(HR.INVALID_POLICY, `IsDSR on HNS ${formatVersion(version)}`);
      } else if (p.Type === 'ROUTE') {
        if (!parsePrefix(p.DestinationPrefix))
          fail(HR.INVALID_PREFIX, `DestinationPrefix ${String(p.DestinationPrefix)}`);
        if (p.NextHop !== undefined && p.NextHop !== '') ip(p.NextHop, 'NextHop');
      } else {
        fail(HR.INVALID_POLICY_TYPE, `policy list policy ${JSON.stringify(p.Type)}`);
      }
    }
    const list: PolicyListObj = { id, references, policies: policies as Obj[] };
    this.policyLists.set(guidKey(id), list);
    return list;
  }

  policyList(id: string): PolicyListObj {
    return this.policyLists.get(guidKey(id)) ?? fail(HR.ERROR_NOT_FOUND, `policy list ${id}`);
  }

  /** hcsshim's PolicyList.Delete reads the deleted list back from the answer (internal/hns/hnspolicylist.go). */
  deletePolicyList(id: string): PolicyListObj {
    const list = this.policyList(id);
    this.policyLists.delete(guidKey(id));
    return list;
  }

  clear(): void {
    this.loadBalancers.clear();
    this.routes.clear();
    this.policyLists.clear();
  }
}

// ---- views ---------------------------------------------------------------------------------------------------

const omit = (o: Obj): Obj => {
  for (const [k, v] of Object.entries(o))
    if (v === undefined || v === 0 || v === '' || (Array.isArray(v) && v.length === 0)) delete o[k];
  return o;
};

/** The v2 view: hcsshim's HostComputeLoadBalancer field names, zeros and empty lists omitted (its omitempty tags). */
export function loadBalancerV2(lb: LoadBalancerObj): Obj {
  return omit({
    ID: lb.id,
    HostComputeEndpoints: lb.endpoints,
    SourceVIP: lb.sourceVip,
    FrontendVIPs: lb.frontendVips,
    PortMappings: lb.portMappings.map((m) =>
      omit({
        Protocol: m.protocol,
        InternalPort: m.internalPort,
        ExternalPort: m.externalPort,
        DistributionType: m.distributionType,
        Flags: m.flags,
      }),
    ),
    Flags: lb.flags,
    SchemaVersion: { Major: lb.schemaVersion.major, Minor: lb.schemaVersion.minor },
  });
}

export function routeV2(r: RouteObj): Obj {
  return omit({
    ID: r.id,
    HostComputeEndpoints: r.endpoints,
    Setting: r.settings.map((s) =>
      omit({ DestinationPrefix: s.destinationPrefix, NextHop: s.nextHop, NeedEncap: s.needEncap || undefined }),
    ),
    SchemaVersion: { Major: r.schemaVersion.major, Minor: r.schemaVersion.minor },
  });
}

export function policyListV1(p: PolicyListObj): Obj {
  return { ID: p.id, References: p.references, Policies: p.policies };
}
