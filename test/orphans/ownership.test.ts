import { endpointName, nicNetworkName, parseOwnedName } from '../../src/orphans/ownership';

describe('ownership names', () => {
  it('round-trips owners whose ids contain the separator', () => {
    const owner = { containerId: 'a_b_c.d-e', ifname: 'eth_0' };
    expect(parseOwnedName(endpointName(owner))).toEqual({ kind: 'endpoint', owner });
    const n = nicNetworkName(owner, 'aa:bb:cc:dd:ee:0f');
    expect(n).toMatch(/^hcn-cni_nic_a_b_c\.d-e_eth_0_AABBCCDDEE0F_[0-9a-f]{8}$/);
    expect(parseOwnedName(n)).toEqual({ kind: 'network', owner, mac: 'AA-BB-CC-DD-EE-0F' });
  });

  it('uses only characters HNS, vSwitch and interface names accept', () => {
    expect(endpointName({ containerId: 'x'.repeat(64), ifname: 'eth0' })).toMatch(/^[A-Za-z0-9_.-]+$/);
  });

  it('rejects foreign names and tampered ones', () => {
    expect(parseOwnedName('nat')).toBeUndefined();
    expect(parseOwnedName('hcn-cni_ep_abc_eth0_12345678')).toBeUndefined();
    const good = endpointName({ containerId: 'abc', ifname: 'eth0' });
    expect(parseOwnedName(good.replace('abc', 'abd'))).toBeUndefined();
    expect(parseOwnedName(good.replace('_ep_', '_nic_'))).toBeUndefined();
  });

  it('gives different owners different names', () => {
    const a = endpointName({ containerId: 'a_b', ifname: 'c' });
    const b = endpointName({ containerId: 'a', ifname: 'b_c' });
    expect(a).not.toBe(b);
    expect(parseOwnedName(a)!.owner).toEqual({ containerId: 'a_b', ifname: 'c' });
    expect(parseOwnedName(b)!.owner).toEqual({ containerId: 'a', ifname: 'b_c' });
  });
});
