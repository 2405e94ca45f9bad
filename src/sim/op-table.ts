/**
 * The operation table: what each request line means. planRequest() turns a request into a Plan at acceptance —
 * its operation name (for faults and statistics), whether it reads or mutates, the object id it names or will
 * create (GUID_NULL creates get their id here, so the call log and the delete-during-create race can name it) —
 * and a run() that the engine calls against committed state when the call's turn comes. HNS v1 (HNSCall) has its
 * part in op-table-v1.ts, load balancers and SDN routes theirs in op-table-sdn.ts; HCN's three object families and
 * HCS's compute systems are here.
 */
import { HR } from '../hns/hresults';
import { parseJsonDoc, type Obj } from './json-doc';
import type { ObjectKind } from './model';
import { adapterListing } from './host-vnics';
import { createId, requireGuid } from './op-ids';
import { planHnsCall } from './op-table-v1';
import { parseEndpointInput } from './parse-endpoint';
import { parseNamespaceInput, parseNamespaceModify } from './parse-namespace';
import { parseNetworkInput } from './parse-network';
import { matchesFilter, mayMatch, parseQuery } from './query';
import { fail } from './sim-error';
import { isSdnOp, planSdnRequest } from './op-table-sdn';
import type { Store } from './store';
import { view } from './views';
import type { Plan, RunContext } from './plan';
import type { OpRequest } from './wire-types';

type Family = 'Network' | 'Endpoint' | 'Namespace';

/** What each HCN object family's create, modify and delete do to the store. */
interface FamilyOps {
  kind: ObjectKind;
  create(store: Store, id: string, doc: Obj, network: string | undefined): void;
  modify(store: Store, id: string, doc: Obj): void;
  remove(store: Store, id: string): void;
}

const FAMILIES: Record<Family, FamilyOps> = {
  Network: {
    kind: 'network',
    create: (s, id, doc) => void s.createNetwork(id, parseNetworkInput(doc), 'v2'),
    modify: (s, id, doc) => s.modifyNetwork(id, doc),
    remove: (s, id) => void s.deleteNetwork(id),
  },
  Endpoint: {
    kind: 'endpoint',
    create: (s, id, doc, network) => void s.createEndpoint(id, parseEndpointInput(doc), 'v2', network),
    modify: (s, id, doc) => s.modifyEndpoint(id, doc),
    remove: (s, id) => void s.deleteEndpoint(id),
  },
  Namespace: {
    kind: 'namespace',
    create: (s, id, doc) => void s.createNamespace(id, parseNamespaceInput(doc), 'v2'),
    modify: (s, id, doc) => void s.namespaceResource(id, parseNamespaceModify(doc)),
    remove: (s, id) => void s.deleteNamespace(id),
  },
};

const lower = (id: string) => id.toLowerCase();

const STRING_FIELDS = ['id', 'network', 'settings', 'query', 'method', 'path', 'request'] as const;

const HCS_OPS = new Set(['HcsOpenComputeSystem', 'HcsModifyComputeSystem', 'HcsGetComputeSystemProperties']);

export function planRequest(req: OpRequest): Plan {
  if (typeof req.op !== 'string') return fail(HR.E_INVALIDARG, 'request without op');
  for (const f of STRING_FIELDS) {
    const v: unknown = req[f];
    if (v !== undefined && v !== null && typeof v !== 'string') fail(HR.E_INVALIDARG, `${f} must be a string or null`);
  }
  if (req.op === 'HNSCall') return planHnsCall(req);
  if (isSdnOp(req.op)) return planSdnRequest(req, { requireGuid, createId: (r) => createId(r.id, r.settings, 'v2') });
  if (HCS_OPS.has(req.op)) return planHcs(req);
  if (req.op === 'HcnSimEnumerateAdapters') {
    return {
      op: req.op,
      api: 'sim',
      kind: 'read',
      envelope: false,
      run: ({ host, store }) => JSON.stringify(adapterListing(host, store)),
    };
  }
  return planHcn(req);
}

// ---- HCN (computenetwork.dll: networks, endpoints, namespaces) ------------------------------------------------

/** One HCN call as its verb's planner sees it. */
interface HcnCall {
  req: OpRequest;
  family: Family;
  ops: FamilyOps;
  base: Pick<Plan, 'op' | 'api' | 'envelope'>;
}

type Verb = 'Enumerate' | 'Create' | 'Open' | 'Query' | 'Modify' | 'Delete';

/** Each verb: the suffix its op name must have (HcnEnumerateNetworks, HcnQueryNetworkProperties) and its plan. */
const VERBS: Record<Verb, { suffix?: string; plan(call: HcnCall): Plan }> = {
  Enumerate: { suffix: 's', plan: planEnumerate },
  Create: { plan: planCreate },
  Open: {
    plan: ({ req, ops, base }) => {
      const id = requireGuid(req.id, 'id');
      return { ...base, kind: 'read', id, run: ({ store }) => (store[ops.kind](id), lower(id)) };
    },
  },
  Query: {
    suffix: 'Properties',
    plan: ({ req, ops, base }) => {
      const id = requireGuid(req.id, 'id');
      return {
        ...base,
        kind: 'read',
        id,
        run: ({ store, host }) => {
          store[ops.kind](id); // an unknown object fails before the query is looked at
          return JSON.stringify(view(ops.kind, id, parseQuery(req.query).schema, store, host));
        },
      };
    },
  },
  Modify: {
    plan: ({ req, ops, base }) => {
      const id = requireGuid(req.id, 'id');
      const run = ({ store }: RunContext) => {
        store[ops.kind](id);
        ops.modify(store, id, parseJsonDoc(req.settings, 'settings'));
        return null;
      };
      return { ...base, kind: 'mutation', id, run };
    },
  },
  Delete: {
    plan: ({ req, ops, base }) => {
      const id = requireGuid(req.id, 'id');
      const run = ({ store }: RunContext) => (ops.remove(store, id), null);
      return { ...base, kind: 'mutation', id, deletes: { kind: ops.kind, id }, run };
    },
  },
};

function planHcn(req: OpRequest): Plan {
  const m = /^Hcn(Enumerate|Create|Open|Query|Modify|Delete)(Network|Endpoint|Namespace)(s|Properties)?$/.exec(req.op);
  if (!m) return fail(HR.E_INVALIDARG, `unknown op ${req.op}`);
  const verb = VERBS[m[1] as Verb];
  if ((m[3] ?? undefined) !== verb.suffix) fail(HR.E_INVALIDARG, `unknown op ${req.op}`);
  const family = m[2] as Family;
  return verb.plan({ req, family, ops: FAMILIES[family], base: { op: req.op, api: 'v2', envelope: false } });
}

function planEnumerate({ req, ops: { kind }, base }: HcnCall): Plan {
  return {
    ...base,
    kind: 'read',
    run: ({ store, host }) => {
      const q = parseQuery(req.query);
      // The object's own name, id and network answer most filters (hcsshim's Name and VirtualNetwork) without
      // building its view; the view then decides exactly. Only the simulator's speed: the answer is the same.
      const name = kind === 'endpoint' ? nameFilter(q.filter) : undefined;
      const ids = (name !== undefined ? store.endpointsNamed(name) : store.all(kind))
        .filter((o) => mayMatch(o, q.filter) && matchesFilter(view(kind, o.id, 'v1', store, host), q.filter))
        .map((o) => o.id);
      return JSON.stringify(ids);
    },
  };
}

function planCreate({ req, family, ops, base }: HcnCall): Plan {
  const id = createId(req.id, req.settings, 'v2');
  const network = family === 'Endpoint' ? requireGuid(req.network, 'network') : undefined;
  return {
    ...base,
    kind: 'mutation',
    id,
    creates: { kind: ops.kind, id },
    run: ({ store }) => {
      ops.create(store, id, parseJsonDoc(req.settings, 'settings'), network);
      return lower(id);
    },
  };
}

// ---- HCS (vmcompute.dll compute systems: hot attach) ----------------------------------------------------------
// Open is a read; Modify is a mutation queued with HNS's own (it changes an endpoint's SharedContainers). Putting
// HCS's calls on HNS's single executor is our assumption: HCS is another service, and whether its hot add waits for
// HNS's other mutations is not public.

function planHcs(req: OpRequest): Plan {
  const id = typeof req.id === 'string' && req.id !== '' ? req.id : fail(HR.E_INVALIDARG, 'compute system id missing');
  const base = { op: req.op, api: 'hcs' as const, envelope: false, id };
  if (req.op === 'HcsOpenComputeSystem') {
    return {
      ...base,
      kind: 'read',
      run: ({ store }) => {
        store.computeSystems.get(id);
        return id;
      },
    };
  }
  if (req.op === 'HcsGetComputeSystemProperties') {
    return {
      ...base,
      kind: 'read',
      run: ({ store }) => JSON.stringify(store.computeSystems.properties(id)),
    };
  }
  return {
    ...base,
    kind: 'mutation',
    run: ({ store }) => {
      // A vanished container wins over a bad request. hcsshim opens before it modifies (microsoft/hcsshim
      // hnsendpoint.go modifyContainer), so it meets that error first; for a held handle the order is our assumption.
      store.computeSystems.get(id);
      store.computeSystems.modify(id, parseJsonDoc(req.settings, 'configuration'));
      return null;
    },
  };
}

/** The Name a filter asks for exactly, if it asks for one (the store has an index for endpoint names). */
function nameFilter(filter: Record<string, unknown> | undefined): string | undefined {
  const key = filter && Object.keys(filter).find((k) => k.toLowerCase() === 'name');
  const v = key !== undefined ? filter![key] : undefined;
  // A GUID-shaped name compares case-insensitively (query.ts equal): not an exact index lookup.
  return typeof v === 'string' && !/^\{?[0-9a-f]{8}-/i.test(v) ? v : undefined;
}
