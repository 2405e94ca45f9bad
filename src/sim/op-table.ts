/**
 * The operation table: what each request line means. planRequest() turns a request into a Plan at acceptance —
 * its operation name (for faults and statistics), whether it reads or mutates, the object id it names or will
 * create (GUID_NULL creates get their id here, so the call log and the delete-during-create race can name it) —
 * and a run() that the engine calls against committed state when the call's turn comes.
 */
import { HR } from '../hns/hresults';
import type { SimHost } from './control-types';
import { inCase, isNullGuid, newGuid, parseGuid, type ApiFlavour } from './guid';
import { isObj, parseJsonDoc, type Obj } from './json-doc';
import { normalizeMac } from '../net/mac';
import { formatVersion, supports } from '../hns/features';
import type { ObjectKind } from './model';
import { adapterListing } from './host-vnics';
import { parseEndpointInput } from './parse-endpoint';
import { parseNamespaceInput, parseNamespaceModify, parseV1Resource } from './parse-namespace';
import { parseNetworkInput } from './parse-network';
import { matchesFilter, mayMatch, parseQuery } from './query';
import { SimError, errorRecordObject, fail } from './sim-error';
import { isSdnOp, planSdnRequest } from './op-table-sdn';
import type { Store } from './store';
import { endpointV1, namespaceV1, networkV1, view } from './views';
import { policyListV1 } from './sdn-objects';
import type { OpRequest } from './wire-types';

export interface RunContext {
  store: Store;
  host: SimHost;
}

export interface Plan {
  op: string;
  api: 'v1' | 'v2' | 'hcs' | 'sim';
  kind: 'read' | 'mutation';
  /** Object id the call names or creates. */
  id?: string;
  creates?: { kind: ObjectKind; id: string };
  deletes?: { kind: ObjectKind; id: string };
  /** HNSCall answers failures inside its envelope (hr stays S_OK); Hcn* calls answer with the HRESULT. */
  envelope: boolean;
  /** The call's effect against committed state; returns the `result` text. Throws SimError (Hcn* only). */
  run(ctx: RunContext): string | null;
}

type Family = 'Network' | 'Endpoint' | 'Namespace';
const KIND: Record<Family, ObjectKind> = { Network: 'network', Endpoint: 'endpoint', Namespace: 'namespace' };

function requireGuid(v: string | null | undefined, what: string): string {
  return parseGuid(v) ?? fail(HR.E_INVALIDARG, `${what} is not a GUID: ${JSON.stringify(v)}`);
}

/** The id a create will store: the caller's, else the one inside the settings, else a fresh one — in the API's case. */
function createId(
  requested: string | null | undefined,
  settingsText: string | null | undefined,
  api: ApiFlavour,
): string {
  if (!isNullGuid(requested)) return inCase(requireGuid(requested, 'id'), api);
  try {
    const inner = parseGuid((JSON.parse(settingsText ?? '') as Obj).ID);
    if (inner && !isNullGuid(inner)) return inCase(inner, api);
  } catch {
    /* run() reports unparsable settings */
  }
  return newGuid(api);
}

const lower = (id: string) => id.toLowerCase();

const STRING_FIELDS = ['id', 'network', 'settings', 'query', 'method', 'path', 'request'] as const;

export function planRequest(req: OpRequest): Plan {
  if (typeof req.op !== 'string') return fail(HR.E_INVALIDARG, 'request without op');
  for (const f of STRING_FIELDS) {
    const v: unknown = req[f];
    if (v !== undefined && v !== null && typeof v !== 'string') fail(HR.E_INVALIDARG, `${f} must be a string or null`);
  }
  if (req.op === 'HNSCall') return planHnsCall(req);
  if (isSdnOp(req.op)) return planSdnRequest(req, { requireGuid, createId: (r) => createId(r.id, r.settings, 'v2') });
  if (
    req.op === 'HcsOpenComputeSystem' ||
    req.op === 'HcsModifyComputeSystem' ||
    req.op === 'HcsGetComputeSystemProperties'
  )
    return planHcs(req);
  if (req.op === 'HcnSimEnumerateAdapters') {
    return {
      op: req.op,
      api: 'sim',
      kind: 'read',
      envelope: false,
      run: ({ host, store }) => JSON.stringify(adapterListing(host, store)),
    };
  }
  const m = /^Hcn(Enumerate|Create|Open|Query|Modify|Delete)(Network|Endpoint|Namespace)(s|Properties)?$/.exec(req.op);
  if (!m) return fail(HR.E_INVALIDARG, `unknown op ${req.op}`);
  const verb = m[1];
  const family = m[2] as Family;
  const kind = KIND[family];
  const base = { op: req.op, api: 'v2' as const, envelope: false };
  const expect = (suffix: string | undefined) => {
    if ((m[3] ?? undefined) !== suffix) fail(HR.E_INVALIDARG, `unknown op ${req.op}`);
  };

  switch (verb) {
    case 'Enumerate':
      expect('s');
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
    case 'Create': {
      expect(undefined);
      const id = createId(req.id, req.settings, 'v2');
      const network = family === 'Endpoint' ? requireGuid(req.network, 'network') : undefined;
      return {
        ...base,
        kind: 'mutation',
        id,
        creates: { kind, id },
        run: ({ store }) => {
          const doc = parseJsonDoc(req.settings, 'settings');
          if (family === 'Network') store.createNetwork(id, parseNetworkInput(doc), 'v2');
          else if (family === 'Endpoint') store.createEndpoint(id, parseEndpointInput(doc), 'v2', network);
          else store.createNamespace(id, parseNamespaceInput(doc), 'v2');
          return lower(id);
        },
      };
    }
    case 'Open': {
      expect(undefined);
      const id = requireGuid(req.id, 'id');
      return {
        ...base,
        kind: 'read',
        id,
        run: ({ store }) => {
          store[kind](id);
          return lower(id);
        },
      };
    }
    case 'Query': {
      expect('Properties');
      const id = requireGuid(req.id, 'id');
      return {
        ...base,
        kind: 'read',
        id,
        run: ({ store, host }) => {
          store[kind](id); // an unknown object fails before the query is looked at
          return JSON.stringify(view(kind, id, parseQuery(req.query).schema, store, host));
        },
      };
    }
    case 'Modify': {
      expect(undefined);
      const id = requireGuid(req.id, 'id');
      return {
        ...base,
        kind: 'mutation',
        id,
        run: ({ store }) => {
          store[kind](id);
          const doc = parseJsonDoc(req.settings, 'settings');
          if (family === 'Network') store.modifyNetwork(id, doc);
          else if (family === 'Endpoint') store.modifyEndpoint(id, doc);
          else store.namespaceResource(id, parseNamespaceModify(doc));
          return null;
        },
      };
    }
    default: {
      expect(undefined);
      const id = requireGuid(req.id, 'id');
      return {
        ...base,
        kind: 'mutation',
        id,
        deletes: { kind, id },
        run: ({ store }) => {
          if (family === 'Network') store.deleteNetwork(id);
          else if (family === 'Endpoint') store.deleteEndpoint(id);
          else store.deleteNamespace(id);
          return null;
        },
      };
    }
  }
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

// ---- HNS v1 ------------------------------------------------------------------------------------------------

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

function planHnsCall(req: OpRequest): Plan {
  const method = (req.method ?? '').toUpperCase();
  const path = (req.path ?? '').split('?')[0];
  const seg = path
    .split('/')
    .filter(Boolean)
    .map((s) => s.toLowerCase());
  const rawSeg = path.split('/').filter(Boolean);
  const op = hnsOpName(method, seg);
  const kind: 'read' | 'mutation' = method === 'GET' ? 'read' : 'mutation';
  const base = { op, api: 'v1' as const, kind, envelope: true };
  const body = (): Obj => parseJsonDoc(req.request, 'request');
  const idSeg = rawSeg[1];
  const wrap = (fn: (ctx: RunContext) => unknown, plan: Partial<Plan> = {}): Plan => ({
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
  const unknown = wrap(() => fail(HR.E_INVALIDARG, `no HNS path ${method} ${path}`));
  const coll = seg[0];
  const action = seg[2];
  if (seg.length > 3 || (seg.length === 3 && !action)) return unknown;
  // Ids in v1 paths that are not GUIDs name nothing: HNS answers not-found for them.
  const id = idSeg === undefined ? undefined : (parseGuid(idSeg) ?? idSeg);

  if (coll === 'globals' && method === 'GET' && seg[1] === 'version' && seg.length === 2) {
    return wrap(({ host }) => ({ Major: host.version.major, Minor: host.version.minor }));
  }
  if (coll === 'networks') {
    if (method === 'GET' && !id)
      return wrap(({ store, host }) => [...store.networks.values()].map((n) => networkV1(n, store, host)));
    if (method === 'GET' && id && !action)
      return wrap(({ store, host }) => networkV1(store.network(id), store, host), { id });
    if (method === 'POST' && !id) {
      const newId = createId(null, req.request, 'v1');
      return wrap(
        ({ store, host }) => {
          const doc = body();
          return networkV1(store.createNetwork(newId, parseNetworkInput(doc), 'v1'), store, host);
        },
        { id: newId, creates: { kind: 'network', id: newId } },
      );
    }
    if (method === 'DELETE' && id && !action)
      return wrap(({ store }) => void store.deleteNetwork(id), { id, deletes: { kind: 'network', id } });
    return unknown;
  }
  if (coll === 'endpoints') {
    if (method === 'GET' && !id)
      return wrap(({ store }) => [...store.endpoints.values()].map((e) => endpointV1(e, store)));
    if (method === 'GET' && id && !action) return wrap(({ store }) => endpointV1(store.endpoint(id), store), { id });
    if (method === 'POST' && !id) {
      const newId = createId(null, req.request, 'v1');
      return wrap(({ store }) => endpointV1(store.createEndpoint(newId, parseEndpointInput(body()), 'v1'), store), {
        id: newId,
        creates: { kind: 'endpoint', id: newId },
      });
    }
    if (method === 'POST' && id && !action) {
      return wrap(
        ({ store }) => {
          store.endpoint(id); // not-found wins over a bad body
          return endpointV1(store.updateEndpointV1(id, body()), store);
        },
        { id },
      );
    }
    if (method === 'POST' && id && (action === 'attach' || action === 'detach')) {
      return wrap(
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
      return wrap(({ store }) => void store.deleteEndpoint(id), { id, deletes: { kind: 'endpoint', id } });
    return unknown;
  }
  if (coll === 'namespaces') {
    if (method === 'GET' && !id) return wrap(({ store }) => [...store.namespaces.values()].map(namespaceV1));
    if (method === 'GET' && id && !action) return wrap(({ store }) => namespaceV1(store.namespace(id)), { id });
    if (method === 'POST' && !id) {
      const newId = createId(null, req.request, 'v1');
      return wrap(
        ({ store }) => {
          const doc = req.request && req.request.trim() !== '' ? body() : {};
          return namespaceV1(store.createNamespace(newId, parseNamespaceInput(doc), 'v1'));
        },
        { id: newId, creates: { kind: 'namespace', id: newId } },
      );
    }
    if (method === 'POST' && id && (action === 'addresource' || action === 'removeresource')) {
      return wrap(
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
      return wrap(({ store }) => void store.deleteNamespace(id), { id, deletes: { kind: 'namespace', id } });
    return unknown;
  }
  if (coll === 'endpointstats' && method === 'GET' && id && !action) {
    return wrap(
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
  if (coll === 'accelnet' && seg.length === 1) {
    // The NNV management MAC list, HNS's exclusions from VF reassignment (microsoft/hcsshim internal/hns/hnsaccelnet.go:
    // POST sets {"MacAddressList":[{"MacAddress":…}]} and answers it, GET answers it, DELETE empties it and answers
    // the empty list; hcn/hnsv1_test.go TestAccelnetNnvManagementMacAddresses). A feature of HNS 15.4 on (hcsshim
    // hcn/hcnglobals.go AccelnetVersion); an older one, a body that is not such a list, or a malformed MAC being
    // refused, and with which codes (E_NOTIMPL, E_INVALIDARG), are our assumptions.
    const gate = (host: SimHost) => {
      if (!supports(host.version, 'iov')) fail(HR.E_NOTIMPL, `accelnet on HNS ${formatVersion(host.version)}`);
    };
    if (method === 'GET') return wrap(({ store, host }) => (gate(host), store.accelnetMacList()));
    if (method === 'DELETE')
      return wrap(({ store, host }) => (gate(host), store.setAccelnetMacs([]), store.accelnetMacList()));
    if (method === 'POST') {
      return wrap(({ store, host }) => {
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
    return unknown;
  }
  if (coll === 'policylists') {
    // microsoft/hcsshim internal/hns/hnspolicylist.go: GET lists, POST creates, GET/DELETE by id (sdn-objects.ts).
    if (method === 'GET' && !id) return wrap(({ store }) => [...store.sdn.policyLists.values()].map(policyListV1));
    if (method === 'GET' && id && !action) return wrap(({ store }) => policyListV1(store.sdn.policyList(id)), { id });
    if (method === 'POST' && !id) {
      const newId = createId(null, req.request, 'v1');
      return wrap(({ store }) => policyListV1(store.sdn.createPolicyList(newId, body())), { id: newId });
    }
    if (method === 'DELETE' && id && !action)
      return wrap(({ store }) => policyListV1(store.sdn.deletePolicyList(id)), { id });
    return unknown;
  }
  return unknown;
}

/** The Name a filter asks for exactly, if it asks for one (the store has an index for endpoint names). */
function nameFilter(filter: Record<string, unknown> | undefined): string | undefined {
  const key = filter && Object.keys(filter).find((k) => k.toLowerCase() === 'name');
  const v = key !== undefined ? filter![key] : undefined;
  // A GUID-shaped name compares case-insensitively (query.ts equal): not an exact index lookup.
  return typeof v === 'string' && !/^\{?[0-9a-f]{8}-/i.test(v) ? v : undefined;
}
