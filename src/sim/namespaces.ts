/**
 * The simulator's namespaces (HCN namespaces, v1 compartments): creating and deleting them, and adding or removing an
 * endpoint or a container (HcnModifyNamespace, v1 add/removeresource). Part of the object store (store.ts).
 */
import { HR } from '../hns/hresults';
import type { Endpoints } from './endpoints';
import { guidKey, sameGuid, type ApiFlavour } from './guid';
import type { NamespaceObj } from './model';
import type { NamespaceInput, ResourceRequest } from './parse-namespace';
import { fail } from './sim-error';

export class Namespaces {
  readonly map = new Map<string, NamespaceObj>();
  private nextCompartment = 2;

  constructor(private readonly endpoints: Pick<Endpoints, 'map' | 'get'>) {}

  get(id: string): NamespaceObj {
    return this.map.get(guidKey(id)) ?? fail(HR.ERROR_NOT_FOUND, id);
  }

  create(id: string, input: NamespaceInput, api: ApiFlavour): NamespaceObj {
    if (this.map.has(guidKey(id))) fail(HR.ERROR_ALREADY_EXISTS, `namespace ${id}`);
    const namespaceId = input.namespaceId ?? this.nextCompartment;
    this.nextCompartment = Math.max(this.nextCompartment, namespaceId + 1);
    const ns: NamespaceObj = {
      id,
      createdBy: api,
      schemaVersion: input.schemaVersion,
      version: 1,
      type: input.type,
      namespaceId,
      resources: [],
    };
    this.map.set(guidKey(id), ns);
    return ns;
  }

  /** Deleting a namespace releases its endpoints (hcsoci removes them first; HNS does not insist). */
  delete(id: string): NamespaceObj {
    const ns = this.get(id);
    for (const e of this.endpoints.map.values())
      if (e.namespaceId && sameGuid(e.namespaceId, ns.id)) e.namespaceId = undefined;
    this.map.delete(guidKey(ns.id));
    return ns;
  }

  /** Add/remove an endpoint (or container) to/from a namespace: HcnModifyNamespace and v1 add/removeresource. */
  resource(nsId: string, req: ResourceRequest): NamespaceObj {
    const ns = this.get(nsId);
    const { type, id } = req.resource;
    if (type === 'Endpoint') {
      const e = this.endpoints.get(id);
      if (req.request === 'Add') {
        if (e.namespaceId) fail(HR.ENDPOINT_NAMESPACE_ALREADY_EXISTS, `${e.id} is in namespace ${e.namespaceId}`);
        e.namespaceId = ns.id;
        ns.resources.push({ type, id: e.id });
      } else {
        if (!e.namespaceId || !sameGuid(e.namespaceId, ns.id))
          fail(HR.ENDPOINT_NOT_ATTACHED, `${e.id} is not in ${ns.id}`);
        e.namespaceId = undefined;
        ns.resources = ns.resources.filter((r) => !(r.type === 'Endpoint' && sameGuid(r.id, e.id)));
      }
      e.version++;
    } else if (req.request === 'Add') {
      if (!ns.resources.some((r) => r.type === 'Container' && r.id.toLowerCase() === id.toLowerCase()))
        ns.resources.push({ type, id });
    } else {
      const before = ns.resources.length;
      ns.resources = ns.resources.filter((r) => !(r.type === 'Container' && r.id.toLowerCase() === id.toLowerCase()));
      if (ns.resources.length === before) fail(HR.ERROR_NOT_FOUND, `container ${id}`);
    }
    ns.version++;
    return ns;
  }

  /**
   * An HNS restart: namespaces are kept unless `drop` says otherwise (the sources, and the gap, are at
   * Store.restart), and a kept one no longer lists the endpoints it had: they are gone (its containers stay).
   */
  restart(drop: boolean | readonly string[] | undefined): void {
    if (drop === true) this.map.clear();
    else if (Array.isArray(drop)) for (const id of drop as readonly string[]) this.map.delete(guidKey(id));
    for (const ns of this.map.values()) ns.resources = ns.resources.filter((r) => r.type !== 'Endpoint');
  }

  clear(): void {
    this.map.clear();
    this.nextCompartment = 2;
  }
}
