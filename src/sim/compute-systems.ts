/**
 * HCS compute systems (containers), as far as hot attach needs them. They are added and removed by the operator
 * (`ctl container add|rm`), as a container runtime would start and remove containers. That they survive an HNS
 * restart (only the endpoints they held vanish) is our assumption: HCS (vmcompute) is a service apart from HNS, and
 * no public source says what an HNS restart does to a running container's vNICs.
 *
 * Modify accepts what hcsshim sends for a hot attach (microsoft/hcsshim hnsendpoint.go modifyNetworkEndpoint, with
 * the schema of internal/hcs/schema1/schema1.go ResourceModificationRequestResponse):
 *   {"ResourceType":"Network","RequestType":"Add"|"Remove","Settings":"<endpoint id>"}
 * and it has HNS record the container on the endpoint, where hcsshim's IsAttached looks for it (microsoft/hcsshim
 * internal/hns/hnsendpoint.go IsAttached: v1 GET /endpoints/{id}, SharedContainers contains the container id, compared
 * lowercased — hence container ids are matched case-insensitively here).
 */
import { HR } from '../hns/hresults';
import { isObj, type Obj } from './json-doc';
import { parseGuid } from './guid';
import type { EndpointObj, ObjectKind } from './model';
import { fail } from './sim-error';

export interface ComputeSystemObj {
  /** As the runtime named it (Docker: 64 hex digits). */
  id: string;
  /** Endpoints hot-added to it, as HNS stores their ids. */
  endpoints: string[];
}

const CONTAINER_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** What a hot attach needs of the object store (store.ts): the endpoint, and its v1 attach and detach. */
export interface AttachableEndpoints {
  endpoint(id: string): EndpointObj;
  attach(id: string, body: Obj): EndpointObj;
  detach(id: string, body: Obj): EndpointObj;
  has(kind: ObjectKind, id: string): boolean;
}

export class ComputeSystems {
  private readonly systems = new Map<string, ComputeSystemObj>();

  constructor(private readonly store: AttachableEndpoints) {}

  list(): ComputeSystemObj[] {
    return [...this.systems.values()].map((s) => ({ id: s.id, endpoints: [...s.endpoints] }));
  }

  add(id: string): ComputeSystemObj {
    if (typeof id !== 'string' || !CONTAINER_ID.test(id)) throw new Error(`not a container id: ${JSON.stringify(id)}`);
    if (this.systems.has(id.toLowerCase())) throw new Error(`compute system ${id} exists`);
    const s = { id, endpoints: [] };
    this.systems.set(id.toLowerCase(), s);
    return s;
  }

  /**
   * The container is gone. Whether HNS then drops the container from the endpoint's SharedContainers is not in the
   * public sources; the simulator leaves the endpoint as it was (our assumption: the harder case for a client), so a
   * DEL must cope with a recorded attach to a container that no longer exists (hcsshim's HotDetachEndpoint then fails
   * opening it with ErrComputeSystemDoesNotExist: microsoft/hcsshim hnsendpoint.go modifyContainer).
   */
  remove(id: string): void {
    if (!this.systems.delete(String(id).toLowerCase())) throw new Error(`no compute system ${id}`);
  }

  /**
   * HcsOpenComputeSystem: microsoft/hcsshim internal/hcs/errors.go ErrComputeSystemDoesNotExist (0xc037010e) when
   * absent.
   */
  get(id: string): ComputeSystemObj {
    return this.systems.get(id.toLowerCase()) ?? fail(HR.HCS_SYSTEM_NOT_FOUND, id);
  }

  /**
   * HcsGetComputeSystemProperties: the fields hcsshim reads when it opens a compute system (internal/hcs/system.go
   * getCachedProperties: SystemType, RuntimeOSType, Owner, lowercased; the JSON names of internal/hcs/schema1
   * ContainerProperties). A running Windows container of the simulator's; the owner is unknown to it, so empty.
   * The property query (schema1 PropertyQuery, e.g. for statistics) is not looked at: only the basic set is there.
   */
  properties(id: string): Record<string, unknown> {
    const s = this.get(id);
    return { Id: s.id, Name: s.id, SystemType: 'Container', RuntimeOsType: 'Windows', Owner: '', State: 'Running' };
  }

  /** HcsModifyComputeSystem with a network request: hot-adds or removes the endpoint's vNIC. */
  modify(id: string, doc: Obj): void {
    const system = this.get(id);
    // schema1: "Supported resource types are Network and Request Types are Add/Remove"; anything else is what
    // hcsshim calls ErrInvalidData (microsoft/hcsshim internal/hcs/errors.go: "the request being sent to hcs is
    // invalid/unsupported"). That HCS answers exactly this code for these cases is our assumption.
    if (doc.ResourceType !== 'Network' || (doc.RequestType !== 'Add' && doc.RequestType !== 'Remove')) {
      fail(HR.ERROR_INVALID_DATA, `ResourceType ${String(doc.ResourceType)} / RequestType ${String(doc.RequestType)}`);
    }
    // Settings is the endpoint id as a JSON string (hcsshim sends Data: endpointID, hnsendpoint.go
    // modifyNetworkEndpoint). Refusing anything else with ERROR_INVALID_DATA is our assumption, as above.
    const settings = doc.Settings;
    const endpointId = typeof settings === 'string' ? parseGuid(settings) : undefined;
    if (!endpointId || isObj(settings))
      fail(HR.ERROR_INVALID_DATA, `Settings must be the endpoint id, got ${JSON.stringify(settings)}`);
    const ep = this.store.endpoint(endpointId);
    const has = system.endpoints.findIndex((e) => e.toLowerCase() === ep.id.toLowerCase());
    // A second Add / a Remove of what is not attached: hcsshim never sends them (HotAttachEndpoint and
    // HotDetachEndpoint ask IsAttached first, microsoft/hcsshim hnsendpoint.go), so what HCS answers is not public.
    // Our assumption: the HCN codes whose descriptions fit (MicrosoftDocs/Virtualization-Documentation
    // virtualization/api/hcn/Reference/HCNHResult.md HCN_E_ENDPOINT_ALREADY_ATTACHED, HCN_E_ENDPOINT_NOT_ATTACHED).
    if (doc.RequestType === 'Add') {
      if (has >= 0) fail(HR.ENDPOINT_ALREADY_ATTACHED, `${ep.id} on ${system.id}`);
      this.store.attach(ep.id, { ContainerId: system.id });
      system.endpoints.push(ep.id);
    } else {
      if (has < 0) fail(HR.ENDPOINT_NOT_ATTACHED, `${ep.id} on ${system.id}`);
      this.store.detach(ep.id, { ContainerId: system.id });
      system.endpoints.splice(has, 1);
    }
  }

  /** An HNS restart drops every endpoint, and with them the vNICs they had in containers (our assumption, above). */
  forgetEndpoints(): void {
    for (const s of this.systems.values()) s.endpoints = s.endpoints.filter((e) => this.store.has('endpoint', e));
  }

  clear(): void {
    this.systems.clear();
  }
}
