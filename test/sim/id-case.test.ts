/**
 * Where HNS reports ids in a case of its own (found by hcsshim's own ncproxy tests under wine):
 * namespace resources list endpoint ids upper case, and Health.Extra.SwitchGuid names the network's vSwitch, which
 * HNS shows as a network (src/sim/views.ts switchGuid, resourcesOf). Also the idCase test mode (SimHost.idCase)
 * that re-cases every GUID of every answer.
 */
import { startSimulator, WireClient } from '../../src/sim';
import {
  LOWER_GUID,
  Q1,
  Q2,
  UPPER_GUID,
  V2,
  filterQuery,
  l2bridge,
  natNetwork,
  ok,
  okJson,
  output,
  useSimulator,
} from './helpers';

const fx = useSimulator();

const attach = (endpointId: string) =>
  JSON.stringify({ ResourceType: 'Endpoint', RequestType: 'Add', Settings: { EndpointId: endpointId } });

describe('namespace resources', () => {
  test('a v2 endpoint attached to a v2 namespace is listed upper case in Resources and in the v1 ResourceList', async () => {
    const { c } = fx;
    const net = ok(await c.createNetwork(null, natNetwork('nat-ns')));
    const ep = ok(await c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'ep-ns' })));
    expect(ep).toMatch(LOWER_GUID);
    const ns = ok(await c.createNamespace(null, JSON.stringify(V2)));
    // attached under its lowercase id, as hcsshim's NamespaceAttach sends it
    ok(await c.modifyNamespace(ns, attach(ep)));

    const v2 = okJson(await c.queryNamespaceProperties(ns, Q2));
    expect(v2.Resources).toEqual([{ Type: 'Endpoint', Data: { Id: ep.toUpperCase() } }]);
    const v1 = output(await c.hnsCall('GET', `/namespaces/${ns}`, null));
    expect(v1.ResourceList).toEqual([{ Type: 'Endpoint', Data: { Id: ep.toUpperCase() } }]);
    // the endpoint itself keeps its lowercase id and names its namespace as before
    const e = okJson(await c.queryEndpointProperties(ep, Q2));
    expect(e).toMatchObject({ ID: ep, HostComputeNamespace: ns });
  });

  test('v1 addresource with a lowercase id lists it upper case too', async () => {
    const { c } = fx;
    const net = ok(await c.createNetwork(null, natNetwork('nat-ns1')));
    const ep = ok(await c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'ep-ns1' })));
    const ns = output(await c.hnsCall('POST', '/namespaces/', '{}')) as { ID: string };
    const added = output(
      await c.hnsCall(
        'POST',
        `/namespaces/${ns.ID}/addresource`,
        JSON.stringify({ Type: 'Endpoint', Data: { Id: ep } }),
      ),
    );
    expect(added.ResourceList).toEqual([{ Type: 'Endpoint', Data: { Id: ep.toUpperCase() } }]);
  });
});

describe('SwitchGuid', () => {
  test.each([
    ['NAT', natNetwork('sw-nat')],
    ['L2Bridge', l2bridge('sw-l2b')],
  ])('a %s network: SwitchGuid is its own id (upper case), which GetNetworkByID resolves to it', async (_t, doc) => {
    const { c } = fx;
    const id = ok(await c.createNetwork(null, doc));
    const v2 = okJson(await c.queryNetworkProperties(id, Q2));
    expect(v2.Health.Extra.SwitchGuid).toBe(id.toUpperCase());
    expect(v2.Health.Extra.SwitchGuid).toMatch(UPPER_GUID);
    // hcsshim GetNetworkByID: a filter {"ID": <SwitchGuid>} (cmd/ncproxy/hcn.go)
    expect(JSON.parse(ok(await c.enumerateNetworks(filterQuery({ ID: v2.Health.Extra.SwitchGuid }))))).toEqual([id]);
    // v1 carries it at the top level (rancher/rke2 issue 3925)
    const v1 = okJson(await c.queryNetworkProperties(id, Q1));
    expect(v1.SwitchGuid).toBe(id.toUpperCase());
  });
});

describe('idCase test mode', () => {
  test.each(['upper', 'mixed'] as const)(
    '%s: every GUID of every answer re-cased; lookups by any case still work',
    async (idCase) => {
      const sim = await startSimulator({ host: { idCase } });
      try {
        const c = new WireClient(sim.address);
        const net = ok(await c.createNetwork(null, natNetwork('nat-case')));
        const ep = ok(await c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'ep-case' })));
        const listed = JSON.parse(ok(await c.enumerateNetworks(Q2))) as string[];
        expect(listed).toHaveLength(1);
        expect(listed[0]).not.toBe(listed[0]!.toLowerCase());
        const view = okJson(await c.queryEndpointProperties(ep.toLowerCase(), Q2));
        expect(view.ID.toLowerCase()).toBe(ep.toLowerCase());
        expect(view.ID).not.toBe(view.ID.toLowerCase());
        if (idCase === 'mixed') expect(view.ID).not.toBe(view.ID.toUpperCase());
        expect(view.HostComputeNetwork.toLowerCase()).toBe(net.toLowerCase());
        const v1 = output(await c.hnsCall('GET', `/endpoints/${ep}`, null));
        expect(v1.VirtualNetwork).not.toBe(String(v1.VirtualNetwork).toLowerCase());
      } finally {
        await sim.stop();
      }
    },
  );
});
