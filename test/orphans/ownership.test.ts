import * as crypto from 'node:crypto';
import {
  endpointName,
  namesOwner,
  nicNetworkName,
  ownerTag,
  ownersByTag,
  parseOwnedName,
  shortNameOfPreviousVersion,
  weakTag,
} from '../../src/orphans/ownership';
import { sha256Hex } from '../../src/orphans/sha256';
import { legacyHash as legacy } from '../helpers/legacy-names';

const DOCKER_ID = '6ad647ea8218c1a666b10706209708fd2b9ac846fd7e7f4d1106a379da65bad8';

describe('ownership names', () => {
  it("carry a 128-bit SHA-256 tag and stay shorter than the reference plugins' names, whatever the container id", () => {
    const owner = { containerId: DOCKER_ID, ifname: 'eth0' };
    expect(endpointName(owner)).toMatch(/^hcn-ep-[0-9a-f]{40}$/);
    expect(nicNetworkName(owner)).toMatch(/^hcn-nic-[0-9a-f]{40}$/);
    expect(nicNetworkName(owner).length).toBe(48);
    // win-bridge names an endpoint `<containerID>_<network>` (pkg/hns ConstructEndpointName): 70+ characters.
    expect(endpointName(owner).length).toBeLessThan(`${DOCKER_ID}_cbr0`.length);
    const digest = crypto.createHash('sha256').update(`hcn-cni\0owner\0${DOCKER_ID}\0eth0`).digest('hex');
    expect(ownerTag(owner)).toBe(digest.slice(0, 32));
  });

  it('still recognise the short names of the previous version (48-bit tags), marked weak', () => {
    const owner = { containerId: DOCKER_ID, ifname: 'eth0' };
    const old = shortNameOfPreviousVersion('endpoint', owner);
    expect(old).toMatch(/^hcn-ep-[0-9a-f]{16}$/);
    const parsed = parseOwnedName(old)!;
    expect(parsed.kind).toBe('endpoint');
    expect(weakTag(parsed.tag)).toBe(true);
    expect(namesOwner(parsed, owner)).toBe(true);
    expect(namesOwner(parsed, { containerId: DOCKER_ID, ifname: 'eth1' })).toBe(false);
    expect(weakTag(parseOwnedName(endpointName(owner))!.tag)).toBe(false);
    expect(ownersByTag([owner]).get(parsed.tag)).toEqual(owner);
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === '0' ? '1' : '0') + s.slice(i + 1);
    expect(parseOwnedName(flip(old, old.length - 1))).toBeUndefined();
  });

  it('hash with a SHA-256 equal to node:crypto on any input (empty, multi-block, non-ASCII)', () => {
    const inputs = ['', 'abc', 'x'.repeat(55), 'x'.repeat(56), 'y'.repeat(64), 'z'.repeat(1000), 'héllo ☃ 𝄞'];
    for (let i = 0; i < 50; i++) inputs.push(crypto.randomBytes(1 + i * 7).toString('latin1'));
    for (const t of inputs) expect(sha256Hex(t)).toBe(crypto.createHash('sha256').update(t, 'utf8').digest('hex'));
  });

  it('hash with a SHA-256 that gives the known answers of FIPS 180-4 (and its examples), padding edges included', () => {
    // NIST's SHA-256 examples (one block, two blocks, 896 bits, a million "a"), and the empty message.
    const answers: [string, string][] = [
      ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
      ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
      [
        'abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq',
        '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
      ],
      [
        'abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu',
        'cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1',
      ],
      ['a'.repeat(1_000_000), 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0'],
    ];
    for (const [text, hex] of answers) expect(sha256Hex(text)).toBe(hex);
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
    expect(parseOwnedName('hcn-ep-' + '0'.repeat(40))).toBeUndefined();
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

  it('a name of an earlier version names one interface: the same container with another ifname is another owner', () => {
    const legacyEp = 'hcn-cni_ep_a_b_c_' + legacy('endpoint', 'a_b', 'c', '');
    const parsed = parseOwnedName(legacyEp)!;
    expect(namesOwner(parsed, { containerId: 'a_b', ifname: 'c' })).toBe(true);
    expect(namesOwner(parsed, { containerId: 'a_b', ifname: 'other' })).toBe(false);
    expect(namesOwner(parsed, { containerId: 'a_x', ifname: 'c' })).toBe(false);
  });
});
