/**
 * The committed object store and HNS's rules for changing it. Every method either applies its whole effect or
 * throws a SimError before changing anything (validation first, then mutation), which is what lets the engine
 * commit a call atomically at the end of its latency. Ids arrive already resolved (case per API, see guid.ts).
 *
 * This is the front: each kind of object has its file — networks.ts, endpoints.ts, namespaces.ts, compute-systems.ts
 * (HCS containers for hot attach) and sdn-objects.ts (load balancers, routes, v1 policy lists).
 */
import { HR } from '../hns/hresults';
import { ComputeSystems } from './compute-systems';
import { Endpoints } from './endpoints';
import { guidKey, type ApiFlavour } from './guid';
import type { Obj } from './json-doc';
import type { EndpointObj, NamespaceObj, NetworkObj, ObjectKind } from './model';
import { Namespaces } from './namespaces';
import { Networks, type HostSource } from './networks';
import type { EndpointInput } from './parse-endpoint';
import type { NamespaceInput, ResourceRequest } from './parse-namespace';
import type { NetworkInput } from './parse-network';
import { SdnObjects } from './sdn-objects';
import { fail } from './sim-error';

export type { HostSource } from './networks';

export class Store {
  private readonly endpointBook = new Endpoints(
    () => this.host(),
    (id) => this.namespaces.get(guidKey(id)),
  );
  private readonly networkBook = new Networks(() => this.host(), this);
  private readonly namespaceBook = new Namespaces(this.endpointBook);
  /** The committed objects of each kind, by guidKey, in creation order. */
  readonly networks: Map<string, NetworkObj> = this.networkBook.map;
  readonly endpoints: Map<string, EndpointObj> = this.endpointBook.map;
  readonly namespaces: Map<string, NamespaceObj> = this.namespaceBook.map;
  /** HCS compute systems (containers) for hot attach: compute-systems.ts. */
  readonly computeSystems = new ComputeSystems(this);
  /** Load balancers, SDN routes and v1 policy lists: sdn-objects.ts. */
  readonly sdn = new SdnObjects(
    () => this.host(),
    (id) => this.endpoint(id),
  );
  /** v1 /accelnet/: the NNV management MAC list (op-table-v1.ts). */
  private accelnetMacs: string[] = [];

  constructor(private readonly host: HostSource) {}

  // ---- lookups -------------------------------------------------------------------------------------------

  network(id: string): NetworkObj {
    return this.networkBook.get(id);
  }

  endpoint(id: string): EndpointObj {
    return this.endpointBook.get(id);
  }

  namespace(id: string): NamespaceObj {
    return this.namespaceBook.get(id);
  }

  /** The objects of one kind, in creation order. */
  all(kind: ObjectKind): Array<NetworkObj | EndpointObj | NamespaceObj> {
    const map = kind === 'network' ? this.networks : kind === 'endpoint' ? this.endpoints : this.namespaces;
    return [...map.values()];
  }

  has(kind: ObjectKind, id: string): boolean {
    const map = kind === 'network' ? this.networks : kind === 'endpoint' ? this.endpoints : this.namespaces;
    return map.has(guidKey(id));
  }

  /** Endpoints of a network, from an index kept up to date at every add and removal (views ask per network). */
  endpointsOf(networkId: string): EndpointObj[] {
    return this.endpointBook.endpointsOf(networkId);
  }

  /** The endpoints with this exact name (what a Name filter can match), in creation order. */
  endpointsNamed(name: string): EndpointObj[] {
    return this.endpointBook.endpointsNamed(name);
  }

  /** Adapter name → id of the network bound to it. */
  boundAdapters(): Record<string, string> {
    return this.networkBook.boundAdapters();
  }

  counts(): { networks: number; endpoints: number; namespaces: number } {
    return { networks: this.networks.size, endpoints: this.endpoints.size, namespaces: this.namespaces.size };
  }

  // ---- changes, by kind (networks.ts, endpoints.ts, namespaces.ts) -----------------------------------------

  createNetwork(id: string, input: NetworkInput, api: ApiFlavour): NetworkObj {
    return this.networkBook.create(id, input, api);
  }
  deleteNetwork(id: string): NetworkObj {
    return this.networkBook.delete(id);
  }
  modifyNetwork(id: string, doc: Obj): void {
    this.networkBook.modify(id, doc);
  }

  /**
   * A new endpoint, on the network the call names (v2: HcnCreateEndpoint's network handle), else the one its input
   * names by id or by name. An existing id is refused before the network is looked up.
   */
  createEndpoint(id: string, input: EndpointInput, api: ApiFlavour, callNetworkId?: string): EndpointObj {
    if (this.endpoints.has(guidKey(id))) fail(HR.ERROR_ALREADY_EXISTS, `endpoint ${id}`);
    const network = callNetworkId
      ? this.network(callNetworkId)
      : input.networkId
        ? this.network(input.networkId)
        : input.networkName
          ? ([...this.networks.values()].find((n) => n.name === input.networkName) ??
            fail(HR.NETWORK_NOT_FOUND, input.networkName))
          : fail(HR.INVALID_ENDPOINT, 'endpoint names no network');
    return this.endpointBook.create(id, input, api, network);
  }
  deleteEndpoint(id: string): EndpointObj {
    return this.endpointBook.delete(id);
  }
  modifyEndpoint(id: string, doc: Obj): void {
    this.endpointBook.modify(id, doc);
  }
  updateEndpointV1(id: string, doc: Obj): EndpointObj {
    return this.endpointBook.updateV1(id, doc);
  }
  attach(id: string, body: Obj): EndpointObj {
    return this.endpointBook.attach(id, body);
  }
  detach(id: string, body: Obj): EndpointObj {
    return this.endpointBook.detach(id, body);
  }

  createNamespace(id: string, input: NamespaceInput, api: ApiFlavour): NamespaceObj {
    return this.namespaceBook.create(id, input, api);
  }
  deleteNamespace(id: string): NamespaceObj {
    return this.namespaceBook.delete(id);
  }
  namespaceResource(nsId: string, req: ResourceRequest): NamespaceObj {
    return this.namespaceBook.resource(nsId, req);
  }

  setAccelnetMacs(macs: string[]): void {
    this.accelnetMacs = [...macs];
  }

  /** hcsshim's HNSNnvManagementMacList: MacAddressList omitted when empty (its omitempty tag). */
  accelnetMacList(): Obj {
    return this.accelnetMacs.length > 0 ? { MacAddressList: this.accelnetMacs.map((m) => ({ MacAddress: m })) } : {};
  }

  // ---- lifecycle -----------------------------------------------------------------------------------------

  /**
   * What an HNS restart leaves. Sources, and what none of them says:
   *  - Endpoints vanish: "the pod still running and hold that IP, but hnsendpoints has been removed and is not
   *    automatically re-create" (docker/for-win#12425, Windows Server 2022; the same report as projectcalico/calico#5164,
   *    where felix then logs "Failed to look up one or more HNS endpoints").
   *  - Non-persistent networks (flag 8) vanish and persistent ones stay: the flag is what Azure CNI sets so a reboot
   *    clears its networks (Azure/azure-container-networking network/network_windows.go hcn.EnableNonPersistent);
   *    HNS's networks are what it reloads from its store (Azure/azure-container-networking#283).
   *  - Newer HNS builds rehydrate: "After HNS restarted, the LoadBalancers were restored through the HNS
   *    backup/restore (rehydration) mechanism" (kubernetes/kubernetes#139519), and Azure's CI restarts HNS and then
   *    expects every pod IP to have its endpoint ("restarting HNS again to make sure Endpoints rehydrate correctly",
   *    Azure/azure-container-networking test/capz/npm/npm-e2e.sh; .pipelines/cni/load-test-templates/
   *    restart-hns-template.yaml). That build's behaviour is not modelled: there, nothing is missing to repair.
   *  - HCN namespaces: no public source says whether a restart drops them. The reports above name only endpoints, and
   *    the compartment behind a namespace holds the running pod (microsoft/Windows-Containers#401: HNS creates it when
   *    the container starts in the namespace), so they are kept by default; `dropNamespaces` drops all of them (true)
   *    or the listed ones, for the other possibility (then the pods in them cannot be re-attached).
   */
  restart(options: { dropNamespaces?: boolean | readonly string[]; rehydrate?: boolean } = {}): void {
    if (options.rehydrate) return this.rehydrate();
    this.endpointBook.forget();
    this.namespaceBook.restart(options.dropNamespaces);
    this.networkBook.dropNonPersistent();
    this.computeSystems.forgetEndpoints();
    // SDN objects (load balancers, policy lists, routes) go too: "HNS service may crash and HNS policies will be purged
    // after it is restarted", which is why AKS restarts kube-proxy when HNS's process id changes (Azure/AgentBaker
    // staging/cse/windows/provisioningscripts/hnsremediator.ps1). On the builds that rehydrate they are restored, as
    // endpoints are (kubernetes/kubernetes#139519, above): not modelled. No source names v2 routes by themselves.
    this.sdn.clear();
  }

  /**
   * `restart --rehydrate`: a build that restores its endpoints after a restart (kubernetes/kubernetes#139519, above)
   * and still loses their policies — "a HNS crash purges DNS policy on the node" (Azure/aks-engine pull 4975, whose
   * hnsremediator restarts kube-proxy to program them again). Which policies go is not said; all of them go here.
   */
  private rehydrate(): void {
    for (const e of this.endpoints.values()) {
      e.policies = [];
      e.version++;
    }
    this.sdn.clear();
  }

  clear(): void {
    this.networks.clear();
    this.endpointBook.forget();
    this.namespaceBook.clear();
    this.computeSystems.clear();
    this.sdn.clear();
    this.accelnetMacs = [];
  }

  persistentNetworks(): NetworkObj[] {
    return this.networkBook.persistent();
  }

  load(networks: NetworkObj[]): void {
    this.networkBook.load(networks);
  }
}
