/**
 * HNS's error table through the whole stack: the simulator produces the HRESULT and error record, the client
 * library hands them over the C ABI, the addon rejects with HcnError, and the facade names and classifies it.
 * Every expected value is written out here by hand (not taken from src/hns/hresults.ts), so a wrong entry in the
 * shared table, a lost record, or a mangled HRESULT fails a test.
 */
import {
  HcnError,
  isAdapterUnavailable,
  isAlreadyExists,
  isNotFound,
  isTimeout,
  isUnreachable,
} from '../../src/hns/hcn-error';
import type { Hcn } from '../../src/hns/hcn';
import type { SimControl } from '../../src/sim';
import { hungOn } from '../plugin/support';
import { describeError, l2bridge, nat, rejectionOf, useHcn } from './helpers';

const fx = useHcn();

const UNKNOWN = '0badf00d-0000-4000-8000-000000000001';
const NET_ID = '5f0b1190-63be-4e0c-b974-bd0f55675a42';

interface Case {
  name: string;
  /** The failing call (after any setup it needs). */
  act: (hcn: Hcn, control: SimControl) => Promise<unknown>;
  op: string;
  hresult: number;
  code: string;
  /** HNS's message, without the trailing space the record carries. */
  text: string;
  is?: Partial<Record<'isNotFound' | 'isUnreachable' | 'isAlreadyExists' | 'isAdapterUnavailable', boolean>>;
}

async function networkWithEndpoint(hcn: Hcn): Promise<{ net: string; ep: string }> {
  const n = await hcn.createNetwork(l2bridge('with-ep'));
  const e = await hcn.createEndpoint(n.ID!, { Name: 'ep' });
  return { net: n.ID!, ep: e.ID! };
}

const cases: Case[] = [
  {
    name: 'unknown network (get)',
    act: (hcn) => hcn.getNetwork(UNKNOWN),
    op: 'HcnOpenNetwork',
    hresult: 0x803b0001,
    code: 'HCN_E_NETWORK_NOT_FOUND',
    text: 'The network was not found.',
    is: { isNotFound: true },
  },
  {
    name: 'unknown network (delete)',
    act: (hcn) => hcn.deleteNetwork(UNKNOWN),
    op: 'HcnDeleteNetwork',
    hresult: 0x803b0001,
    code: 'HCN_E_NETWORK_NOT_FOUND',
    text: 'The network was not found.',
    is: { isNotFound: true },
  },
  {
    name: 'unknown network (create an endpoint on it)',
    act: (hcn) => hcn.createEndpoint(UNKNOWN, { Name: 'orphan' }),
    op: 'HcnOpenNetwork',
    hresult: 0x803b0001,
    code: 'HCN_E_NETWORK_NOT_FOUND',
    text: 'The network was not found.',
    is: { isNotFound: true },
  },
  {
    name: 'unknown endpoint',
    act: (hcn) => hcn.deleteEndpoint(UNKNOWN),
    op: 'HcnDeleteEndpoint',
    hresult: 0x803b0002,
    code: 'HCN_E_ENDPOINT_NOT_FOUND',
    text: 'The endpoint was not found.',
    is: { isNotFound: true },
  },
  {
    name: 'unknown endpoint (v1 GET)',
    act: (hcn) => hcn.hnsCall('GET', `/endpoints/${UNKNOWN}`),
    op: 'HNSCall GET /endpoints/{id}',
    hresult: 0x803b0002,
    code: 'HCN_E_ENDPOINT_NOT_FOUND',
    text: 'The endpoint was not found.',
    is: { isNotFound: true },
  },
  {
    name: 'unknown namespace',
    act: (hcn) => hcn.getNamespace(UNKNOWN),
    op: 'HcnOpenNamespace',
    hresult: 0x80070490,
    code: 'ERROR_NOT_FOUND',
    text: 'Element not found.',
    is: { isNotFound: true },
  },
  {
    name: 'unknown namespace (v1 addresource)',
    act: (hcn) => hcn.hnsCall('POST', `/namespaces/${UNKNOWN}/addresource`, { Type: 'Endpoint', Data: { Id: NET_ID } }),
    op: 'HNSCall POST /namespaces/{id}/addresource',
    hresult: 0x80070490,
    code: 'ERROR_NOT_FOUND',
    text: 'Element not found.',
    is: { isNotFound: true },
  },
  {
    name: 'duplicate name',
    act: async (hcn) => {
      await hcn.createNetwork(nat('twin', '172.16.1.0/24'));
      return hcn.createNetwork(nat('twin', '172.16.2.0/24'));
    },
    op: 'HcnCreateNetwork',
    hresult: 0x803b0010,
    code: 'HCN_E_NETWORK_ALREADY_EXISTS',
    text: 'A network with this name already exists.',
    is: { isAlreadyExists: true },
  },
  {
    name: 'duplicate name (v1 POST)',
    act: async (hcn) => {
      await hcn.createNetwork(nat('twin', '172.16.1.0/24'));
      return hcn.hnsCall('POST', '/networks/', { Name: 'twin', Type: 'nat' });
    },
    op: 'HNSCall POST /networks',
    hresult: 0x803b0010,
    code: 'HCN_E_NETWORK_ALREADY_EXISTS',
    text: 'A network with this name already exists.',
    is: { isAlreadyExists: true },
  },
  {
    name: 'duplicate id',
    act: async (hcn) => {
      await hcn.createNetwork(nat('first', '172.16.1.0/24'), NET_ID);
      return hcn.createNetwork(nat('second', '172.16.2.0/24'), NET_ID.toUpperCase());
    },
    op: 'HcnCreateNetwork',
    hresult: 0x800700b7,
    code: 'ERROR_ALREADY_EXISTS',
    text: 'Cannot create a file when that file already exists.',
    is: { isAlreadyExists: true },
  },
  {
    name: 'invalid JSON (settings the addon passes through unparsed)',
    act: (hcn) => hcn.native.createNetwork(null, '{"Name": "half', null),
    op: 'HcnCreateNetwork',
    hresult: 0x803b001b,
    code: 'HCN_E_INVALID_JSON',
    text: 'Invalid JSON document string.',
  },
  {
    name: 'invalid JSON (modify Settings as a broken JSON string)',
    act: async (hcn) => {
      const n = await hcn.createNetwork(l2bridge('json'));
      return hcn.modifyNetwork(n.ID!, { ResourceType: 'Policy', RequestType: 'Add', Settings: '{"Policies": [' });
    },
    op: 'HcnModifyNetwork',
    hresult: 0x803b001b,
    code: 'HCN_E_INVALID_JSON',
    text: 'Invalid JSON document string.',
  },
  {
    name: 'invalid JSON (v1 body)',
    act: (hcn) => hcn.hnsCall('POST', '/networks/', 'not json'),
    op: 'HNSCall POST /networks',
    hresult: 0x803b001b,
    code: 'HCN_E_INVALID_JSON',
    text: 'Invalid JSON document string.',
  },
  {
    name: 'invalid network configuration (L2Bridge without a subnet)',
    act: (hcn) => hcn.createNetwork({ Name: 'no-subnet', Type: 'L2Bridge' }),
    op: 'HcnCreateNetwork',
    hresult: 0x803b000a,
    code: 'HCN_E_INVALID_NETWORK',
    text: 'The provided network configuration is invalid or missing parameters.',
  },
  {
    name: 'invalid network configuration (gateway outside its subnet)',
    act: (hcn) => hcn.createNetwork(l2bridge('bad-gw', '10.10.0.0/24', '10.99.0.1')),
    op: 'HcnCreateNetwork',
    hresult: 0x803b000a,
    code: 'HCN_E_INVALID_NETWORK',
    text: 'The provided network configuration is invalid or missing parameters.',
  },
  {
    name: 'unknown network type',
    act: (hcn) => hcn.createNetwork({ Name: 'odd', Type: 'Bogus' }),
    op: 'HcnCreateNetwork',
    hresult: 0x803b000b,
    code: 'HCN_E_INVALID_NETWORK_TYPE',
    text: 'Invalid network type.',
  },
  {
    name: 'invalid policy (SDNRoute without DestinationPrefix)',
    act: async (hcn) => {
      const n = await hcn.createNetwork(l2bridge('pol'));
      return hcn.createEndpoint(n.ID!, { Name: 'ep', Policies: [{ Type: 'SDNRoute', Settings: { NeedEncap: true } }] });
    },
    op: 'HcnCreateEndpoint',
    hresult: 0x803b000d,
    code: 'HCN_E_INVALID_POLICY',
    text: 'The provided policy configuration is invalid or missing parameters.',
  },
  {
    name: 'unknown policy type',
    act: (hcn) =>
      hcn.createNetwork(l2bridge('pol', undefined, undefined, { Policies: [{ Type: 'NoSuchPolicy', Settings: {} }] })),
    op: 'HcnCreateNetwork',
    hresult: 0x803b000e,
    code: 'HCN_E_INVALID_POLICY_TYPE',
    text: 'Invalid policy type.',
  },
  {
    name: 'duplicate IP',
    act: async (hcn) => {
      const n = await hcn.createNetwork(l2bridge('ips'));
      await hcn.createEndpoint(n.ID!, { Name: 'a', IpConfigurations: [{ IpAddress: '10.10.0.7', PrefixLength: 24 }] });
      return hcn.createEndpoint(n.ID!, { Name: 'b', IpConfigurations: [{ IpAddress: '10.10.0.7', PrefixLength: 24 }] });
    },
    op: 'HcnCreateEndpoint',
    hresult: 0x803b002f,
    code: 'HCN_E_ADDR_INVALID_OR_RESERVED',
    text: 'An address provided is invalid or reserved.',
  },
  {
    name: 'endpoint already in a namespace',
    act: async (hcn) => {
      const { ep } = await networkWithEndpoint(hcn);
      const ns1 = await hcn.createNamespace();
      const ns2 = await hcn.createNamespace();
      await hcn.addNamespaceEndpoint(ns1.ID!, ep);
      return hcn.addNamespaceEndpoint(ns2.ID!, ep);
    },
    op: 'HcnModifyNamespace',
    hresult: 0x803b002b,
    code: 'HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS',
    text: 'This requested operation is invalid as endpoint is already part of a network namespace.',
  },
  {
    name: 'endpoint already attached to the container (v1 attach)',
    act: async (hcn) => {
      const { ep } = await networkWithEndpoint(hcn);
      await hcn.hnsCall('POST', `/endpoints/${ep}/attach`, { ContainerId: 'c1', SystemType: 'Container' });
      return hcn.hnsCall('POST', `/endpoints/${ep}/attach`, { ContainerId: 'C1', SystemType: 'Container' });
    },
    op: 'HNSCall POST /endpoints/{id}/attach',
    hresult: 0x803b0014,
    code: 'HCN_E_ENDPOINT_ALREADY_ATTACHED',
    text: 'This endpoint is already attached to the switch.',
  },
  {
    name: 'network with endpoints, refuse mode',
    act: async (hcn, control) => {
      await control.setDeleteNetworkWithEndpoints('refuse');
      const { net } = await networkWithEndpoint(hcn);
      return hcn.deleteNetwork(net);
    },
    op: 'HcnDeleteNetwork',
    hresult: 0x803b002c,
    code: 'HCN_E_ENTITY_HAS_REFERENCES',
    text: 'The specified entity cannot be removed while it still has references.',
  },
  {
    name: 'adapter already bound',
    act: async (hcn) => {
      const policies = [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet 2' } }];
      await hcn.createNetwork(l2bridge('first', '10.1.0.0/24', '10.1.0.1', { Policies: policies }));
      return hcn.createNetwork(l2bridge('second', '10.2.0.0/24', '10.2.0.1', { Policies: policies }));
    },
    op: 'HcnCreateNetwork',
    hresult: 0x803b0006,
    code: 'HCN_E_ADAPTER_NOT_FOUND',
    text: 'An adapter was not found.',
    is: { isAdapterUnavailable: true },
  },
  {
    name: 'adapter that does not exist',
    act: (hcn) =>
      hcn.createNetwork(
        l2bridge('nic', undefined, undefined, {
          Policies: [{ Type: 'NetAdapterName', Settings: { NetworkAdapterName: 'Ethernet 9' } }],
        }),
      ),
    op: 'HcnCreateNetwork',
    hresult: 0x803b0006,
    code: 'HCN_E_ADAPTER_NOT_FOUND',
    text: 'An adapter was not found.',
    is: { isAdapterUnavailable: true },
  },
  {
    name: 'HCN (v2) disabled on this host',
    act: async (hcn, control) => {
      await control.setVersion(9, 1, { v2: false });
      return hcn.listNetworks();
    },
    op: 'HcnEnumerateNetworks',
    hresult: 0x80004001,
    code: 'E_NOTIMPL',
    text: 'Not implemented.',
  },
  {
    name: 'HNS restarting',
    act: async (hcn, control) => {
      // Down past the call whatever the machine's load (the next test's reset ends the outage), not for a window
      // the call could miss.
      await control.restart({ downMs: 600_000 });
      return hcn.createNetwork(nat('during-restart', '172.16.9.0/24'));
    },
    op: 'HcnCreateNetwork',
    hresult: 0x800706bf,
    code: 'RPC_S_CALL_FAILED_DNE',
    text: 'The remote procedure call failed and did not execute.',
    is: { isUnreachable: true },
  },
];

describe('the error table through addon and facade', () => {
  test.each(cases)('$name → $code', async (c) => {
    const e = await rejectionOf(c.act(fx.hcn, fx.control));
    expect(e).toBeInstanceOf(HcnError);
    const hex = '0x' + c.hresult.toString(16).toUpperCase().padStart(8, '0');
    expect(describeError(e)).toEqual({
      op: c.op,
      hresult: hex,
      code: c.code,
      // HNS's record: FormatMessage's trailing space kept, the HRESULT as an unsigned decimal.
      errorRecord: { Success: false, Error: `${c.text} `, ErrorCode: c.hresult },
      message: `${c.op} failed: ${c.text} (${hex} ${c.code})`,
      isNotFound: false,
      isUnreachable: false,
      isAlreadyExists: false,
      isAdapterUnavailable: false,
      ...c.is,
    });
    expect(e.hresult).toBe(c.hresult); // unsigned, never the signed int32 the C side holds
  });

  test('v1 keeps working while v2 is disabled, and reports the version that made it so', async () => {
    const { hcn, control } = fx;
    await control.setVersion(9, 1, { v2: false });
    expect(await hcn.version()).toEqual({ major: 9, minor: 1 });
    const n = await hcn.hnsCall<{ ID: string }>('POST', '/networks/', { Name: 'old-host', Type: 'nat' });
    expect(await hcn.hnsCall('GET', `/networks/${n.ID}`)).toMatchObject({ Name: 'old-host' });
  });

  test('a restart fails calls in flight with 0x800706BF, then forgets non-persistent objects only', async () => {
    const { hcn, control } = fx;
    const persistent = await hcn.createNetwork(nat('persistent', '172.16.3.0/24'));
    const volatile = await hcn.createNetwork(nat('volatile', '172.16.4.0/24', { Flags: 8 }));
    await hcn.createEndpoint(persistent.ID!, { Name: 'ep' });
    await control.hang('HcnCreateNetwork');
    const inFlight = rejectionOf(hcn.createNetwork(nat('in-flight', '172.16.5.0/24')));
    await hungOn(control, 'HcnCreateNetwork');
    await control.restart({ downMs: 0 });
    expect(describeError(await inFlight)).toMatchObject({
      op: 'HcnCreateNetwork',
      hresult: '0x800706BF',
      isUnreachable: true,
    });
    expect((await hcn.listNetworks()).map((n) => n.Name)).toEqual(['persistent']);
    expect(await hcn.listEndpoints()).toEqual([]);
    expect(volatile.Flags).toBe(8);
  });

  test("an unreachable simulator: RPC_S_SERVER_UNAVAILABLE with the client library's own record", async () => {
    const { hcn, sim } = fx;
    const saved = process.env.HCN_SIM;
    process.env.HCN_SIM = 'unix:/nonexistent/hns.sock';
    try {
      const e = await rejectionOf(hcn.listNetworks());
      expect(describeError(e)).toMatchObject({
        op: 'HcnEnumerateNetworks',
        hresult: '0x800706BA',
        code: 'RPC_S_SERVER_UNAVAILABLE',
        isUnreachable: true,
        isNotFound: false,
      });
      expect(e.errorRecord).toEqual({
        Success: false,
        Error: expect.stringContaining('hcn-sim client: '),
        ErrorCode: 0x800706ba,
      });
      expect(e.message).toMatch(
        /^HcnEnumerateNetworks failed: hcn-sim client: .+ \(0x800706BA RPC_S_SERVER_UNAVAILABLE\)$/,
      );
    } finally {
      process.env.HCN_SIM = saved;
    }
    expect(process.env.HCN_SIM).toBe(sim.address);
    await expect(hcn.listNetworks()).resolves.toEqual([]);
  });

  test('a fault-injected HRESULT arrives unchanged, and predicates stay false for other failures', async () => {
    const { hcn, control } = fx;
    await control.failCall('HcnEnumerateEndpoints', 0x80004005);
    const e = await rejectionOf(hcn.listEndpoints());
    expect(describeError(e)).toEqual({
      op: 'HcnEnumerateEndpoints',
      hresult: '0x80004005',
      code: 'E_FAIL',
      errorRecord: { Success: false, Error: 'Unspecified error ', ErrorCode: 0x80004005 },
      message: 'HcnEnumerateEndpoints failed: Unspecified error (0x80004005 E_FAIL)',
      isNotFound: false,
      isUnreachable: false,
      isAlreadyExists: false,
      isAdapterUnavailable: false,
    });
    expect(isTimeout(e)).toBe(false);
    // Once: the next call succeeds.
    await expect(hcn.listEndpoints()).resolves.toEqual([]);
    // Non-HcnErrors are never classified.
    for (const p of [isNotFound, isUnreachable, isAlreadyExists, isAdapterUnavailable, isTimeout])
      expect(p(new Error('x'))).toBe(false);
  });
});
