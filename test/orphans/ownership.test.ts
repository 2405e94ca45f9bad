import { endpointName, nicNetworkName, ownerTag, ownersByTag, parseOwnedName } from '../../src/orphans/ownership';

const DOCKER_ID = '6ad647ea8218c1a666b10706209708fd2b9ac846fd7e7f4d1106a379da65bad8';

describe('ownership names', () => {
  it("are short (~20 characters, as the reference plugins' names) whatever the container id", () => {
    const owner = { containerId: DOCKER_ID, ifname: 'eth0' };
    expect(endpointName(owner)).toMatch(/^hcn-ep-[0-9a-f]{16}$/);
    expect(nicNetworkName(owner)).toMatch(/^hcn-nic-[0-9a-f]{16}$/);
    expect(nicNetworkName(owner).length).toBe(24);
  });

  it('carry the owner tag, which the state turns back into the owner', () => {
    const owner = { containerId: 'a_b_c.d-e', ifname: 'eth_0' };
    expect(parseOwnedName(endpointName(owner))).toEqual({ kind: 'endpoint', tag: ownerTag(owner) });
    expect(parseOwnedName(nicNetworkName(owner))).toEqual({ kind: 'network', tag: ownerTag(owner) });
    expect(
      ownersByTag([owner, { containerId: 'x', ifname: 'eth0' }]).get(parseOwnedName(endpointName(owner))!.tag),
    ).toEqual(owner);
  });

  it('use only characters HNS, vSwitch and interface names accept', () => {
    expect(endpointName({ containerId: 'x'.repeat(64), ifname: 'eth0' })).toMatch(/^[a-z0-9-]+$/);
  });

  it('reject foreign names and tampered ones', () => {
    expect(parseOwnedName('nat')).toBeUndefined();
    expect(parseOwnedName('hcn-ep-0123456789abcdef')).toBeUndefined();
    const good = endpointName({ containerId: 'abc', ifname: 'eth0' });
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === '0' ? '1' : '0') + s.slice(i + 1);
    for (let i = 'hcn-ep-'.length; i < good.length; i++) expect(parseOwnedName(flip(good, i))).toBeUndefined();
    expect(parseOwnedName(good.replace('hcn-ep-', 'hcn-nic-'))).toBeUndefined();
  });

  it('give different owners different names', () => {
    expect(endpointName({ containerId: 'a_b', ifname: 'c' })).not.toBe(
      endpointName({ containerId: 'a', ifname: 'b_c' }),
    );
    expect(endpointName({ containerId: 'ab', ifname: 'c' })).not.toBe(endpointName({ containerId: 'a', ifname: 'bc' }));
  });

  it('still recognise names of earlier versions, which spell the owner out', () => {
    // hcn-cni before short names: hcn-cni_ep_<containerId>_<ifname>_<FNV-1a of the parts>.
    const legacyEp = 'hcn-cni_ep_a_b_c_' + legacy('endpoint', 'a_b', 'c', '');
    expect(parseOwnedName(legacyEp)).toEqual({
      kind: 'endpoint',
      owner: { containerId: 'a_b', ifname: 'c' },
      tag: ownerTag({ containerId: 'a_b', ifname: 'c' }),
    });
    const legacyNet = 'hcn-cni_nic_pod_eth0_AABBCCDDEE0F_' + legacy('network', 'pod', 'eth0', 'AABBCCDDEE0F');
    expect(parseOwnedName(legacyNet)).toMatchObject({
      kind: 'network',
      owner: { containerId: 'pod', ifname: 'eth0' },
      mac: 'AA-BB-CC-DD-EE-0F',
    });
    expect(parseOwnedName(legacyEp.replace(/.$/, (c) => (c === '0' ? '1' : '0')))).toBeUndefined();
  });
});

function legacy(kind: string, containerId: string, ifname: string, mac: string): string {
  const text = `hcn-cni\0${kind}\0${containerId}\0${ifname}\0${mac}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}
