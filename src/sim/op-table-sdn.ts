/**
 * The operation table's part for load balancers and SDN routes (HcnXxxLoadBalancer, HcnXxxSdnRoute; their model and
 * sources: sdn-objects.ts). The same verbs and answers as the other HCN families in op-table.ts: Create and Open
 * answer the id, Query the v2 view (there is no v1 view of these through HCN: hcsshim only sends its v2 query,
 * hcn/hcnloadbalancer.go, hcn/hcnroute.go), Enumerate the ids whose view the filter matches.
 */
import { HR } from '../hns/hresults';
import { parseJsonDoc } from './json-doc';
import type { OpRequest } from './wire-types';
import { matchesFilter, parseQuery } from './query';
import { fail } from './sim-error';
import { loadBalancerV2, routeV2 } from './sdn-objects';
import type { Store } from './store';
import type { Plan } from './plan';

type Family = 'LoadBalancer' | 'SdnRoute';

interface FamilyOps {
  all(store: Store): Array<{ id: string }>;
  get(store: Store, id: string): { id: string };
  view(store: Store, id: string): Record<string, unknown>;
  create(store: Store, id: string, settings: string | null | undefined): void;
  modify(store: Store, id: string, settings: string | null | undefined): void;
  remove(store: Store, id: string): void;
}

const FAMILIES: Record<Family, FamilyOps> = {
  LoadBalancer: {
    all: (s) => [...s.sdn.loadBalancers.values()],
    get: (s, id) => s.sdn.loadBalancer(id),
    view: (s, id) => loadBalancerV2(s.sdn.loadBalancer(id)),
    create: (s, id, t) => void s.sdn.createLoadBalancer(id, parseJsonDoc(t, 'settings')),
    modify: (s, id, t) => {
      s.sdn.loadBalancer(id); // an unknown load balancer fails before its settings are read
      s.sdn.modifyLoadBalancer(id, parseJsonDoc(t, 'settings'));
    },
    remove: (s, id) => s.sdn.deleteLoadBalancer(id),
  },
  SdnRoute: {
    all: (s) => [...s.sdn.routes.values()],
    get: (s, id) => s.sdn.route(id),
    view: (s, id) => routeV2(s.sdn.route(id)),
    create: (s, id, t) => void s.sdn.createRoute(id, parseJsonDoc(t, 'settings')),
    // "HCNRoute doesn't implement modify functionality" (microsoft/hcsshim hcn/hcnroute.go AddEndpoint): HCN_E_NOTIMPL.
    modify: (s, id) => {
      s.sdn.route(id);
      fail(HR.E_NOTIMPL, 'SDN routes cannot be modified');
    },
    remove: (s, id) => s.sdn.deleteRoute(id),
  },
};

const OP = /^Hcn(Enumerate|Create|Open|Query|Modify|Delete)(LoadBalancer|SdnRoute)(s|Properties)?$/;

export function isSdnOp(op: string): boolean {
  return OP.test(op);
}

export function planSdnRequest(
  req: OpRequest,
  ids: { requireGuid(v: string | null | undefined, what: string): string; createId(req: OpRequest): string },
): Plan {
  const m = OP.exec(req.op)!;
  const [verb, family, suffix] = [m[1]!, m[2] as Family, m[3]];
  const want = verb === 'Enumerate' ? 's' : verb === 'Query' ? 'Properties' : undefined;
  if (suffix !== want) fail(HR.E_INVALIDARG, `unknown op ${req.op}`);
  const ops = FAMILIES[family];
  const base = { op: req.op, api: 'v2' as const, envelope: false };
  if (verb === 'Enumerate') {
    return {
      ...base,
      kind: 'read',
      run: ({ store }) => {
        const q = parseQuery(req.query);
        return JSON.stringify(
          ops
            .all(store)
            .filter((o) => matchesFilter(ops.view(store, o.id), q.filter))
            .map((o) => o.id.toLowerCase()),
        );
      },
    };
  }
  if (verb === 'Create') {
    const id = ids.createId(req);
    return {
      ...base,
      kind: 'mutation',
      id,
      run: ({ store }) => {
        ops.create(store, id, req.settings);
        return id.toLowerCase();
      },
    };
  }
  const id = ids.requireGuid(req.id, 'id');
  if (verb === 'Open' || verb === 'Query') {
    return {
      ...base,
      kind: 'read',
      id,
      run: ({ store }) => {
        ops.get(store, id);
        return verb === 'Open' ? id.toLowerCase() : JSON.stringify(ops.view(store, id));
      },
    };
  }
  return {
    ...base,
    kind: 'mutation',
    id,
    run: ({ store }) => {
      if (verb === 'Modify') ops.modify(store, id, req.settings);
      else ops.remove(store, id);
      return null;
    },
  };
}
