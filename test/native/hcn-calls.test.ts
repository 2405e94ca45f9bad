/**
 * @jest-environment <rootDir>/test/helpers/native-environment.js
 *
 * hcn.node + libhcnsim.so against a fake simulator: every export's request on the wire, its result, its errors.
 */
import type { NativeHcn } from '../../src/hns/native-types';
import { FakeSimServer, errorRecord } from './helpers/fake-sim-server';
import { TestHcnError, loadAddon, rejectionOf, simLibraryPath } from './helpers/addon';
import { HCN_FUNCTION_TABLE } from '../helpers/hcn-functions';

const NET = '5f0b1190-63be-4e0c-b974-bd0f55675a42';
const EP = 'a3c1e0b4-6a0e-4f37-9d0e-7c1e0f6f2b11';
const NS = '2c094b9e-af3a-4dc1-97d8-821b68603d23';
const NULL_GUID = '00000000-0000-0000-0000-000000000000';
const QUERY = '{"SchemaVersion":{"Major":2,"Minor":0}}';
const ADAPTER_NOT_FOUND = 0x803b0006;

let sim: FakeSimServer;
let hcn: NativeHcn;

beforeAll(async () => {
  sim = await FakeSimServer.start();
  process.env.HCN_SIM = sim.address;
  hcn = loadAddon();
  hcn.init({ libraryPath: simLibraryPath });
  hcn.setErrorClass(TestHcnError);
});

afterAll(async () => {
  await sim.close();
});

beforeEach(() => sim.reset());

/** Opens and creates answer with the id they were given (or a fresh one for GUID_NULL), as HNS does. */
function answerIds(assigned = EP): void {
  for (const op of [
    'HcnOpenNetwork',
    'HcnOpenEndpoint',
    'HcnOpenNamespace',
    'HcnCreateNetwork',
    'HcnCreateEndpoint',
    'HcnCreateNamespace',
  ]) {
    sim.reply(op, (r) => ({ result: r.id === NULL_GUID ? assigned : (r.id as string) }));
  }
}

describe('capabilities', () => {
  test('report the simulator client as the source of everything', () => {
    expect(hcn.capabilities()).toEqual({
      v2Supported: true,
      v1Supported: true,
      hcsSupported: true,
      hcnLibrary: simLibraryPath,
      v1Library: simLibraryPath,
      missing: [],
      // The simulator client exports every optional function of the list.
      optional: HCN_FUNCTION_TABLE.filter((f) => f.optional).map((f) => f.name),
      adapterSource: 'library',
      loadError: null,
    });
  });

  test('init is idempotent: a second call keeps the first library', () => {
    expect(hcn.init({ libraryPath: '/nonexistent/other.so' }).hcnLibrary).toBe(simLibraryPath);
  });
});

const kinds = [
  { kind: 'Network', plural: 'Networks', id: NET },
  { kind: 'Endpoint', plural: 'Endpoints', id: EP },
  { kind: 'Namespace', plural: 'Namespaces', id: NS },
] as const;

describe.each(kinds)('$kind verbs', ({ kind, plural, id }) => {
  // The addon's methods by name, so one table covers the three kinds.
  const call = (name: string, ...args: unknown[]): Promise<unknown> =>
    (hcn as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name](...args);
  const queryOp = `HcnQuery${kind}Properties`;

  test(`enumerate${plural} sends the query (or null) and resolves to the id list`, async () => {
    sim.reply(`HcnEnumerate${plural}`, (r) => ({ result: r.query === null ? '[]' : `["${id}"]` }));
    await expect(call(`enumerate${plural}`, QUERY)).resolves.toBe(`["${id}"]`);
    await expect(call(`enumerate${plural}`, null)).resolves.toBe('[]');
    expect(sim.requests).toEqual([
      { v: 1, keep: true, pid: process.pid, winpid: 0, op: `HcnEnumerate${plural}`, query: QUERY },
      { v: 1, keep: true, pid: process.pid, winpid: 0, op: `HcnEnumerate${plural}`, query: null },
    ]);
  });

  test(`get${kind}Properties opens by id (any case, braces), queries, resolves to the properties`, async () => {
    answerIds();
    sim.reply(queryOp, (r) => ({ result: JSON.stringify({ ID: r.id, Query: r.query }) }));
    const properties = await call(`get${kind}Properties`, `{${id.toUpperCase()}}`, QUERY);
    expect(JSON.parse(properties as string)).toEqual({ ID: id, Query: QUERY });
    expect(sim.requests.map(({ op, id: rid, query }) => ({ op, id: rid, query }))).toEqual([
      { op: `HcnOpen${kind}`, id, query: undefined },
      { op: queryOp, id, query: QUERY },
    ]);
  });

  test(`modify${kind} opens, sends the settings, resolves to undefined`, async () => {
    answerIds();
    sim.reply(`HcnModify${kind}`, {});
    await expect(call(`modify${kind}`, id, '{"ResourceType":"Policy"}')).resolves.toBeUndefined();
    expect(sim.requests[1]).toEqual({
      v: 1,
      keep: true,
      pid: process.pid,
      winpid: 0,
      op: `HcnModify${kind}`,
      id,
      settings: '{"ResourceType":"Policy"}',
      // A call on a handle names the service instance that opened it; this fake answered the open without one.
      boot: null,
    });
  });

  test(`delete${kind} sends the id and resolves to undefined`, async () => {
    sim.reply(`HcnDelete${kind}`, {});
    await expect(call(`delete${kind}`, id)).resolves.toBeUndefined();
    expect(sim.requests).toEqual([{ v: 1, keep: true, pid: process.pid, winpid: 0, op: `HcnDelete${kind}`, id }]);
  });

  test("the calls by name send what the family's own exports send, for its functions of each generic verb", async () => {
    answerIds();
    sim.reply(`HcnEnumerate${plural}`, { result: `["${id}"]` });
    sim.reply(queryOp, (r) => ({ result: JSON.stringify({ ID: r.id, Query: r.query }) }));
    sim.reply(`HcnModify${kind}`, {});
    sim.reply(`HcnDelete${kind}`, {});
    const own = async (): Promise<unknown[]> => [
      await call(`enumerate${plural}`, QUERY),
      await call(`get${kind}Properties`, id, QUERY),
      await call(`modify${kind}`, id, '{"ResourceType":"Policy"}'),
      await call(`delete${kind}`, id),
    ];
    const byName = async (): Promise<unknown[]> => [
      await hcn.callEnumerate(`HcnEnumerate${plural}`, QUERY),
      await hcn.callQuery(queryOp as `HcnQuery${typeof kind}Properties`, id, QUERY),
      await hcn.callModify(`HcnModify${kind}`, id, '{"ResourceType":"Policy"}'),
      await hcn.callDelete(`HcnDelete${kind}`, id),
    ];
    const answers = await own();
    const sent = sim.requests.splice(0);
    expect(await byName()).toEqual(answers);
    expect(sim.requests).toEqual(sent);
    expect(sent.map((r) => r.op)).toEqual([
      `HcnEnumerate${plural}`,
      `HcnOpen${kind}`,
      queryOp,
      `HcnOpen${kind}`,
      `HcnModify${kind}`,
      `HcnDelete${kind}`,
    ]);
  });

  test(`list${plural}Detailed enumerates, then opens and queries each object with the same query`, async () => {
    const other = '11111111-2222-3333-4444-555555555555';
    answerIds();
    sim.reply(`HcnEnumerate${plural}`, { result: `["${id}","${other.toUpperCase()}"]` });
    sim.reply(queryOp, (r) => ({ result: JSON.stringify({ ID: r.id }) }));
    const list = await call(`list${plural}Detailed`, QUERY);
    expect(JSON.parse(list as string)).toEqual([{ ID: id }, { ID: other }]);
    expect(sim.requests.map((r) => [r.op, r.id ?? null, r.query ?? null])).toEqual([
      [`HcnEnumerate${plural}`, null, QUERY],
      [`HcnOpen${kind}`, id, null],
      [queryOp, id, QUERY],
      [`HcnOpen${kind}`, other, null],
      [queryOp, other, QUERY],
    ]);
  });
});

describe('create', () => {
  test('createNetwork with null id sends GUID_NULL, then queries the id HNS assigned', async () => {
    answerIds(NET);
    sim.reply('HcnQueryNetworkProperties', (r) => ({ result: JSON.stringify({ ID: r.id }) }));
    await expect(hcn.createNetwork(null, '{"Name":"n"}', QUERY)).resolves.toBe(`{"ID":"${NET}"}`);
    expect(sim.requests.map(({ op, id, settings, query }) => ({ op, id, settings, query }))).toEqual([
      { op: 'HcnCreateNetwork', id: NULL_GUID, settings: '{"Name":"n"}', query: undefined },
      { op: 'HcnQueryNetworkProperties', id: NET, settings: undefined, query: QUERY },
    ]);
  });

  test("createNamespace with '' as id is GUID_NULL too; a fixed id is sent as given", async () => {
    answerIds(NS);
    sim.reply('HcnQueryNamespaceProperties', { result: '{}' });
    await hcn.createNamespace('', '{}', null);
    await hcn.createNamespace(NS.toUpperCase(), '{}', null);
    expect(sim.requests.filter((r) => r.op === 'HcnCreateNamespace').map((r) => r.id)).toEqual([NULL_GUID, NS]);
  });

  test('createEndpoint opens the network, creates in it, queries the endpoint, closes both', async () => {
    answerIds(EP);
    sim.reply('HcnQueryEndpointProperties', (r) => ({ result: JSON.stringify({ ID: r.id }) }));
    const before = hcn.stats().calls;
    await expect(hcn.createEndpoint(NET, null, '{"Name":"ep"}', QUERY)).resolves.toBe(`{"ID":"${EP}"}`);
    expect(sim.requests.map(({ op, id, network, settings }) => ({ op, id, network, settings }))).toEqual([
      { op: 'HcnOpenNetwork', id: NET, network: undefined, settings: undefined },
      { op: 'HcnCreateEndpoint', id: NULL_GUID, network: NET, settings: '{"Name":"ep"}' },
      { op: 'HcnQueryEndpointProperties', id: EP, network: undefined, settings: undefined },
    ]);
    const after = hcn.stats().calls;
    expect(after.HcnCloseEndpoint - before.HcnCloseEndpoint).toBe(1);
    expect(after.HcnCloseNetwork - before.HcnCloseNetwork).toBe(1);
  });
});

describe('HNS v1 and adapters', () => {
  test('hnsCall sends method, path and body (null when absent) and resolves to the envelope', async () => {
    sim.reply('HNSCall', (r) => ({
      result: JSON.stringify({ Success: true, Output: { method: r.method, path: r.path, request: r.request } }),
    }));
    const body = '{"Name":"v1"}';
    expect(JSON.parse(await hcn.hnsCall('POST', '/networks/', body))).toEqual({
      Success: true,
      Output: { method: 'POST', path: '/networks/', request: body },
    });
    expect(JSON.parse(await hcn.hnsCall('GET', '/globals/version', null)).Output.request).toBeNull();
    expect(sim.requests[0]).toEqual({
      v: 1,
      keep: true,
      pid: process.pid,
      winpid: 0,
      op: 'HNSCall',
      method: 'POST',
      path: '/networks/',
      request: body,
    });
  });

  test('hnsCall failures come back in the envelope with S_OK, as on older HNS builds', async () => {
    const envelope = '{"Success":false,"Error":"An adapter was not found. ","ErrorCode":2151350278}';
    sim.reply('HNSCall', { result: envelope });
    await expect(hcn.hnsCall('POST', '/networks/', '{}')).resolves.toBe(envelope);
  });

  test('listAdapters asks the library (HcnSimEnumerateAdapters)', async () => {
    const adapters =
      '[{"Name":"Ethernet 2","MacAddress":"00-15-5D-AA-00-01","InterfaceDescription":"Microsoft Hyper-V Network Adapter","InterfaceIndex":7}]';
    sim.reply('HcnSimEnumerateAdapters', { result: adapters });
    await expect(hcn.listAdapters()).resolves.toBe(adapters);
    expect(sim.requests).toEqual([{ v: 1, keep: true, pid: process.pid, winpid: 0, op: 'HcnSimEnumerateAdapters' }]);
  });
});

describe('UTF-16 across the ABI and UTF-8 on the wire', () => {
  const name = '网络-🚀-ñ';

  test('non-ASCII names travel exactly, both directions', async () => {
    answerIds(NET);
    sim.reply('HcnQueryNetworkProperties', (r) => ({ result: JSON.stringify({ Name: name, Echo: r.query }) }));
    const settings = JSON.stringify({ Name: name });
    const properties = JSON.parse(await hcn.createNetwork(null, settings, `{"Name":"${name}"}`));
    expect(properties).toEqual({ Name: name, Echo: `{"Name":"${name}"}` });
    expect(sim.requests[0].settings).toBe(settings);
    // Raw UTF-8 on the wire, not escapes: the line contains the characters themselves.
    expect(sim.lines[0]).toContain(name);
  });

  test('escaped surrogate pairs from the service decode to the astral character', async () => {
    sim.reply('HcnEnumerateNetworks', {
      raw: '{"hr":0,"result":"\\ud83d\\ude80 \\u00f1 \\u7f51","errorRecord":null}\n',
    });
    await expect(hcn.enumerateNetworks(null)).resolves.toBe('🚀 ñ 网');
  });

  test('an unpaired surrogate becomes U+FFFD, in requests and in results', async () => {
    sim.reply('HcnEnumerateNetworks', { raw: '{"hr":0,"result":"a\\ud800b\\udc00c\\ud83d","errorRecord":null}\n' });
    await expect(hcn.enumerateNetworks('x\ud800y\udfffz')).resolves.toBe('a\ufffdb\ufffdc\ufffd');
    expect(sim.requests[0].query).toBe('x\ufffdy\ufffdz');
  });

  test('quotes, backslashes and control characters are escaped on the wire and survive', async () => {
    const tricky = 'q"b\\s/n\nt\tc\u0001\u001f\u007f';
    sim.reply('HNSCall', (r) => ({ result: r.request as string }));
    await expect(hcn.hnsCall('POST', '/x', tricky)).resolves.toBe(tricky);
    expect([...sim.lines[0]!].filter((c) => c.charCodeAt(0) < 0x20)).toEqual([]);
  });
});

describe('errors', () => {
  test('an HCN failure rejects with the registered class: op, unsigned hresult, error record', async () => {
    const record = errorRecord(ADAPTER_NOT_FOUND, 'An adapter was not found. ');
    sim.reply('HcnCreateNetwork', { hr: ADAPTER_NOT_FOUND, errorRecord: record });
    const error = await rejectionOf(hcn.createNetwork(null, '{}', null));
    expect(error).toBeInstanceOf(TestHcnError);
    expect(error).toMatchObject({ op: 'HcnCreateNetwork', hresult: 2151350278, errorRecord: record });
    expect(sim.ops()).toEqual(['HcnCreateNetwork']);
  });

  test('a signed hresult on the wire still reaches JavaScript unsigned', async () => {
    sim.reply('HcnDeleteEndpoint', { hr: 0x803b0002 | 0 });
    await expect(rejectionOf(hcn.deleteEndpoint(EP))).resolves.toMatchObject({
      op: 'HcnDeleteEndpoint',
      hresult: 0x803b0002,
      errorRecord: null,
    });
  });

  test('the failing step is the op: a query failure after a good open names the query, and still closes', async () => {
    answerIds();
    sim.reply('HcnQueryNamespaceProperties', { hr: 0x80070490 });
    const closes = hcn.stats().calls.HcnCloseNamespace;
    await expect(rejectionOf(hcn.getNamespaceProperties(NS, null))).resolves.toMatchObject({
      op: 'HcnQueryNamespaceProperties',
      hresult: 0x80070490,
    });
    expect(hcn.stats().calls.HcnCloseNamespace).toBe(closes + 1);
  });

  test('S_OK with a non-empty error record is a failure, reported with hresult 0 and the record', async () => {
    const record = errorRecord(0x803b000a, 'The provided network configuration is invalid or missing parameters. ');
    sim.reply('HcnDeleteNetwork', { hr: 0, errorRecord: record });
    await expect(rejectionOf(hcn.deleteNetwork(NET))).resolves.toMatchObject({
      op: 'HcnDeleteNetwork',
      hresult: 0,
      errorRecord: record,
    });
  });

  test('S_OK with an empty error record is a success (hcsshim only fails non-empty ones)', async () => {
    sim.reply('HcnDeleteNetwork', { hr: 0, errorRecord: '' });
    await expect(hcn.deleteNetwork(NET)).resolves.toBeUndefined();
  });

  test('S_OK + record on create still closes the handle it got', async () => {
    answerIds(NET);
    sim.reply('HcnCreateNetwork', { result: NET, errorRecord: '{"Error":"odd"}' });
    const closes = hcn.stats().calls.HcnCloseNetwork;
    await expect(rejectionOf(hcn.createNetwork(null, '{}', null))).resolves.toMatchObject({
      op: 'HcnCreateNetwork',
      hresult: 0,
    });
    expect(hcn.stats().calls.HcnCloseNetwork).toBe(closes + 1);
    expect(sim.ops()).toEqual(['HcnCreateNetwork']);
  });

  test('bad arguments reject (never throw synchronously) with a TypeError and a usage line', async () => {
    let promise: Promise<unknown> | undefined;
    expect(() => {
      promise = hcn.getNetworkProperties('not-a-guid', null);
    }).not.toThrow();
    const error = await rejectionOf(promise!);
    // Native errors come from the main realm, not jest's sandbox, so instanceof TypeError cannot match here.
    expect(error.name).toBe('TypeError');
    expect(error.message).toMatch(/Usage: getNetworkProperties\(id: string, query: string \| null\)/);
    await expect(
      rejectionOf((hcn.createEndpoint as (...a: unknown[]) => Promise<string>)(NET, null, 42, null)),
    ).resolves.toMatchObject({ name: 'TypeError' });
    await expect(rejectionOf(hcn.deleteNetwork(`${NET}0`))).resolves.toMatchObject({ name: 'TypeError' });
    expect(sim.requests).toEqual([]);
  });
});

describe('calls by name', () => {
  // Any name: the types only hold a name to its verb's shape; the list decides.
  const byName = (method: string, ...args: unknown[]): Promise<unknown> =>
    (hcn as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args);

  test.each([
    ['callQuery', 'HcnQueryEndpointNothing', [EP, QUERY]], // not in the list
    ['callQuery', 'HcnModifyEndpoint', [EP, QUERY]], // in the list, of another verb
    ['callModify', 'HcnQueryNetworkProperties', [NET, '{}']],
    ['callEnumerate', 'HcnDeleteNamespace', [QUERY]],
    ['callDelete', 'HNSCall', [NET]], // OWN: its own code
    ['callDelete', 42, [NET]],
  ])('%s(%s) rejects with a TypeError naming the usage, and sends nothing', async (method, fn, args) => {
    const error = await rejectionOf(byName(method, fn, ...args));
    expect(error.name).toBe('TypeError');
    expect(error.message).toMatch(new RegExp(`Usage: ${method}\\(fn: string,`));
    expect(sim.requests).toEqual([]);
  });

  test("an HCN failure names the function that failed: the open for an object that is not there, else the verb's", async () => {
    answerIds();
    sim.reply('HcnOpenEndpoint', { hr: 0x803b0002 });
    await expect(rejectionOf(hcn.callQuery('HcnQueryEndpointProperties', EP, null))).resolves.toMatchObject({
      op: 'HcnOpenEndpoint',
      hresult: 0x803b0002,
    });
    answerIds();
    sim.reply('HcnModifyNamespace', {
      hr: ADAPTER_NOT_FOUND,
      errorRecord: errorRecord(ADAPTER_NOT_FOUND, 'An adapter was not found. '),
    });
    await expect(rejectionOf(hcn.callModify('HcnModifyNamespace', NS, '{}'))).resolves.toMatchObject({
      op: 'HcnModifyNamespace',
      hresult: ADAPTER_NOT_FOUND,
    });
  });
});

describe('listing with objects vanishing meanwhile', () => {
  const [A, B, C] = [
    'aaaaaaaa-0000-0000-0000-000000000001',
    'bbbbbbbb-0000-0000-0000-000000000002',
    'cccccccc-0000-0000-0000-000000000003',
  ];

  test('an object that answers NOT_FOUND at open or at query is skipped', async () => {
    sim.reply('HcnEnumerateNetworks', { result: JSON.stringify([A, B, C]) });
    sim.reply('HcnOpenNetwork', (r) =>
      r.id === B
        ? { hr: 0x803b0001, errorRecord: errorRecord(0x803b0001, 'The network was not found. ') }
        : { result: r.id as string },
    );
    sim.reply('HcnQueryNetworkProperties', (r) =>
      r.id === C ? { hr: 0x80070490 } : { result: JSON.stringify({ ID: r.id }) },
    );
    await expect(hcn.listNetworksDetailed(null)).resolves.toBe(`[{"ID":"${A}"}]`);
    expect(sim.requests.map((r) => `${r.op} ${r.id ?? ''}`.trim())).toEqual([
      'HcnEnumerateNetworks',
      `HcnOpenNetwork ${A}`,
      `HcnQueryNetworkProperties ${A}`,
      `HcnOpenNetwork ${B}`,
      `HcnOpenNetwork ${C}`,
      `HcnQueryNetworkProperties ${C}`,
    ]);
  });

  test('any other failure on the way rejects the whole listing', async () => {
    sim.reply('HcnEnumerateEndpoints', { result: JSON.stringify([A, B]) });
    sim.reply('HcnOpenEndpoint', (r) => (r.id === B ? { hr: 0x800706ba } : { result: r.id as string }));
    sim.reply('HcnQueryEndpointProperties', { result: '{}' });
    await expect(rejectionOf(hcn.listEndpointsDetailed(null))).resolves.toMatchObject({
      op: 'HcnOpenEndpoint',
      hresult: 0x800706ba,
    });
  });

  test('an enumeration that is not an array of GUIDs rejects against the enumerate call', async () => {
    sim.reply('HcnEnumerateNamespaces', { result: '["not-a-guid"]' });
    const error = await rejectionOf(hcn.listNamespacesDetailed(null));
    expect(error).toMatchObject({ op: 'HcnEnumerateNamespaces', hresult: 0x8000ffff });
    expect(JSON.parse(error.errorRecord as string).Error).toMatch(/not a GUID/);
  });

  test('an empty enumeration lists nothing without further calls', async () => {
    sim.reply('HcnEnumerateNamespaces', { result: '[]' });
    await expect(hcn.listNamespacesDetailed(null)).resolves.toBe('[]');
    expect(sim.ops()).toEqual(['HcnEnumerateNamespaces']);
  });
});

describe('concurrency and accounting', () => {
  test('100 parallel calls all resolve, each with its own answer', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);
    answerIds();
    sim.reply('HcnQueryNetworkProperties', async (r) => {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
      return { result: JSON.stringify({ ID: r.id }) };
    });
    const results = await Promise.all(ids.map((id) => hcn.getNetworkProperties(id, null)));
    expect(results.map((text) => JSON.parse(text).ID)).toEqual(ids);
    expect(sim.requests).toHaveLength(200);
  });

  test('stats count calls per function and every string freed', async () => {
    answerIds();
    sim.reply('HcnQueryNetworkProperties', { result: '{}' });
    sim.reply('HcnOpenNetwork', { hr: 0x803b0001, errorRecord: '{"Error":"gone"}' });
    const before = hcn.stats();
    await hcn.enumerateNetworks(null).catch(() => undefined); // E_NOTIMPL + record from the fallback: 1 string
    await rejectionOf(hcn.getNetworkProperties(NET, null)); // open fails with a record: 1 string
    const after = hcn.stats();
    expect(after.calls.HcnEnumerateNetworks - before.calls.HcnEnumerateNetworks).toBe(1);
    expect(after.calls.HcnOpenNetwork - before.calls.HcnOpenNetwork).toBe(1);
    expect(after.calls.HcnQueryNetworkProperties).toBe(before.calls.HcnQueryNetworkProperties);
    expect(after.calls.HcnCloseNetwork).toBe(before.calls.HcnCloseNetwork); // nothing was opened
    expect(after.frees - before.frees).toBe(2);
    expect(Object.keys(after.calls)).not.toContain('CoTaskMemFree');
  });
});
