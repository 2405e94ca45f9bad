/**
 * Load balancers, SDN routes and v1 policy lists (src/sim/sdn-objects.ts), as hcsshim drives them
 * (hcn/hcnloadbalancer.go, hcn/hcnroute.go, internal/hns/hnspolicylist.go), and HCS compute-system properties.
 */
import { HR } from '../../src/hns/hresults';
import {
  LOWER_GUID,
  Q2,
  V2,
  expectFailure,
  filterQuery,
  natNetwork,
  ok,
  okJson,
  output,
  useSimulator,
} from './helpers';

const fx = useSimulator();
const GUID_NULL = '00000000-0000-0000-0000-000000000000';
const HCN_E_INVALID_INTERNAL_PORT = 0x803b002d;

async function twoEndpoints(): Promise<[string, string]> {
  const net = ok(await fx.c.createNetwork(null, natNetwork('nat-lb')));
  const a = ok(await fx.c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'ep-a' })));
  const b = ok(await fx.c.createEndpoint(net, null, JSON.stringify({ ...V2, Name: 'ep-b' })));
  return [a, b];
}

const call = (op: string, fields: Record<string, string | null> = {}) => fx.c.call({ op, ...fields });

/** hcsshim HcnCreateTestLoadBalancer's shape (hcn/hcnutils_test.go): one TCP port mapping, a VIP. */
const lb = (endpoints: string[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    ...V2,
    HostComputeEndpoints: endpoints,
    SourceVIP: '10.0.0.10',
    FrontendVIPs: ['10.96.0.10'],
    PortMappings: [{ Protocol: 6, InternalPort: 8080, ExternalPort: 80 }],
    ...extra,
  });

describe('load balancers', () => {
  test('create, open, query, enumerate (filter by ID), update with a second backend, delete', async () => {
    const [a, b] = await twoEndpoints();
    const id = ok(await call('HcnCreateLoadBalancer', { id: GUID_NULL, settings: lb([a]) }));
    expect(id).toMatch(LOWER_GUID);
    expect(ok(await call('HcnOpenLoadBalancer', { id }))).toBe(id);
    expect(okJson(await call('HcnQueryLoadBalancerProperties', { id, query: Q2 }))).toEqual({
      ID: id,
      HostComputeEndpoints: [a],
      SourceVIP: '10.0.0.10',
      FrontendVIPs: ['10.96.0.10'],
      PortMappings: [{ Protocol: 6, InternalPort: 8080, ExternalPort: 80 }],
      SchemaVersion: { Major: 2, Minor: 0 },
    });
    expect(JSON.parse(ok(await call('HcnEnumerateLoadBalancers', { query: Q2 })))).toEqual([id]);
    expect(
      JSON.parse(ok(await call('HcnEnumerateLoadBalancers', { query: filterQuery({ ID: id.toUpperCase() }) }))),
    ).toEqual([id]);

    // hcsshim updateLoadBalancer: the whole document again through HcnModifyLoadBalancer
    ok(await call('HcnModifyLoadBalancer', { id, settings: lb([a, b]) }));
    expect(okJson(await call('HcnQueryLoadBalancerProperties', { id, query: Q2 })).HostComputeEndpoints).toEqual([
      a,
      b,
    ]);

    ok(await call('HcnDeleteLoadBalancer', { id }));
    expect(JSON.parse(ok(await call('HcnEnumerateLoadBalancers', { query: Q2 })))).toEqual([]);
    expectFailure(await call('HcnOpenLoadBalancer', { id }), HR.ERROR_NOT_FOUND, 'Element not found.');
  });

  test('DSR (Flags 1) where HNS has it, refused on an HNS without DSR; ILB port-mapping flags kept', async () => {
    const [a] = await twoEndpoints();
    const dsr = lb([a], { Flags: 1, PortMappings: [{ Protocol: 17, InternalPort: 53, ExternalPort: 53, Flags: 1 }] });
    const id = ok(await call('HcnCreateLoadBalancer', { id: GUID_NULL, settings: dsr }));
    expect(okJson(await call('HcnQueryLoadBalancerProperties', { id, query: Q2 }))).toMatchObject({
      Flags: 1,
      PortMappings: [{ Protocol: 17, InternalPort: 53, ExternalPort: 53, Flags: 1 }],
    });
    await fx.sim.control.setVersion(10, 1); // DSRVersion: 9.3–9.x, 10.2 on
    const r = await call('HcnCreateLoadBalancer', { id: GUID_NULL, settings: dsr });
    expect(r.hr).toBe(HR.INVALID_POLICY);
  });

  test('refusals: unknown endpoint, no internal port, bad VIP, bad JSON; nothing is stored', async () => {
    const [a] = await twoEndpoints();
    const create = (settings: string) => call('HcnCreateLoadBalancer', { id: GUID_NULL, settings });
    expect((await create(lb(['11111111-2222-3333-4444-555555555555']))).hr).toBe(HR.ENDPOINT_NOT_FOUND);
    expect((await create(lb([a], { PortMappings: [{ Protocol: 6, ExternalPort: 80 }] }))).hr).toBe(
      HCN_E_INVALID_INTERNAL_PORT,
    );
    expect((await create(lb([a], { FrontendVIPs: ['10.96.0.300'] }))).hr).toBe(HR.INVALID_IP);
    expect((await create('{')).hr).toBe(HR.INVALID_JSON);
    expect(JSON.parse(ok(await call('HcnEnumerateLoadBalancers', { query: Q2 })))).toEqual([]);
  });
});

describe('SDN routes', () => {
  test('create, query, enumerate, delete; modify is E_NOTIMPL (hcsshim: "HCNRoute doesn\'t implement modify")', async () => {
    const [a] = await twoEndpoints();
    const settings = JSON.stringify({
      ...V2,
      HostComputeEndpoints: [a],
      Setting: [{ DestinationPrefix: '169.254.169.254/24', NextHop: '127.0.0.10', NeedEncap: true }],
    });
    const id = ok(await call('HcnCreateSdnRoute', { id: GUID_NULL, settings }));
    expect(okJson(await call('HcnQuerySdnRouteProperties', { id, query: Q2 }))).toEqual({
      ID: id,
      HostComputeEndpoints: [a],
      Setting: [{ DestinationPrefix: '169.254.169.254/24', NextHop: '127.0.0.10', NeedEncap: true }],
      SchemaVersion: { Major: 2, Minor: 0 },
    });
    expect(JSON.parse(ok(await call('HcnEnumerateSdnRoutes', { query: filterQuery({ ID: id }) })))).toEqual([id]);
    expectFailure(await call('HcnModifySdnRoute', { id, settings }), HR.E_NOTIMPL, 'Not implemented.');
    ok(await call('HcnDeleteSdnRoute', { id }));
    expect(JSON.parse(ok(await call('HcnEnumerateSdnRoutes', { query: Q2 })))).toEqual([]);
  });

  test('a bad prefix is HCN_E_INVALID_PREFIX, a bad next hop HCN_E_INVALID_IP', async () => {
    const [a] = await twoEndpoints();
    const route = (s: Record<string, unknown>) =>
      call('HcnCreateSdnRoute', {
        id: GUID_NULL,
        settings: JSON.stringify({ ...V2, HostComputeEndpoints: [a], Setting: [s] }),
      });
    expect((await route({ DestinationPrefix: '10.0.0.0/33', NextHop: '10.0.0.1' })).hr).toBe(HR.INVALID_PREFIX);
    expect((await route({ DestinationPrefix: '10.0.0.0/8', NextHop: 'x' })).hr).toBe(HR.INVALID_IP);
  });
});

describe('v1 policy lists', () => {
  test('hcsshim AddLoadBalancer / AddRoute shapes: POST, GET, list, DELETE answers the list', async () => {
    const [a, b] = await twoEndpoints();
    const elb = {
      References: [`/endpoints/${a}`, `/endpoints/${b}`],
      Policies: [{ Type: 'ELB', Protocol: 6, InternalPort: 80, ExternalPort: 8080, VIPs: ['10.96.0.1'], ILB: true }],
    };
    const created = output(await fx.c.hnsCall('POST', '/policylists/', JSON.stringify(elb)));
    expect(created).toMatchObject({ ...elb, ID: expect.stringMatching(/^[0-9A-F-]{36}$/) });
    expect(output(await fx.c.hnsCall('GET', `/policylists/${created.ID}`))).toEqual(created);
    const route = {
      References: [`/endpoints/${a}`],
      Policies: [{ Type: 'ROUTE', DestinationPrefix: '10.0.0.0/8', NeedEncap: true }],
    };
    const r2 = output(await fx.c.hnsCall('POST', '/policylists/', JSON.stringify(route)));
    expect((output(await fx.c.hnsCall('GET', '/policylists/')) as Array<{ ID: string }>).map((p) => p.ID)).toEqual([
      created.ID,
      r2.ID,
    ]);
    expect(output(await fx.c.hnsCall('DELETE', `/policylists/${created.ID}`))).toEqual(created);
    const gone = JSON.parse((await fx.c.hnsCall('GET', `/policylists/${created.ID}`)).result!);
    expect(gone).toMatchObject({ Success: false, ErrorCode: HR.ERROR_NOT_FOUND });
  });

  test('an unknown endpoint reference, an unknown policy type and an ELB without internal port are refused', async () => {
    const [a] = await twoEndpoints();
    const post = async (doc: unknown) =>
      JSON.parse((await fx.c.hnsCall('POST', '/policylists/', JSON.stringify(doc))).result!) as { ErrorCode: number };
    expect(
      (await post({ References: ['/endpoints/11111111-2222-3333-4444-555555555555'], Policies: [] })).ErrorCode,
    ).toBe(HR.ENDPOINT_NOT_FOUND);
    expect((await post({ References: [`/endpoints/${a}`], Policies: [{ Type: 'NAT' }] })).ErrorCode).toBe(
      HR.INVALID_POLICY_TYPE,
    );
    expect(
      (await post({ References: [`/endpoints/${a}`], Policies: [{ Type: 'ELB', Protocol: 6, ExternalPort: 80 }] }))
        .ErrorCode,
    ).toBe(HCN_E_INVALID_INTERNAL_PORT);
    expect(output(await fx.c.hnsCall('GET', '/policylists/'))).toEqual([]);
  });
});

describe('HCS properties', () => {
  test('HcsGetComputeSystemProperties: what hcsshim getCachedProperties reads; absent system is ErrComputeSystemDoesNotExist', async () => {
    await fx.sim.control.addContainer('c0ffee');
    const props = okJson(await call('HcsGetComputeSystemProperties', { id: 'c0ffee', query: '{}' }));
    expect(props).toEqual({
      Id: 'c0ffee',
      Name: 'c0ffee',
      SystemType: 'Container',
      RuntimeOsType: 'Windows',
      Owner: '',
      State: 'Running',
    });
    const r = await call('HcsGetComputeSystemProperties', { id: 'nope', query: '{}' });
    expect(r.hr).toBe(HR.HCS_SYSTEM_NOT_FOUND);
  });
});

describe('v1 /accelnet/', () => {
  test('hcsshim TestAccelnetNnvManagementMacAddresses: set two, get two, delete answers none, get none', async () => {
    const list = { MacAddressList: [{ MacAddress: '00-15-5D-0A-B7-C6' }, { MacAddress: '00-15-5D-38-01-00' }] };
    expect(output(await fx.c.hnsCall('POST', '/accelnet/', JSON.stringify(list)))).toEqual(list);
    expect(output(await fx.c.hnsCall('GET', '/accelnet/'))).toEqual(list);
    expect(output(await fx.c.hnsCall('DELETE', '/accelnet/'))).toEqual({});
    expect(output(await fx.c.hnsCall('GET', '/accelnet/'))).toEqual({});
  });

  test('below HNS 15.4 (AccelnetVersion) it is not implemented; a malformed MAC is refused', async () => {
    const bad = JSON.parse(
      (await fx.c.hnsCall('POST', '/accelnet/', '{"MacAddressList":[{"MacAddress":"zz"}]}')).result!,
    );
    expect(bad).toMatchObject({ Success: false, ErrorCode: HR.E_INVALIDARG });
    await fx.sim.control.setVersion(15, 3);
    const old = JSON.parse((await fx.c.hnsCall('GET', '/accelnet/')).result!);
    expect(old).toMatchObject({ Success: false, ErrorCode: HR.E_NOTIMPL });
  });
});

describe('an HNS restart', () => {
  // "HNS policies will be purged after it is restarted" (Azure/AgentBaker
  // staging/cse/windows/provisioningscripts/hnsremediator.ps1): src/sim/store.ts restart().
  test('purges load balancers, with the endpoints they named', async () => {
    const [a] = await twoEndpoints();
    const id = ok(await call('HcnCreateLoadBalancer', { id: GUID_NULL, settings: lb([a]) }));
    expect(JSON.parse(ok(await call('HcnEnumerateLoadBalancers', { query: Q2 })))).toEqual([id]);
    await fx.sim.control.restart();
    expect(JSON.parse(ok(await call('HcnEnumerateLoadBalancers', { query: Q2 })))).toEqual([]);
  });
});
