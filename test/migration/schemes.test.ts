/**
 * The migration's pieces on their own: the peers' names (each from the peer's source, cited in
 * src/plugin/peer-endpoints.ts and src/orphans/peer-networks.ts), the attach rule, the holders of an address, the
 * `adopt` key, and an existing network of a type bridge mode cannot use without networkType (rule 4's limit).
 */
import { CniError } from '../../src/cni/cni-error';
import type { EndpointInfo, HnsApi } from '../../src/hns/api';
import { silentLogger } from '../../src/log/logger';
import { sweep } from '../../src/orphans/sweep';
import { azureNicNetworkMac, azureNicNetworkName, judgePeerNetworks } from '../../src/orphans/peer-networks';
import { endpointName, parseOwnedName } from '../../src/orphans/ownership';
import { addressesOf, holdersOf } from '../../src/plugin/ip-holders';
import {
  attachedElsewhere,
  networkMayDecide,
  peerEndpointNames,
  peerEndpointsOf,
  peerPodOf,
  peerVerdict,
} from '../../src/plugin/peer-schemes';
import { cni, useHarness, type Harness } from '../helpers/cni-harness';
import { parseAddConf } from '../helpers/net-conf';

const ID = '0123456789abcdef'.repeat(4);
const owner = { containerId: ID, ifname: 'eth0' };
const ep = (e: Partial<EndpointInfo>): EndpointInfo => ({ id: 'e1', name: '', networkId: 'n1', ips: [], ...e });

describe('peer endpoint names', () => {
  it('win-bridge/win-overlay/sdnbridge <id>_<name> and Azure <id[:8]>-<ifname>; none for a container: netns', () => {
    expect(peerEndpointNames(owner, 'ns', 'cbr0')).toEqual([
      { scheme: 'win-bridge/sdnbridge', name: `${ID}_cbr0`, ambiguous: false },
      { scheme: 'azure', name: '01234567-eth0', ambiguous: true },
    ]);
    expect(peerEndpointNames(owner, 'container:abc', 'cbr0')).toEqual([]);
  });

  it("a delegated NIC's Azure endpoint <id[:8]>-eth<N> only on Azure's network for the request's NIC", () => {
    const eps = [
      ep({ id: 'a', name: '01234567-eth2', networkId: 'nic' }),
      ep({ id: 'b', name: '01234567-eth2', networkId: 'other' }),
      ep({ id: 'c', name: '01234567-ethx', networkId: 'nic' }),
    ];
    expect(
      peerEndpointsOf(eps, { pod: owner, netns: 'ns', network: 'cbr0', azureNicNetworkId: 'nic' }).map(
        (p) => p.endpoint.id,
      ),
    ).toEqual(['a']);
    expect(peerEndpointsOf(eps, { pod: owner, netns: 'ns', network: 'cbr0' }).map((p) => p.endpoint.id)).toEqual([]);
  });

  it('GC reads the pod back out of a name: the full id for <id>_<name>, the 8-character prefix for Azure', () => {
    expect(peerPodOf(`${ID}_cbr0`, 'cbr0')).toEqual({ scheme: 'win-bridge/sdnbridge', containerId: ID });
    expect(peerPodOf(`${ID}_other`, 'cbr0')).toBeUndefined();
    expect(peerPodOf('01234567-eth0', 'cbr0')).toEqual({ scheme: 'azure', idPrefix: '01234567', ifname: 'eth0' });
    // One of ours is the audit's to judge (gc-peers.ts skips every name parseOwnedName recognises).
    const ours = endpointName({ containerId: 'pod', ifname: 'eth0' });
    expect(parseOwnedName(ours)).toBeDefined();
    expect(peerPodOf(ours, 'cbr0')).toBeUndefined();
    for (const name of ['hcn-ep-0123456789ab0123', '0123-eth0', 'azure', 'nat', '01234567-'])
      expect([name, peerPodOf(name, 'cbr0')]).toEqual([name, undefined]);
  });
});

describe('attached elsewhere', () => {
  const ns = '5f0e7a3c-1b2d-4c5e-8f90-123456789abc';
  it('a namespace the request names is fine; another, or none named (no CNI_NETNS), is not', () => {
    expect(attachedElsewhere(ep({ namespaceId: ns }), [], owner, ns.toUpperCase())).toBeUndefined();
    // A DEL without CNI_NETNS holds no namespace: an endpoint in one is never its to remove.
    expect(attachedElsewhere(ep({ namespaceId: ns }), [], owner, '')).toMatch(/in HCN namespace/);
    expect(attachedElsewhere(ep({ namespaceId: ns }), [], owner, undefined)).toMatch(/in HCN namespace/);
    expect(attachedElsewhere(ep({ namespaceId: ns }), [], owner, 'none')).toMatch(/in HCN namespace/);
  });
  it("a container: only the request's own (with workload containers beside it); unknown is refused", () => {
    expect(attachedElsewhere(ep({}), [ID, 'workload'], owner, 'none')).toBeUndefined();
    expect(attachedElsewhere(ep({}), ['another'], owner, 'none')).toMatch(/attached to container another/);
    expect(attachedElsewhere(ep({}), undefined, owner, 'none')).toMatch(/could not say/);
    // Without CNI_NETNS the request holds not even its own sandbox container.
    expect(attachedElsewhere(ep({}), [ID], owner, '')).toMatch(/attached to container/);
    expect(attachedElsewhere(ep({}), [], owner, '')).toBeUndefined();
  });
});

describe('one rule for every peer scheme', () => {
  const ns = '5f0e7a3c-1b2d-4c5e-8f90-123456789abc';
  const other = '0f0e7a3c-1b2d-4c5e-8f90-123456789abc';
  it("win-bridge's pod abc on net_x is not pod abc_net on x: attached to a namespace the DEL does not hold, it stays", () => {
    const victim = ep({ name: 'abc_net_x', namespaceId: ns });
    const del = (netns: string | undefined) =>
      peerVerdict(victim, [], { pod: { containerId: 'abc_net', ifname: 'eth0' }, network: 'x', netns }, []);
    // The name is exactly what win-bridge/sdnbridge give pod abc_net on network x: rule 1 holds, rule 2 decides.
    expect(del(undefined)).toMatchObject({ act: false, scheme: 'win-bridge/sdnbridge', elsewhere: true });
    expect(del('')).toMatchObject({ act: false, elsewhere: true });
    expect(del(other)).toMatchObject({ act: false, elsewhere: true });
    expect(del(ns)).toEqual({ act: true, scheme: 'win-bridge/sdnbridge' });
  });
  it("the same for every scheme: a name that is not exactly the pod's is not acted on, whatever it is attached to", () => {
    const req = { pod: { containerId: ID, ifname: 'eth0' }, network: 'cbr0', netns: ns };
    for (const [name, scheme] of [
      [`${ID}_cbr0`, 'win-bridge/sdnbridge'],
      ['01234567-eth0', 'azure'],
    ] as const) {
      expect(peerVerdict(ep({ name, namespaceId: ns }), [], req, ['azure'])).toEqual({ act: true, scheme });
      expect(peerVerdict(ep({ name, namespaceId: other }), [], req, ['azure'])).toMatchObject({ act: false, scheme });
      expect(peerVerdict(ep({ name }), undefined, req, ['azure'])).toMatchObject({ act: false, scheme });
      expect(peerVerdict(ep({ name }), [], { ...req, netns: undefined }, ['azure'])).toEqual({ act: true, scheme });
      expect(peerVerdict(ep({ name, namespaceId: ns }), [], { ...req, netns: undefined }, ['azure'])).toMatchObject({
        act: false,
        scheme,
      });
    }
    for (const name of [`${ID}_cbr`, `${ID}_cbr0_`, `x${ID}_cbr0`, '01234567-eth1', '0123456-eth0', `${ID}-eth0`])
      expect([name, peerVerdict(ep({ name }), [], req, ['azure']).act]).toEqual([name, false]);
    // Azure's names only with the opt-in.
    expect(peerVerdict(ep({ name: '01234567-eth0' }), [], req, [])).toMatchObject({ act: false, elsewhere: false });
  });
  it('GC reads no pod out of a name that more than one pod could have', () => {
    expect(peerPodOf('abc_net_x', 'x')).toBeUndefined();
    expect(peerPodOf('abc_net_x', 'net_x')).toBeUndefined();
    expect(peerPodOf('abc_x', 'x')).toEqual({ scheme: 'win-bridge/sdnbridge', containerId: 'abc' });
    // Azure's name of a pod whose id begins "ab_cdefg", and win-bridge's of pod "ab" on network "cdefg-eth0".
    expect(peerPodOf('ab_cdefg-eth0', 'cdefg-eth0')).toBeUndefined();
  });
  it("the HNS network the endpoint is on decides between win-bridge's readings: the one it is named after", () => {
    const abc = { scheme: 'win-bridge/sdnbridge', containerId: 'abc' };
    expect(peerPodOf('abc_net_x', 'net_x', 'net_x')).toEqual(abc);
    expect(peerPodOf('abc_net_x', 'net_x', 'NET_X')).toEqual(abc);
    expect(peerPodOf('abc_net_x', 'x', 'net_x')).toBeUndefined();
    expect(peerPodOf('abc_net_x', 'x', 'x')).toEqual({ scheme: 'win-bridge/sdnbridge', containerId: 'abc_net' });
    expect(peerPodOf('a_b_net_x', 'net_x', 'net_x')).toEqual({ scheme: 'win-bridge/sdnbridge', containerId: 'a_b' });
    // On a network named after neither reading it is no one's; nor is a name Azure could give too.
    expect(peerPodOf('abc_net_x', 'net_x', 'cbr0')).toBeUndefined();
    expect(peerPodOf('ab_cdefg-eth0', 'cdefg-eth0', 'cdefg-eth0')).toBeUndefined();
    // Off win-bridge's network cdefg-eth0 that name is only Azure's (of a pod whose id begins "ab_cdefg").
    expect(peerPodOf('ab_cdefg-eth0', 'cdefg-eth0', 'cbr0')).toEqual({
      scheme: 'azure',
      idPrefix: 'ab_cdefg',
      ifname: 'eth0',
    });
    // GC asks for the network only where it may decide: several readings, one of them of the network GC is about.
    expect(networkMayDecide('abc_net_x', 'net_x')).toBe(true);
    expect(networkMayDecide('abc_net_x', 'x')).toBe(true);
    expect(networkMayDecide('abc_net_x', 'cbr0')).toBe(false);
    expect(networkMayDecide('abc_x', 'x')).toBe(false);
  });
});

describe('address holders', () => {
  it('compares bare, canonical addresses; skips the endpoints named as gone', () => {
    expect(addressesOf({ ips: [{ address: '10.0.0.5/24' }, { address: 'FD00::0005/64' }] })).toEqual([
      '10.0.0.5',
      'fd00::5',
    ]);
    const eps = [
      ep({ id: 'x', name: 'x', ips: [{ address: '10.0.0.5' }] }),
      ep({ id: 'y', ips: [{ address: 'fd00::5' }] }),
    ];
    expect(holdersOf(eps, ['10.0.0.5', 'fd00:0::5']).map((h) => h.id)).toEqual(['x', 'y']);
    expect(holdersOf(eps, ['10.0.0.5'], ['X'])).toEqual([]);
    expect(holdersOf(eps, [])).toEqual([]);
  });
});

describe("Azure's delegated-NIC networks", () => {
  it('azure-<mac as Go prints it>, Transparent, no endpoint, with the opt-in only', () => {
    expect(azureNicNetworkName('00-15-5D-AB-00-01')).toBe('azure-00:15:5d:ab:00:01');
    expect(azureNicNetworkMac('azure-00:15:5d:ab:00:01')).toBe('00-15-5D-AB-00-01');
    for (const n of ['azure', 'azure-apipa', 'azure-00-15-5d-ab-00-01', 'azure-00:15:5D:AB:00:01'])
      expect([n, azureNicNetworkMac(n)]).toEqual([n, undefined]);
    const nets = [
      { id: 'n1', name: 'azure-00:15:5d:ab:00:01', type: 'Transparent', flags: 9224, subnets: [] },
      { id: 'n2', name: 'azure-00:15:5d:ab:00:02', type: 'Transparent', flags: 9224, subnets: [] },
      { id: 'n3', name: 'azure-00:15:5d:ab:00:03', type: 'L2Bridge', flags: 8, subnets: [] },
    ];
    const eps = [ep({ networkId: 'N2' })];
    expect(judgePeerNetworks(nets, eps, ['azure']).map((j) => j.id)).toEqual(['n1']);
    expect(judgePeerNetworks(nets, eps, [])).toEqual([]);
  });
});

describe('adopt', () => {
  const parse = (adopt: unknown) => parseAddConf({ name: 'n', adopt });
  it('takes "azure" in any case, once; anything else is error 7 naming it', () => {
    expect(parse(['Azure', 'azure']).adopt).toEqual(['azure']);
    expect(parse([]).adopt).toEqual([]);
    for (const bad of [['win-bridge'], 'azure', [1]]) {
      let e: unknown;
      try {
        parse(bad);
      } catch (x) {
        e = x;
      }
      expect(e).toBeInstanceOf(CniError);
      expect([(e as CniError).code, (e as CniError).message]).toEqual([7, expect.stringContaining('adopt')]);
    }
  });
});

describe('networkType omitted (rule 4)', () => {
  let h: Harness;
  useHarness(undefined, (x) => (h = x));
  it('an existing network of a type bridge mode cannot use is error 7 naming it, not silently attached', async () => {
    await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNetwork({
      Name: 'ics0',
      Type: 'ICS',
      Ipams: [{ Type: 'Static', Subnets: [{ IpAddressPrefix: '10.9.0.0/24' }] }],
    } as never);
    const add = await cni(h, { verb: 'ADD', conf: { cniVersion: '1.0.0', name: 'ics0', type: 'hcn-cni' } });
    expect(add.json).toMatchObject({
      code: 7,
      msg: 'invalid network configuration: HNS network "ics0" is of type ICS, which bridge mode cannot attach to (L2Bridge, Overlay, NAT, L2Tunnel)',
    });
  });
});

describe("sweep of a peer's network", () => {
  it('is skipped when an endpoint is on it by the time of the delete (one appeared since the listing)', async () => {
    const net = { id: 'n1', name: 'azure-00:15:5d:ab:00:01', type: 'Transparent', flags: 9224, subnets: [] };
    const [judged] = judgePeerNetworks([net], [], ['azure']);
    const deleted: string[] = [];
    let onIt: EndpointInfo[] = [ep({ networkId: 'N1' })];
    const api = {
      listEndpoints: async () => onIt,
      findEndpoints: async () => onIt,
      deleteNetwork: async (id: string) => (deleted.push(id), 'deleted' as const),
    } as unknown as HnsApi;
    const plan = { judged: [judged!], endpoints: [], networks: [judged!] };
    const first = await sweep(plan, { api, stillOrphan: () => true, log: silentLogger });
    expect([first.skipped.map((s) => s.reason), deleted]).toEqual([['an endpoint is on it now'], []]);
    onIt = [];
    const second = await sweep(plan, { api, stillOrphan: () => true, log: silentLogger });
    expect([second.deleted.map((j) => j.id), deleted]).toEqual([['n1'], ['n1']]);
  });
});
