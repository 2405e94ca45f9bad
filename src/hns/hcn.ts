/**
 * Hcn: the typed facade over the addon. Verbs per object (list/get/create/modify/delete), JSON parsed and typed,
 * every call bounded by a timeout, v1 envelopes turned into HcnError. Nothing above this file sees a JSON string
 * from HNS or the addon itself.
 */
import { GUID_TEXT } from '../net/guid';
import { abandon } from './abandoned-calls';
import type { HnsVersion } from './features';
import { normalizeMac } from '../net/mac';
import { HcnError } from './hcn-error';
import { HR } from './hresults';
import { loadNative, type LoadOptions } from './native';
import type {
  DeleteFunction,
  EnumerateFunction,
  ModifyFunction,
  NativeCapabilities,
  NativeHcn,
  QueryFunction,
} from './native-types';
import {
  SCHEMA_V2,
  type HostComputeEndpoint,
  type HostComputeNamespace,
  type HostComputeNetwork,
  type HostComputeQuery,
  type ModifyRequest,
  type ResourceModificationRequestResponse,
  type V1Envelope,
} from './schema';

/** Equality conditions on HNS's (v1) field names: ID, Name, VirtualNetwork, Flags, … */
export type Filter = Readonly<Record<string, string | number | boolean>>;

export interface HostAdapter {
  name: string;
  /** "AA-BB-CC-DD-EE-FF". */
  mac: string;
  description?: string;
  index?: number;
  /** Backed by hardware (Get-NetAdapter -Physical); false for a host vNIC ("vEthernet (…)"); undefined: not said. */
  physical?: boolean;
  /**
   * The adapter's NetCfgInstanceId, "{GUID}" as Windows writes it (Get-NetAdapter InterfaceGuid; IP_ADAPTER_ADDRESSES
   * AdapterName): it changes when the NIC is replaced or its driver reinstalled, even where name and MAC stay.
   */
  interfaceGuid?: string;
}

/** One HCN call as the facade saw it end: answered, failed (hresult), or given up on (ERROR_TIMEOUT). */
export interface HcnCallObservation {
  /** The HCN function or HNSCall route, as in HcnError.op ("HcnCreateEndpoint", "HNSCall GET /endpoints"). */
  op: string;
  /** From the call until its answer, or until the timeout for a call given up on. */
  durationMs: number;
  /** Unsigned HRESULT of a failed call (a v1 envelope's ErrorCode counts); undefined when it succeeded. */
  hresult?: number;
}

/**
 * Told of every call when it ends, synchronously; it must not throw (a throw is swallowed, the call's outcome is
 * the caller's). How the resident service counts HNS latency and errors (src/service/observability/tally.ts) without this layer
 * knowing of it.
 */
export type HcnCallObserver = (call: HcnCallObservation) => void;

export interface HcnOptions {
  /** Bound for every call; on expiry the call rejects with ERROR_TIMEOUT (the HNS call itself keeps running). */
  timeoutMs?: number;
  /** Where to find the addon (default: see src/hns/native.ts). */
  load?: LoadOptions;
  observer?: HcnCallObserver;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * HNS v1 envelopes may carry no ErrorCode (microsoft/hcsshim internal/hns/hnsnetwork.go hnsResponse reads only
 * Success, Error, Output): then the text says what failed. hcsshim itself recognises a missing object by
 * "Element not found." (internal/hns/namespace.go); the HCN messages for missing networks and endpoints count too.
 */
function codeFromText(text: string | undefined): number | undefined {
  if (!text) return undefined;
  if (text.includes('Element not found')) return HR.ERROR_NOT_FOUND;
  if (/network was not found/i.test(text)) return HR.NETWORK_NOT_FOUND;
  if (/endpoint was not found/i.test(text)) return HR.ENDPOINT_NOT_FOUND;
  return undefined;
}

/** Ids in an HNSCall path, replaced by {id} in the op name (faults and statistics match the route, not the id). */
const GUID_IN_PATH = new RegExp(GUID_TEXT, 'g');

export function query(filter?: Filter): string {
  const q: HostComputeQuery = { SchemaVersion: SCHEMA_V2 };
  if (filter && Object.keys(filter).length > 0) q.Filter = JSON.stringify(filter);
  return JSON.stringify(q);
}

const DEFAULT_QUERY = query();

export class Hcn {
  readonly native: NativeHcn;
  readonly capabilities: NativeCapabilities;
  readonly timeoutMs: number;
  readonly observer: HcnCallObserver | undefined;

  constructor(
    native: NativeHcn,
    capabilities: NativeCapabilities,
    options: { timeoutMs?: number; observer?: HcnCallObserver } = {},
  ) {
    this.native = native;
    this.capabilities = capabilities;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.observer = options.observer;
  }

  /** The same facade with its own time limit per call (the facade holds no other state but its observer). */
  withTimeout(timeoutMs: number): Hcn {
    if (timeoutMs === this.timeoutMs) return this;
    return new Hcn(this.native, this.capabilities, {
      timeoutMs,
      ...(this.observer ? { observer: this.observer } : {}),
    });
  }

  /** Loads the addon (once per process) and returns a facade over it. */
  static open(options: HcnOptions = {}): Hcn {
    const loaded = loadNative(options.load);
    return new Hcn(loaded.native, loaded.capabilities, options);
  }

  // ---- networks ----
  async enumerateNetworks(filter?: Filter): Promise<string[]> {
    return this.json<string[]>('HcnEnumerateNetworks', () => this.native.enumerateNetworks(query(filter)));
  }
  /** Every network with its properties, in one native call (enumerate + open/query/close each). */
  async listNetworks(filter?: Filter): Promise<HostComputeNetwork[]> {
    return this.json('HcnEnumerateNetworks', () => this.native.listNetworksDetailed(query(filter)));
  }
  async getNetwork(id: string): Promise<HostComputeNetwork> {
    return this.json('HcnQueryNetworkProperties', () => this.native.getNetworkProperties(id, DEFAULT_QUERY));
  }
  async findNetworkByName(name: string): Promise<HostComputeNetwork | undefined> {
    return (await this.listNetworks({ Name: name }))[0];
  }
  async createNetwork(settings: HostComputeNetwork, id?: string): Promise<HostComputeNetwork> {
    const body = JSON.stringify({ SchemaVersion: SCHEMA_V2, ...settings });
    return this.json('HcnCreateNetwork', () => this.native.createNetwork(id ?? null, body, DEFAULT_QUERY));
  }
  async modifyNetwork(id: string, request: ModifyRequest): Promise<void> {
    await this.call('HcnModifyNetwork', () => this.native.modifyNetwork(id, JSON.stringify(request)));
  }
  async deleteNetwork(id: string): Promise<void> {
    await this.call('HcnDeleteNetwork', () => this.native.deleteNetwork(id));
  }

  // ---- endpoints ----
  async enumerateEndpoints(filter?: Filter): Promise<string[]> {
    return this.json<string[]>('HcnEnumerateEndpoints', () => this.native.enumerateEndpoints(query(filter)));
  }
  async listEndpoints(filter?: Filter): Promise<HostComputeEndpoint[]> {
    return this.json('HcnEnumerateEndpoints', () => this.native.listEndpointsDetailed(query(filter)));
  }
  async listEndpointsOfNetwork(networkId: string): Promise<HostComputeEndpoint[]> {
    // hcsshim's ListEndpointsOfNetwork filters on the v1 name VirtualNetwork: HNS has no v2 key for it yet.
    return this.listEndpoints({ VirtualNetwork: networkId });
  }
  async getEndpoint(id: string): Promise<HostComputeEndpoint> {
    return this.json('HcnQueryEndpointProperties', () => this.native.getEndpointProperties(id, DEFAULT_QUERY));
  }
  async createEndpoint(networkId: string, settings: HostComputeEndpoint, id?: string): Promise<HostComputeEndpoint> {
    const body = JSON.stringify({ SchemaVersion: SCHEMA_V2, ...settings, HostComputeNetwork: networkId });
    return this.json('HcnCreateEndpoint', () => this.native.createEndpoint(networkId, id ?? null, body, DEFAULT_QUERY));
  }
  async modifyEndpoint(id: string, request: ModifyRequest): Promise<void> {
    await this.call('HcnModifyEndpoint', () => this.native.modifyEndpoint(id, JSON.stringify(request)));
  }
  async deleteEndpoint(id: string): Promise<void> {
    await this.call('HcnDeleteEndpoint', () => this.native.deleteEndpoint(id));
  }

  // ---- namespaces ----
  async listNamespaces(filter?: Filter): Promise<HostComputeNamespace[]> {
    return this.json('HcnEnumerateNamespaces', () => this.native.listNamespacesDetailed(query(filter)));
  }
  async getNamespace(id: string): Promise<HostComputeNamespace> {
    return this.json('HcnQueryNamespaceProperties', () => this.native.getNamespaceProperties(id, DEFAULT_QUERY));
  }
  async createNamespace(settings: HostComputeNamespace = {}, id?: string): Promise<HostComputeNamespace> {
    const body = JSON.stringify({ SchemaVersion: SCHEMA_V2, ...settings });
    return this.json('HcnCreateNamespace', () => this.native.createNamespace(id ?? null, body, DEFAULT_QUERY));
  }
  async deleteNamespace(id: string): Promise<void> {
    await this.call('HcnDeleteNamespace', () => this.native.deleteNamespace(id));
  }
  async addNamespaceEndpoint(namespaceId: string, endpointId: string): Promise<void> {
    await this.modifyNamespaceEndpoint(namespaceId, endpointId, 'Add');
  }
  async removeNamespaceEndpoint(namespaceId: string, endpointId: string): Promise<void> {
    await this.modifyNamespaceEndpoint(namespaceId, endpointId, 'Remove');
  }
  private async modifyNamespaceEndpoint(namespaceId: string, endpointId: string, op: 'Add' | 'Remove'): Promise<void> {
    const req: ModifyRequest = { ResourceType: 'Endpoint', RequestType: op, Settings: { EndpointId: endpointId } };
    await this.call('HcnModifyNamespace', () => this.native.modifyNamespace(namespaceId, JSON.stringify(req)));
  }

  // ---- calls by name: any function of the list whose sim column is the verb (native-types.ts) ----
  // How the API layer reaches a function of a generic verb that has no method above: a new one is called here by its
  // name, with nothing written for it in this file or below it.
  /** HcnOpen<Family>(id) → fn(query) → HcnClose<Family>, the answer parsed. */
  async callQuery<T>(fn: QueryFunction, id: string, filter?: Filter): Promise<T> {
    return this.json<T>(fn, () => this.native.callQuery(fn, id, query(filter)));
  }
  /** HcnOpen<Family>(id) → fn(request) → HcnClose<Family>. */
  async callModify(fn: ModifyFunction, id: string, request: ModifyRequest): Promise<void> {
    await this.call(fn, () => this.native.callModify(fn, id, JSON.stringify(request)));
  }
  async callEnumerate(fn: EnumerateFunction, filter?: Filter): Promise<string[]> {
    return this.json<string[]>(fn, () => this.native.callEnumerate(fn, query(filter)));
  }
  async callDelete(fn: DeleteFunction, id: string): Promise<void> {
    await this.call(fn, () => this.native.callDelete(fn, id));
  }

  // ---- held handles (src/hns/held-handles.ts) ----
  /** HcnOpenNetwork, kept open: the handle's number. */
  async openNetworkHandle(id: string): Promise<string> {
    return this.call('HcnOpenNetwork', () => this.native.openNetworkHandle(id));
  }
  /** HcnOpenNamespace, kept open. */
  async openNamespaceHandle(id: string): Promise<string> {
    return this.call('HcnOpenNamespace', () => this.native.openNamespaceHandle(id));
  }
  /** HcnCreateEndpoint on a held network handle, and the endpoint's properties (two round trips). */
  async createEndpointIn(
    networkHandle: string,
    networkId: string,
    settings: HostComputeEndpoint,
    id?: string,
  ): Promise<HostComputeEndpoint> {
    const body = JSON.stringify({ SchemaVersion: SCHEMA_V2, ...settings, HostComputeNetwork: networkId });
    return this.json('HcnCreateEndpoint', () =>
      this.native.createEndpointIn(networkHandle, id ?? null, body, DEFAULT_QUERY),
    );
  }
  /** HcnModifyNamespace on a held handle: the endpoint added or removed. */
  async modifyHeldNamespace(handle: string, endpointId: string, op: 'Add' | 'Remove'): Promise<void> {
    const req: ModifyRequest = { ResourceType: 'Endpoint', RequestType: op, Settings: { EndpointId: endpointId } };
    await this.call('HcnModifyNamespace', () => this.native.modifyHeld(handle, JSON.stringify(req)));
  }
  closeHandle(handle: string): void {
    this.native.closeHandle(handle);
  }

  // ---- HNS v1 and host facts ----
  /**
   * HNSCall(method, path, body) with the envelope unwrapped: resolves to Output, rejects with an HcnError named
   * after the call ("HNSCall POST /networks") when Success is false or the call itself fails.
   */
  async hnsCall<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const op = `HNSCall ${method} ${path.replace(GUID_IN_PATH, '{id}').replace(/\/$/, '')}`;
    // The envelope is unwrapped inside the timed call, so a refusal in it counts as this call's failure (observer).
    return this.call(op, async () => {
      const text = await this.native.hnsCall(
        method,
        path,
        body === undefined ? null : typeof body === 'string' ? body : JSON.stringify(body),
      );
      let env: V1Envelope<T>;
      try {
        env = JSON.parse(text) as V1Envelope<T>;
      } catch {
        throw new HcnError(
          op,
          HR.INVALID_JSON,
          null,
          `HNS answered with something that is not JSON: ${text.slice(0, 200)}`,
        );
      }
      if (!env.Success) {
        const code = env.ErrorCode ?? codeFromText(env.Error) ?? HR.E_FAIL;
        throw new HcnError(
          op,
          code,
          JSON.stringify({ Success: false, Error: env.Error, ErrorCode: env.ErrorCode ?? code }),
        );
      }
      return env.Output as T;
    });
  }

  /** HNS version from v1 GET /globals/version (HCN has no globals call; hcsshim does the same). */
  async version(): Promise<HnsVersion> {
    const out = await this.hnsCall<{ Major: number; Minor: number }>('GET', '/globals/version');
    return { major: Number(out?.Major ?? 0), minor: Number(out?.Minor ?? 0) };
  }

  async listAdapters(): Promise<HostAdapter[]> {
    const raw = await this.json<Array<Record<string, unknown>>>('HcnSimEnumerateAdapters', () =>
      this.native.listAdapters(),
    );
    return raw.map((a) => ({
      name: String(a.Name ?? ''),
      mac: normalizeMac(a.MacAddress) ?? String(a.MacAddress ?? ''),
      description: typeof a.InterfaceDescription === 'string' ? a.InterfaceDescription : undefined,
      index: typeof a.InterfaceIndex === 'number' ? a.InterfaceIndex : undefined,
      physical: typeof a.Physical === 'boolean' ? a.Physical : undefined,
      interfaceGuid: typeof a.InterfaceGuid === 'string' && a.InterfaceGuid ? a.InterfaceGuid : undefined,
    }));
  }

  // ---- HCS ----
  /** Hot-adds or removes an endpoint's vNIC in a running compute system (hcsshim hnsendpoint.go modifyContainer). */
  async modifyComputeSystem(id: string, request: ResourceModificationRequestResponse): Promise<void> {
    await this.call('HcsModifyComputeSystem', () => this.native.modifyComputeSystem(id, JSON.stringify(request)));
  }
  /** Opens and closes the compute system: rejects (isComputeSystemMissing) when HCS does not have it. */
  async openComputeSystem(id: string): Promise<void> {
    await this.call('HcsOpenComputeSystem', () => this.native.openComputeSystem(id));
  }

  // ---- service notifications (an optional capability: src/hns/service-notifications.ts) ----
  /** Whether the host has HcnRegisterServiceCallback and HcnUnregisterServiceCallback. */
  get hasServiceNotifications(): boolean {
    const optional = this.capabilities.optional ?? [];
    return optional.includes('HcnRegisterServiceCallback') && optional.includes('HcnUnregisterServiceCallback');
  }

  /** Registers for HNS's service notifications (type: HCN_NOTIFICATIONS); resolves with the registration's id. */
  async registerServiceCallback(onNotification: (type: number, status: number) => void): Promise<string> {
    return this.call('HcnRegisterServiceCallback', () =>
      this.native.registerServiceCallback((type, status) => onNotification(type, status)),
    );
  }

  async unregisterServiceCallback(id: string): Promise<void> {
    await this.call('HcnUnregisterServiceCallback', () => this.native.unregisterServiceCallback(id));
  }

  // ---- plumbing ----
  private async json<T>(op: string, run: () => Promise<string>): Promise<T> {
    const text = await this.call(op, run);
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new HcnError(op, HR.INVALID_JSON, null, `unparsable answer: ${text.slice(0, 200)}`);
    }
  }

  /**
   * Bounds a native call by the timeout. The call cannot be cancelled (HNS keeps working on it): it is recorded as
   * abandoned (src/hns/abandoned-calls.ts) until it ends, and its late result is dropped. It holds only its own
   * native thread, so the calls after it are not held up. The error's stack is re-pointed at the caller: the
   * native one says nothing useful.
   */
  private call<T>(op: string, run: () => Promise<T>): Promise<T> {
    const site = new Error();
    const startedAt = Date.now();
    const t0 = performance.now();
    const observe = (e?: unknown): void => {
      if (!this.observer) return;
      const hresult = e === undefined ? undefined : e instanceof HcnError ? e.hresult : HR.E_FAIL;
      try {
        this.observer({ op, durationMs: performance.now() - t0, ...(hresult !== undefined ? { hresult } : {}) });
      } catch {
        // an observer's failure is not the call's
      }
    };
    const pending = run();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        pending.catch(() => undefined);
        abandon({ op, startedAt, timeoutMs: this.timeoutMs }, pending);
        reject(new HcnError(op, HR.ERROR_TIMEOUT, null, `no answer from HNS within ${this.timeoutMs / 1000}s`));
      }, this.timeoutMs);
      timer.unref?.();
    });
    return Promise.race([pending, timeout])
      .then(
        (v) => {
          observe();
          return v;
        },
        (e: unknown) => {
          observe(e);
          throw e;
        },
      )
      .catch((e: unknown) => {
        if (e instanceof Error && site.stack)
          e.stack = `${e.name}: ${e.message}\n${site.stack.split('\n').slice(1).join('\n')}`;
        throw e;
      })
      .finally(() => clearTimeout(timer));
  }
}
