/**
 * Inputs that must get a clear error before anything is created, never a crash.
 *  - a passthrough value nested thousands of levels deep, or larger than any real one: 7, and HNS untouched;
 *  - networkName with NUL, a lone surrogate, a path, or 5 000 characters; an overlong name: 7;
 *  - CNI_NETNS "none " or "NONE": 4 (only the exact spellings mean a Docker sandbox);
 *  - an outboundNatExceptions entry with host bits set: 7.
 */
import { silentLogger } from '../../src/log/logger';
import { runCni } from '../../src/run';
import { bridgeConf, cni, cniEnv, useHarness, type Harness } from '../helpers/cni-harness';

let h: Harness;
useHarness(undefined, (x) => (h = x));

function nested(depth: number): unknown {
  let v: unknown = { Type: 'ACL' };
  for (let i = 0; i < depth; i++) v = { Settings: v };
  return v;
}

/** The JSON text of a value nested `depth` levels, written out by hand (JSON.stringify itself would overflow). */
function deepText(depth: number): string {
  return `${'{"Settings":'.repeat(depth)}{"Type":"ACL"}${'}'.repeat(depth)}`;
}

/** An ADD whose stdin is given as text (runCni, as the harness's cni() does, minus JSON.stringify). */
async function addText(stdin: string): Promise<Record<string, unknown>> {
  const r = await runCni({
    env: cniEnv(h, { verb: 'ADD', conf: {} }),
    stdin,
    deps: h.deps,
    createLogger: () => silentLogger,
  });
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

async function nothingCreated(): Promise<void> {
  const dump = await h.sim.control.dump();
  expect({ networks: dump.networks.length, endpoints: dump.endpoints.length }).toEqual({ networks: 0, endpoints: 0 });
}

describe('passthrough values are bounded before anything is created', () => {
  it.each([
    [
      'AdditionalArgs[0].Value nested 5000 deep',
      `"AdditionalArgs":[{"Name":"EndpointPolicy","Value":${deepText(5000)}}]`,
      /"AdditionalArgs\[0\]\.Value(\.Settings)*" is nested more than 32 levels deep/,
    ],
    [
      'args nested 60000 deep (near the 1 MiB stdin limit)',
      `"args":${deepText(60_000)}`,
      /"args(\.Settings)*" is nested more than 32 levels deep/,
    ],
  ])('%s: error 7, before anything is created', async (_what, member, msg) => {
    const base = JSON.stringify({ stateDir: h.stateDir, ...bridgeConf() });
    const r = await addText(`${base.slice(0, -1)},${member}}`);
    expect(r).toMatchObject({ code: 7, msg: expect.stringMatching(msg) });
    await nothingCreated();
  });

  it.each([
    [
      'policies[0].value nested 40 deep',
      { policies: [{ name: 'EndpointPolicy', value: nested(40) }] },
      /is nested more than 32 levels deep/,
    ],
    [
      'a 100 KiB policy value',
      { AdditionalArgs: [{ Name: 'EndpointPolicy', Value: { Type: 'ACL', Blob: 'x'.repeat(100 * 1024) } }] },
      /"AdditionalArgs\[0\]\.Value" is larger than 64 KiB/,
    ],
  ])('%s: error 7', async (_what, extra, msg) => {
    const r = await cni(h, { verb: 'ADD', conf: bridgeConf(extra) });
    expect(r.json).toMatchObject({ code: 7, msg: expect.stringMatching(msg) });
    await nothingCreated();
  });

  it('a real Azure-style policy list still passes', async () => {
    const r = await cni(h, {
      verb: 'ADD',
      conf: bridgeConf({
        AdditionalArgs: [{ Name: 'EndpointPolicy', Value: { Type: 'OutBoundNAT', ExceptionList: ['10.0.0.0/8'] } }],
      }),
      netns: 'none',
    });
    expect(r.exitCode).toBe(0);
  });
});

describe('names, netns and NAT exceptions are validated as HNS and the spec allow', () => {
  it.each([
    ['NUL', 'a\u0000b'],
    ['a lone surrogate', 'net\ud800'],
    ['a path', '../../x'],
    ['5000 characters', 'n'.repeat(5000)],
    ['a trailing space', 'cbr0 '],
    ['only dots', '..'],
  ])('networkName with %s: 7', async (_what, networkName) => {
    const r = await cni(h, { verb: 'ADD', conf: bridgeConf({ networkName }) });
    expect(r.json).toMatchObject({
      code: 7,
      msg: expect.stringContaining('"networkName" must be an HNS network name'),
    });
    await nothingCreated();
  });

  it('a name of 129 characters: 7 (128 is fine)', async () => {
    const long = await cni(h, { verb: 'ADD', conf: bridgeConf({ name: `n${'x'.repeat(128)}` }) });
    expect(long.json).toMatchObject({ code: 7, msg: expect.stringContaining('at most 128 characters') });
    expect(
      (await cni(h, { verb: 'ADD', conf: bridgeConf({ name: `n${'x'.repeat(127)}` }), netns: 'none' })).exitCode,
    ).toBe(0);
  });

  it.each(['none ', 'NONE', ' none', 'Container:abc'])('CNI_NETNS %j: 4', async (netns) => {
    const r = await cni(h, { verb: 'ADD', conf: bridgeConf(), netns });
    expect(r.json).toMatchObject({ code: 4 });
    await nothingCreated();
  });

  it.each([
    ['outboundNatExceptions', { outboundNatExceptions: ['10.0.0.0/8', '10.0.0.1/8'] }, '"outboundNatExceptions[1]"'],
    ['ipMasqNetwork', { ipMasqNetwork: '10.244.0.1/16' }, '"ipMasqNetwork"'],
    ['an IPv6 exception', { outboundNatExceptions: ['fd00::1/64'] }, '"outboundNatExceptions[0]"'],
  ])('%s with host bits set: 7', async (_what, extra, key) => {
    const r = await cni(h, { verb: 'ADD', conf: bridgeConf(extra) });
    expect(r.json).toMatchObject({
      code: 7,
      msg: expect.stringContaining(`${key} must be a network address with its host bits zero`),
    });
  });
});
