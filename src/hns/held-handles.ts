/**
 * The HCN handles a resident process keeps between verbs, so that HCN costs what it must and no more: an endpoint
 * create on a kept network handle is HcnCreateEndpoint + HcnQueryEndpointProperties (microsoft/hcsshim
 * hcn/hcnendpoint.go createEndpoint opens the network first, every time), and a pod's detach on the namespace handle
 * kept since its attach is one HcnModifyNamespace (hcsshim hcn/hcnnamespace.go opens it first, every time).
 *
 * What is kept: a network's handle, until the network is deleted or reported gone; a namespace's handle from the
 * first attach into it until the last of its endpoints is detached (the pod's DEL, or the rollback of its ADD).
 * Every handle is dropped (closed, forgotten) when HNS says its service disconnected (a restarted HNS knows none of
 * them), when the process hands its address over, and when a call on it fails as a handle HNS does not know
 * (E_HANDLE): then it is opened again and the call made once more. A handle is never used after dropAll() returns:
 * a call that starts later opens a new one (a call already running keeps the one it took, and fails on it at worst).
 */
import type { Hcn } from './hcn';
import { hasCode, isNotFound, isUnreachable } from './hcn-error';
import { HR } from './hresults';
import type { HostComputeEndpoint } from './schema';

/** Namespaces whose handle is kept, at most: beyond it an attach opens and closes as HCN does without a keeper. */
const MAX_NAMESPACES = 4096;

interface Kept {
  /** The handle's number in the addon (src/hns/native-types.ts open*Handle). */
  handle: Promise<string>;
  /** Namespaces: the endpoints attached through it and not yet detached. */
  endpoints: Set<string>;
}

export class HeldHandles {
  private readonly networks = new Map<string, Kept>();
  private readonly namespaces = new Map<string, Kept>();
  /** Opens, for tests and the docs' counts: how many handles were opened since the start. */
  opened = 0;

  /** Closes and forgets every handle: HNS's service went away, or the process hands over. */
  dropAll(hcn: Pick<Hcn, 'closeHandle'>): void {
    for (const map of [this.networks, this.namespaces]) {
      for (const kept of map.values()) close(hcn, kept);
      map.clear();
    }
  }

  /** How many handles are kept now (status, tests). */
  get size(): number {
    return this.networks.size + this.namespaces.size;
  }

  /** HcnCreateEndpoint on the network's kept handle, opened first if there is none. */
  createEndpoint(
    hcn: Hcn,
    networkId: string,
    settings: HostComputeEndpoint,
    id?: string,
  ): Promise<HostComputeEndpoint> {
    return this.using(hcn, this.networks, networkId, 'network', (handle) =>
      hcn.createEndpointIn(handle, networkId, settings, id),
    );
  }

  /** The network is gone (deleted by us, or HNS said so): its handle with it. */
  forgetNetwork(hcn: Hcn, networkId: string): void {
    this.forget(hcn, this.networks, networkId);
  }

  /** Adds the endpoint to the namespace through its kept handle, which then stays until the endpoint is detached. */
  async attach(hcn: Hcn, namespaceId: string, endpointId: string): Promise<void> {
    const key = namespaceId.toLowerCase();
    if (!this.namespaces.has(key) && this.namespaces.size >= MAX_NAMESPACES)
      return hcn.addNamespaceEndpoint(namespaceId, endpointId);
    await this.using(hcn, this.namespaces, namespaceId, 'namespace', (handle) =>
      hcn.modifyHeldNamespace(handle, endpointId, 'Add'),
    );
    this.namespaces.get(key)?.endpoints.add(endpointId.toLowerCase());
  }

  /**
   * Removes the endpoint from the namespace: through the handle kept since its attach, else HCN's open and modify.
   * The last endpoint detached closes the namespace's handle, however the detach ended.
   */
  async detach(hcn: Hcn, namespaceId: string, endpointId: string): Promise<void> {
    const key = namespaceId.toLowerCase();
    const kept = this.namespaces.get(key);
    if (!kept) return hcn.removeNamespaceEndpoint(namespaceId, endpointId);
    try {
      await this.using(hcn, this.namespaces, namespaceId, 'namespace', (handle) =>
        hcn.modifyHeldNamespace(handle, endpointId, 'Remove'),
      );
    } finally {
      const now = this.namespaces.get(key);
      now?.endpoints.delete(endpointId.toLowerCase());
      if (now && now.endpoints.size === 0) this.forget(hcn, this.namespaces, namespaceId);
    }
  }

  /**
   * Runs `act` on the object's kept handle (opened if none). A handle HNS does not know (E_HANDLE) is dropped and
   * opened again, and `act` runs once more; one HNS cannot be reached, or an object it no longer has, is dropped.
   */
  private async using<T>(
    hcn: Hcn,
    map: Map<string, Kept>,
    id: string,
    kind: 'network' | 'namespace',
    act: (handle: string) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const kept = this.keep(hcn, map, id, kind);
      try {
        return await act(await kept.handle);
      } catch (e) {
        const stale = hasCode(e, HR.E_HANDLE);
        if (stale || isUnreachable(e) || isNotFound(e)) this.forget(hcn, map, id, kept);
        if (!stale || attempt > 0) throw e;
      }
    }
  }

  private keep(hcn: Hcn, map: Map<string, Kept>, id: string, kind: 'network' | 'namespace'): Kept {
    const key = id.toLowerCase();
    let kept = map.get(key);
    if (!kept) {
      this.opened++;
      const handle = kind === 'network' ? hcn.openNetworkHandle(id) : hcn.openNamespaceHandle(id);
      const fresh: Kept = { handle, endpoints: new Set() };
      kept = fresh;
      map.set(key, fresh);
      // An open that fails keeps nothing: the next call opens again.
      handle.catch(() => {
        if (map.get(key) === fresh) map.delete(key);
      });
    }
    return kept;
  }

  /** Forgets and closes the object's handle (only `which`, when given: not one opened since by another call). */
  private forget(hcn: Hcn, map: Map<string, Kept>, id: string, which?: Kept): void {
    const key = id.toLowerCase();
    const kept = map.get(key);
    if (!kept || (which && kept !== which)) return;
    map.delete(key);
    close(hcn, kept);
  }
}

function close(hcn: Pick<Hcn, 'closeHandle'>, kept: Kept): void {
  kept.handle.then(
    (handle) => hcn.closeHandle(handle),
    () => undefined,
  );
}
