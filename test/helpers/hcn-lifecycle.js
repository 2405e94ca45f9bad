// @ts-check
/**
 * One lifecycle that reaches every function of the addon's list (native/include/hcn_functions.h) through the addon's
 * own exports, JSON text in and out. The two coverage guards run it and then read stats(): test/hns/roundtrip.test.ts
 * ("native.stats()": hcn.node and libhcnsim.so on Linux) and test/windows/fixtures/addon-probe.js (the win-x64 addon
 * under wine, through GetProcAddress). A function added to the list fails both until it is called here, once.
 *
 * Plain CommonJS without dependencies, because Windows' node.exe runs it under wine from this tree. It leaves nothing
 * behind: every object it creates it deletes, and the compute system it hot-attaches to keeps no endpoint.
 */
'use strict';

const V2 = { SchemaVersion: { Major: 2, Minor: 0 } };
const QUERY = JSON.stringify(V2);
const ID = (/** @type {string} */ text) => /** @type {{ ID: string }} */ (JSON.parse(text)).ID;
const addPolicy = (/** @type {string} */ Type) =>
  JSON.stringify({ ResourceType: 'Policy', RequestType: 'Add', Settings: { Policies: [{ Type, Settings: {} }] } });

/**
 * @param {import('../../src/hns/native-types').NativeHcn} native an initialised addon (init() called)
 * @param {{ container: string, name?: string }} options container: a compute system HCS knows (the hot attach);
 *   name: a prefix for the objects' names
 */
async function runLifecycle(native, { container, name = 'lifecycle' }) {
  const network = ID(
    await native.createNetwork(
      null,
      JSON.stringify({
        ...V2,
        Name: `${name}-net`,
        Type: 'L2Bridge',
        Ipams: [{ Type: 'Static', Subnets: [{ IpAddressPrefix: '10.10.0.0/24' }] }],
      }),
      QUERY,
    ),
  );
  await native.enumerateNetworks(QUERY);
  await native.getNetworkProperties(network, QUERY);
  await native.listNetworksDetailed(QUERY);
  await native.modifyNetwork(network, addPolicy('HostRoute'));

  const endpoint = ID(
    await native.createEndpoint(
      network,
      null,
      JSON.stringify({ ...V2, Name: `${name}-ep`, HostComputeNetwork: network }),
      QUERY,
    ),
  );
  await native.enumerateEndpoints(QUERY);
  await native.getEndpointProperties(endpoint, QUERY);
  await native.listEndpointsDetailed(QUERY);
  await native.modifyEndpoint(endpoint, addPolicy('L2Driver'));

  const namespace = ID(await native.createNamespace(null, JSON.stringify(V2), QUERY));
  await native.enumerateNamespaces(QUERY);
  await native.getNamespaceProperties(namespace, QUERY);
  await native.listNamespacesDetailed(QUERY);
  for (const RequestType of ['Add', 'Remove'])
    await native.modifyNamespace(
      namespace,
      JSON.stringify({ ResourceType: 'Endpoint', RequestType, Settings: { EndpointId: endpoint } }),
    );
  await native.deleteNamespace(namespace);

  // HCS hot attach and detach (vmcompute.dll's compute-system functions).
  for (const RequestType of ['Add', 'Remove'])
    await native.modifyComputeSystem(
      container,
      JSON.stringify({ ResourceType: 'Network', RequestType, Settings: endpoint }),
    );
  await native.deleteEndpoint(endpoint);
  await native.deleteNetwork(network);

  // HNS v1 (vmcompute.dll's HNSCall), the host's adapters, and HNS's service notifications (an optional capability
  // the simulator client has; under wine a Winsock connection read by a std::thread): registered, then released.
  await native.hnsCall('GET', '/globals/version', null);
  await native.listAdapters();
  await native.unregisterServiceCallback(await native.registerServiceCallback(() => undefined));
}

module.exports = { runLifecycle };
