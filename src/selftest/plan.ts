/**
 * The self-test's plan: plain data. The objects it will use — all its own, named by the ownership scheme so that the
 * audit recognises them (src/orphans/ownership.ts) — and the named steps, each one HNS call with what the plugin
 * relies on its answer being. Arguments name the objects by token ("{{ep}}", "{{ep:upper}}"), bound when the step
 * runs: the address comes from IPAM after the claim, and HNS may give an object another id than the one asked for.
 */
import { HR } from '../hns/hresults';
import { NOT_FOUND_HRESULTS } from '../hns/hcn-error';
import { endpointName, nicNetworkName } from '../orphans/ownership';
import type { Owner, PlannedObject } from '../state/records';
import type { HnsCallRecord } from './calls';

/** What the answer must be for the plugin to work as written. */
export type Expect =
  | {
      outcome: 'ok';
      /** Paths ("IpConfigurations.0.IpAddress") that must be in the answer. */
      has?: string[];
      /** Path → token: the answer names that object (ids compared without regard to case). */
      sameId?: Record<string, string>;
      /** The answer (an array), or the array at `path`, holds the token's object (an element, or its `key`). */
      lists?: { path?: string; key?: string; token: string };
    }
  | { outcome: 'fails'; codes: readonly number[]; meaning: string };

export interface Step {
  name: string;
  /** What of the plugin rests on this answer. */
  why: string;
  call: HnsCallRecord;
  expect: Expect;
  /** Token → path in the answer: what the step learns (the id HNS gave, the address it assigned). */
  bind?: Record<string, string>;
  /** In an array answer, the element a comparison looks at: the one naming this token's object. */
  focus?: string;
}

export type NetworkChoice = { kind: 'configured'; name: string } | { kind: 'own'; subnet: string; gateway: string };

export interface PlanInput {
  owner: Owner;
  network: NetworkChoice;
  /** Ids the self-test asks HNS to give its objects (fresh GUIDs). */
  ids: { namespace: string; endpoint: string; endpoint2: string; network: string };
  /** The endpoint's address: from IPAM ("{{ip}}" bound after it), a fixed one in a network of its own, or HNS's. */
  address: 'ipam' | { ip: string; prefixLength: number } | 'hns';
  v1: boolean;
  notifications: boolean;
}

export interface SelftestPlan {
  owner: Owner;
  network: NetworkChoice;
  /** What the claim (the intent a pod's ADD would write) names before anything is created. */
  planned: PlannedObject[];
  /** Token values known before the first call. */
  bound: Record<string, string | number>;
  steps: Step[];
  /** Run at the end whatever happened, each allowed to find its object gone. */
  cleanup: HnsCallRecord[];
}

const NOT_FOUND = NOT_FOUND_HRESULTS;

export function planSelftest(input: PlanInput): SelftestPlan {
  const { owner, ids, network } = input;
  const own = network.kind === 'own';
  const epName = endpointName(owner);
  const netName = own ? nicNetworkName(owner) : network.name;
  const bound: Record<string, string | number> = {
    ns: ids.namespace,
    ep: ids.endpoint,
    ep2: ids.endpoint2,
    epName,
    netName,
    ...(own ? { net: ids.network } : {}),
    ...(typeof input.address === 'object' ? { ip: input.address.ip, prefix: input.address.prefixLength } : {}),
  };
  const planned: PlannedObject[] = [
    { kind: 'endpoint', name: epName, id: ids.endpoint },
    { kind: 'endpoint', name: epName, id: ids.endpoint2 },
    ...(own ? [{ kind: 'network' as const, name: netName, id: ids.network }] : []),
  ];
  const steps = [
    ...(input.v1 ? versionSteps() : []),
    ...networkSteps(network),
    ...endpointSteps(input.address !== 'hns'),
    ...useSteps(),
    ...(input.v1 ? v1Steps() : []),
    ...teardownSteps(input.v1),
    ...(own ? ownNetworkTeardown() : []),
    ...(input.notifications ? notificationSteps() : []),
  ];
  return { owner, network, planned, bound, steps, cleanup: cleanupCalls(own) };
}

function versionSteps(): Step[] {
  return [
    {
      name: 'hns-version',
      why: 'the API choice reads HNS v1 GET /globals/version (HCN present and version >= 9.2: v2)',
      call: { fn: 'hnsCall', args: ['GET', '/globals/version'] },
      expect: { outcome: 'ok', has: ['Major', 'Minor'] },
    },
  ];
}

function networkSteps(network: NetworkChoice): Step[] {
  const find: Step =
    network.kind === 'configured'
      ? {
          name: 'network-find-by-name',
          why: 'bridge mode finds its network by name through an HCN query filter',
          call: { fn: 'listNetworks', args: [{ Name: '{{netName}}' }] },
          // No Type: HNS omits a zero-valued enum, and NAT is zero (src/hns/api.ts canonicalType).
          expect: { outcome: 'ok', has: ['0.ID', '0.Name'] },
          bind: { net: '0.ID' },
        }
      : {
          name: 'network-create',
          why: 'delegated-NIC mode creates a network of its own with the id it chose',
          call: {
            fn: 'createNetwork',
            args: [
              {
                Name: '{{netName}}',
                Type: 'NAT',
                Ipams: [
                  {
                    Type: 'Static',
                    Subnets: [
                      {
                        IpAddressPrefix: network.subnet,
                        Routes: [{ NextHop: network.gateway, DestinationPrefix: '0.0.0.0/0' }],
                      },
                    ],
                  },
                ],
              },
              '{{net}}',
            ],
          },
          expect: { outcome: 'ok', has: ['ID', 'Name'], sameId: { ID: 'net' } },
          bind: { net: 'ID' },
        };
  return [
    find,
    {
      name: 'network-query',
      why: 'the network is opened by id and its subnets read (Ipams)',
      call: { fn: 'getNetwork', args: ['{{net}}'] },
      expect: { outcome: 'ok', has: ['ID', 'Name', 'Ipams'], sameId: { ID: 'net' } },
    },
  ];
}

function endpointSteps(knownAddress: boolean): Step[] {
  const ipConfig = knownAddress ? { IpConfigurations: [{ IpAddress: '{{ip}}', PrefixLength: '{{prefix}}' }] } : {};
  return [
    {
      name: 'namespace-create',
      why: 'a pod sandbox is an HCN namespace the runtime created with its own id',
      call: { fn: 'createNamespace', args: [{}, '{{ns}}'] },
      expect: { outcome: 'ok', has: ['ID'], sameId: { ID: 'ns' } },
    },
    {
      name: 'endpoint-create',
      why: 'ADD creates the endpoint with the id its intent claims, and reads back its MAC and addresses',
      call: { fn: 'createEndpoint', args: ['{{net}}', { Name: '{{epName}}', ...ipConfig }, '{{ep}}'] },
      expect: {
        outcome: 'ok',
        has: ['ID', 'MacAddress', 'IpConfigurations.0.IpAddress', 'HostComputeNetwork'],
        sameId: { ID: 'ep', HostComputeNetwork: 'net' },
      },
      bind: { ep: 'ID', ip: 'IpConfigurations.0.IpAddress', prefix: 'IpConfigurations.0.PrefixLength' },
    },
    {
      name: 'endpoint-query',
      why: 'CHECK, repair and DEL open the endpoint by the id the record holds',
      call: { fn: 'getEndpoint', args: ['{{ep}}'] },
      expect: { outcome: 'ok', has: ['ID', 'Name', 'MacAddress'], sameId: { ID: 'ep' } },
    },
    {
      name: 'endpoint-query-upper-case-id',
      why: 'ids are compared without regard to case: HNS must open an id in either case',
      call: { fn: 'getEndpoint', args: ['{{ep:upper}}'] },
      expect: { outcome: 'ok', has: ['ID'], sameId: { ID: 'ep' } },
    },
  ];
}

function useSteps(): Step[] {
  return [
    {
      name: 'endpoint-create-address-in-use',
      why: 'a stale endpoint holding the address is recognised by this code (bridge mode then audits its holder)',
      call: {
        fn: 'createEndpoint',
        args: [
          '{{net}}',
          { Name: '{{epName}}', IpConfigurations: [{ IpAddress: '{{ip}}', PrefixLength: '{{prefix}}' }] },
          '{{ep2}}',
        ],
      },
      expect: { outcome: 'fails', codes: [HR.ADDR_INVALID_OR_RESERVED], meaning: 'address in use' },
    },
    {
      name: 'endpoint-find-by-name',
      why: "ADD and DEL find an owner's endpoints by an HCN query filter on the name",
      call: { fn: 'enumerateEndpoints', args: [{ Name: '{{epName}}' }] },
      expect: { outcome: 'ok', lists: { token: 'ep' } },
      focus: 'ep',
    },
    {
      name: 'namespace-attach',
      why: 'ADD adds the endpoint to the pod namespace',
      call: { fn: 'addNamespaceEndpoint', args: ['{{ns}}', '{{ep}}'] },
      expect: { outcome: 'ok' },
    },
    {
      name: 'namespace-query',
      why: 'CHECK and repair ask whether the namespace lists the endpoint',
      call: { fn: 'getNamespace', args: ['{{ns}}'] },
      expect: { outcome: 'ok', lists: { path: 'Resources', key: 'Data.Id', token: 'ep' } },
    },
  ];
}

function v1Steps(): Step[] {
  return [
    {
      name: 'v1-endpoint',
      why: 'the v1 view of an endpoint: SharedContainers (hot attach), Namespace, State, the addresses',
      call: { fn: 'hnsCall', args: ['GET', '/endpoints/{{ep}}'] },
      expect: {
        outcome: 'ok',
        has: ['ID', 'Name', 'VirtualNetwork', 'MacAddress', 'IPAddress'],
        sameId: { ID: 'ep', VirtualNetwork: 'net', 'Namespace.ID': 'ns' },
      },
    },
    {
      name: 'v1-networks',
      why: 'the audit lists every network in one v1 call',
      call: { fn: 'hnsCall', args: ['GET', '/networks/'] },
      expect: { outcome: 'ok', lists: { key: 'ID', token: 'net' } },
      focus: 'net',
    },
    {
      name: 'v1-endpoints',
      why: 'the audit lists every endpoint in one v1 call',
      call: { fn: 'hnsCall', args: ['GET', '/endpoints/'] },
      expect: { outcome: 'ok', lists: { key: 'ID', token: 'ep' } },
      focus: 'ep',
    },
  ];
}

const notFound = (meaning: string): Expect => ({ outcome: 'fails', codes: NOT_FOUND, meaning });

function teardownSteps(v1: boolean): Step[] {
  return [
    {
      name: 'namespace-detach',
      why: 'DEL removes the endpoint from the namespace',
      call: { fn: 'removeNamespaceEndpoint', args: ['{{ns}}', '{{ep}}'] },
      expect: { outcome: 'ok' },
    },
    {
      name: 'namespace-detach-again',
      why: 'a second detach (a GC racing the DEL) is recognised as already done',
      call: { fn: 'removeNamespaceEndpoint', args: ['{{ns}}', '{{ep}}'] },
      expect: { outcome: 'fails', codes: [HR.ENDPOINT_NOT_ATTACHED, ...NOT_FOUND], meaning: 'not attached' },
    },
    {
      name: 'endpoint-delete',
      why: 'DEL deletes the endpoint',
      call: { fn: 'deleteEndpoint', args: ['{{ep}}'] },
      expect: { outcome: 'ok' },
    },
    {
      name: 'endpoint-query-deleted',
      why: 'teardown confirms the endpoint is gone by this code',
      call: { fn: 'getEndpoint', args: ['{{ep}}'] },
      expect: notFound('endpoint not found'),
    },
    {
      name: 'endpoint-delete-again',
      why: 'a repeated DEL treats this code as already deleted',
      call: { fn: 'deleteEndpoint', args: ['{{ep}}'] },
      expect: notFound('endpoint not found'),
    },
    ...(v1
      ? [
          {
            name: 'v1-endpoint-deleted',
            why: 'hot attach asks v1 whether the endpoint exists: a missing one is this code (or its text)',
            call: { fn: 'hnsCall', args: ['GET', '/endpoints/{{ep}}'] } as HnsCallRecord,
            expect: notFound('endpoint not found'),
          },
        ]
      : []),
    {
      name: 'namespace-delete',
      why: 'the runtime deletes the sandbox namespace after DEL',
      call: { fn: 'deleteNamespace', args: ['{{ns}}'] },
      expect: { outcome: 'ok' },
    },
    {
      name: 'namespace-query-deleted',
      why: 'CHECK tells a namespace that is gone by this code',
      call: { fn: 'getNamespace', args: ['{{ns}}'] },
      expect: notFound('namespace not found'),
    },
  ];
}

function ownNetworkTeardown(): Step[] {
  return [
    {
      name: 'network-delete',
      why: "delegated-NIC DEL deletes the pod's own network",
      call: { fn: 'deleteNetwork', args: ['{{net}}'] },
      expect: { outcome: 'ok' },
    },
    {
      name: 'network-query-deleted',
      why: 'teardown confirms the network is gone by this code',
      call: { fn: 'getNetwork', args: ['{{net}}'] },
      expect: notFound('network not found'),
    },
  ];
}

function notificationSteps(): Step[] {
  return [
    {
      name: 'notifications-register',
      why: "the service drops its HCN handles on HNS's service-disconnect notification",
      call: { fn: 'registerServiceCallback', args: [] },
      expect: { outcome: 'ok' },
      bind: { registration: '' },
    },
    {
      name: 'notifications-unregister',
      why: 'the registration is given back when the service stops',
      call: { fn: 'unregisterServiceCallback', args: ['{{registration}}'] },
      expect: { outcome: 'ok' },
    },
  ];
}

/** Whatever the steps left: each object is the self-test's own (its own ids), so deleting by id touches nothing else. */
function cleanupCalls(own: boolean): HnsCallRecord[] {
  return [
    { fn: 'removeNamespaceEndpoint', args: ['{{ns}}', '{{ep}}'] },
    { fn: 'deleteEndpoint', args: ['{{ep2}}'] },
    { fn: 'deleteEndpoint', args: ['{{ep}}'] },
    { fn: 'deleteNamespace', args: ['{{ns}}'] },
    ...(own ? [{ fn: 'deleteNetwork' as const, args: ['{{net}}'] }] : []),
  ];
}
