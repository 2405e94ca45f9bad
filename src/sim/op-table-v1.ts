/**
 * The operation table's part for HNS v1: HNSCall, a method and a path answered inside HNS's envelope. The request is
 * read once into a route (method, id, action, body); each collection of the path has a handler of its own that turns
 * the route into a Plan, or into `unknown` for a path HNS does not have.
 */
import { HR } from '../hns/hresults';
import { formatVersion, supports } from '../hns/features';
import { normalizeMac } from '../net/mac';
import type { SimHost } from './control-types';
import { parseGuid } from './guid';
import { isObj, parseJsonDoc, type Obj } from './json-doc';
import { createId } from './op-ids';
import type { Plan, RunContext } from './plan';
import { parseEndpointInput } from './parse-endpoint';
import { parseNamespaceInput, parseV1Resource } from './parse-namespace';
import { parseNetworkInput } from './parse-network';
import { policyListV1 } from './sdn-objects';
import { SimError, errorRecordObject, fail } from './sim-error';
import { endpointV1, namespaceV1, networkV1 } from './views';
import type { OpRequest } from './wire-types';

const ID_COLLECTIONS = new Set(['networks', 'endpoints', 'namespaces', 'endpointstats', 'policylists']);

/** Success envelope as HNS writes it: {"Success":true,"Output":…}; Output is left out when there is none. */
export function okEnvelope(output?: unknown): string {
  return JSON.stringify(output === undefined ? { Success: true } : { Success: true, Output: output });
}

/**
 * A failed HNSCall: {Success, Error, ErrorCode} by default (MicrosoftDocs/Virtualization-Documentation
 * virtualization/api/hcn/HNS_Schema.md "Response"). With `v1ErrorCodes: false` the envelope is only {Success, Error}:
 * the shape hcsshim reads (microsoft/hcsshim internal/hns/hnsnetwork.go hnsResponse has no ErrorCode), so a client
 * must then know failures by their text, as hcsshim does ("Element not found.", internal/hns/namespace.go).
 */
export function errorEnvelope(hr: number, host?: Pick<SimHost, 'v1ErrorCodes'>): string {
  const record = errorRecordObject(hr);
  if (host?.v1ErrorCodes === false) return JSON.stringify({ Success: record.Success, Error: record.Error });
  return JSON.stringify(record);
}

/** `HNSCall <METHOD> <path pattern>` with ids replaced by {id}: the name faults and statistics use. */
export function hnsOpName(method: string, segments: string[]): string {
  const pattern = segments.map((s, i) => (i === 1 && ID_COLLECTIONS.has(segments[0]) ? '{id}' : s));
  return `HNSCall ${method} /${pattern.join('/')}`;
}

/** One HNSCall as the collections' handlers see it. */
interface HnsRoute {
  req: OpRequest;
  /** Upper-case. */
  method: string;
  /** The path's segments, lower-case, without the query. */
  seg: string[];
  /** The path's object id. Ids that are not GUIDs name nothing: HNS answers not-found for them, so they are kept. */
  id?: string;
  /** The path's third segment (attach, detach, addresource, removeresource). */
  action?: string;
  /** The request's body; parsed when the call runs, so a bad body is the call's failure, in its envelope. */
  body(): Obj;
  /** A Plan whose run() answers fn's value in the success envelope, or a SimError in the failure envelope. */
  answer(fn: (ctx: RunContext) => unknown, plan?: Partial<Plan>): Plan;
  /** The answer to a path HNS does not have. */
  unknown: Plan;
}

const COLLECTIONS = new Map<string, (r: HnsRoute) => Plan>([
  ['globals', planGlobals],
  ['networks', planNetworks],
  ['endpoints', planEndpoints],
  ['namespaces', planNamespaces],
  ['endpointstats', planEndpointStats],
  ['accelnet', planAccelnet],
  ['policylists', planPolicyLists],
]);

export function planHnsCall(req: OpRequest): Plan {
  const r = hnsRoute(req);
  if (r.seg.length > 3 || (r.seg.length === 3 && !r.action)) return r.unknown;
  return COLLECTIONS.get(r.seg[0] ?? '')?.(r) ?? r.unknown;
}

function hnsRoute(req: OpRequest): HnsRoute {
  const method = (req.method ?? '').toUpperCase();
  const path = (req.path ?? '').split('?')[0];
  const rawSeg = path.split('/').filter(Boolean);
  const seg = rawSeg.map((s) => s.toLowerCase());
  const kind: Plan['kind'] = method === 'GET' ? 'read' : 'mutation';
  const base = { op: hnsOpName(method, seg), api: 'v1' as const, kind, envelope: true };
  const answer = (fn: (ctx: RunContext) => unknown, plan: Partial<Plan> = {}): Plan => ({
    ...base,
    ...plan,
    run: (ctx) => {
      try {
        return okEnvelope(fn(ctx));
      } catch (e) {
        if (e instanceof SimError) return errorEnvelope(e.hresult, ctx.host);
        throw e;
      }
    },
  });
  const idSeg = rawSeg[1];
  return {
    req,
    method,
    seg,
    id: idSeg === undefined ? undefined : (parseGuid(idSeg) ?? idSeg),
    action: seg[2],
    body: () => parseJsonDoc(req.request, 'request'),
    answer,
    unknown: answer(() => fail(HR.E_INVALIDARG, `no HNS path ${method} ${path}`)),
  };
}

function planGlobals({ method, seg, answer, unknown }: HnsRoute): Plan {
  if (method === 'GET' && seg[1] === 'version' && seg.length === 2)
    return answer(({ host }) => ({ Major: host.version.major, Minor: host.version.minor }));
  return unknown;
}

function planNetworks({ req, method, id, action, body, answer, unknown }: HnsRoute): Plan {
  if (method === 'GET' && !id)
    return answer(({ store, host }) => [...store.networks.values()].map((n) => networkV1(n, store, host)));
  if (method === 'GET' && id && !action)
    return answer(({ store, host }) => networkV1(store.network(id), store, host), { id });
  if (method === 'POST' && !id) {
    const newId = createId(null, req.request, 'v1');
    return answer(
      ({ store, host }) => {
        const doc = body();
        return networkV1(store.createNetwork(newId, parseNetworkInput(doc), 'v1'), store, host);
      },
      { id: newId, creates: { kind: 'network', id: newId } },
    );
  }
  if (method === 'DELETE' && id && !action)
    return answer(({ store }) => void store.deleteNetwork(id), { id, deletes: { kind: 'network', id } });
  return unknown;
}

function planEndpoints({ req, method, id, action, body, answer, unknown }: HnsRoute): Plan {
  if (method === 'GET' && !id)
    return answer(({ store }) => [...store.endpoints.values()].map((e) => endpointV1(e, store)));
  if (method === 'GET' && id && !action) return answer(({ store }) => endpointV1(store.endpoint(id), store), { id });
  if (method === 'POST' && !id) {
    const newId = createId(null, req.request, 'v1');
    return answer(({ store }) => endpointV1(store.createEndpoint(newId, parseEndpointInput(body()), 'v1'), store), {
      id: newId,
      creates: { kind: 'endpoint', id: newId },
    });
  }
  if (method === 'POST' && id && !action) {
    return answer(
      ({ store }) => {
        store.endpoint(id); // not-found wins over a bad body
        return endpointV1(store.updateEndpointV1(id, body()), store);
      },
      { id },
    );
  }
  if (method === 'POST' && id && (action === 'attach' || action === 'detach')) {
    return answer(
      ({ store }) => {
        store.endpoint(id);
        const doc = body();
        if (action === 'attach') store.attach(id, doc);
        else store.detach(id, doc);
        return undefined;
      },
      { id },
    );
  }
  if (method === 'DELETE' && id && !action)
    return answer(({ store }) => void store.deleteEndpoint(id), { id, deletes: { kind: 'endpoint', id } });
  return unknown;
}

function planNamespaces({ req, method, id, action, body, answer, unknown }: HnsRoute): Plan {
  if (method === 'GET' && !id) return answer(({ store }) => [...store.namespaces.values()].map(namespaceV1));
  if (method === 'GET' && id && !action) return answer(({ store }) => namespaceV1(store.namespace(id)), { id });
  if (method === 'POST' && !id) {
    const newId = createId(null, req.request, 'v1');
    return answer(
      ({ store }) => {
        const doc = req.request && req.request.trim() !== '' ? body() : {};
        return namespaceV1(store.createNamespace(newId, parseNamespaceInput(doc), 'v1'));
      },
      { id: newId, creates: { kind: 'namespace', id: newId } },
    );
  }
  if (method === 'POST' && id && (action === 'addresource' || action === 'removeresource')) {
    return answer(
      ({ store }) => {
        store.namespace(id);
        return namespaceV1(
          store.namespaceResource(id, parseV1Resource(body(), action === 'addresource' ? 'Add' : 'Remove')),
        );
      },
      { id },
    );
  }
  if (method === 'DELETE' && id && !action)
    return answer(({ store }) => void store.deleteNamespace(id), { id, deletes: { kind: 'namespace', id } });
  return unknown;
}

function planEndpointStats({ method, id, action, answer, unknown }: HnsRoute): Plan {
  if (method !== 'GET' || !id || action) return unknown;
  return answer(
    ({ store }) => {
      const e = store.endpoint(id);
      return {
        BytesReceived: 0,
        BytesSent: 0,
        DroppedPacketsIncoming: 0,
        DroppedPacketsOutgoing: 0,
        EndpointId: e.id,
        InstanceId: e.id,
        PacketsReceived: 0,
        PacketsSent: 0,
      };
    },
    { id },
  );
}

// The NNV management MAC list, HNS's exclusions from VF reassignment (microsoft/hcsshim internal/hns/hnsaccelnet.go:
// POST sets {"MacAddressList":[{"MacAddress":…}]} and answers it, GET answers it, DELETE empties it and answers
// the empty list; hcn/hnsv1_test.go TestAccelnetNnvManagementMacAddresses). A feature of HNS 15.4 on (hcsshim
// hcn/hcnglobals.go AccelnetVersion); an older one, a body that is not such a list, or a malformed MAC being
// refused, and with which codes (E_NOTIMPL, E_INVALIDARG), are our assumptions.
function planAccelnet({ method, seg, body, answer, unknown }: HnsRoute): Plan {
  if (seg.length !== 1) return unknown;
  const gate = (host: SimHost) => {
    if (!supports(host.version, 'iov')) fail(HR.E_NOTIMPL, `accelnet on HNS ${formatVersion(host.version)}`);
  };
  if (method === 'GET') return answer(({ store, host }) => (gate(host), store.accelnetMacList()));
  if (method === 'DELETE')
    return answer(({ store, host }) => (gate(host), store.setAccelnetMacs([]), store.accelnetMacList()));
  if (method !== 'POST') return unknown;
  return answer(({ store, host }) => {
    gate(host);
    const list = body().MacAddressList;
    if (!Array.isArray(list) || list.length === 0) return fail(HR.E_INVALIDARG, 'MacAddressList');
    const macs = list.map((m: unknown) =>
      isObj(m) && normalizeMac(m.MacAddress, 'separated')
        ? normalizeMac(m.MacAddress, 'separated')!
        : fail(HR.E_INVALIDARG, JSON.stringify(m)),
    );
    store.setAccelnetMacs(macs);
    return store.accelnetMacList();
  });
}

// microsoft/hcsshim internal/hns/hnspolicylist.go: GET lists, POST creates, GET/DELETE by id (sdn-objects.ts).
function planPolicyLists({ req, method, id, action, body, answer, unknown }: HnsRoute): Plan {
  if (method === 'GET' && !id) return answer(({ store }) => [...store.sdn.policyLists.values()].map(policyListV1));
  if (method === 'GET' && id && !action) return answer(({ store }) => policyListV1(store.sdn.policyList(id)), { id });
  if (method === 'POST' && !id) {
    const newId = createId(null, req.request, 'v1');
    return answer(({ store }) => policyListV1(store.sdn.createPolicyList(newId, body())), { id: newId });
  }
  if (method === 'DELETE' && id && !action)
    return answer(({ store }) => policyListV1(store.sdn.deletePolicyList(id)), { id });
  return unknown;
}
