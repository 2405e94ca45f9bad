/**
 * Bridge mode with delegated IPAM (Debian's containernetworking-plugins, the real host-local and static), in
 * process through runCni against the simulator: the address in HNS is IPAM's; DEL releases it; a repeated ADD does
 * not ask IPAM again (host-local would refuse a second allocation for the same attachment); a missing or failing
 * IPAM is 102 with nothing created; and a failure after IPAM allocated (HcnCreateEndpoint refused, or the attach to
 * a namespace that does not exist) rolls everything back: endpoint deleted, address released, intent dropped.
 */
import * as fs from 'fs';
import * as path from 'path';
import { HR } from '../../src/hns/hresults';
import { bridgeConf, cni, CNI_BIN, stateFiles, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, lastSeq, mutationsSince, newNamespace, script } from './support';
import { endpointName } from '../../src/orphans/ownership';

let h: Harness;
/** A wrapper around host-local that logs every CNI_COMMAND it is run with, to count IPAM calls. */
let bin: string;
let ipamLog: string;

useHarness(undefined, (x) => (h = x));
beforeEach(() => {
  bin = path.join(h.tmp, 'bin');
  ipamLog = path.join(h.tmp, 'ipam-calls.log');
  script(bin, 'counting-ipam', `echo "$CNI_COMMAND $CNI_CONTAINERID" >> '${ipamLog}'\nexec ${CNI_BIN}/host-local`);
  script(
    bin,
    'failing-ipam',
    `cat >/dev/null\necho '{"cniVersion":"1.0.0","code":999,"msg":"pool exhausted","details":"range 10.244.1.0/24 is full"}'\nexit 1`,
  );
});

const ipamCalls = () => (fs.existsSync(ipamLog) ? fs.readFileSync(ipamLog, 'utf8').trim().split('\n') : []);
const withPath = () => `${bin}:${CNI_BIN}`;
const endpointIps = async () =>
  (await h.sim.control.dump()).endpoints.map((e) =>
    (e.IpConfigurations as Array<{ IpAddress: string }>).map((c) => c.IpAddress),
  );

describe('bridge mode with host-local', () => {
  it("the IP in HNS is IPAM's; a repeated ADD does not call IPAM again; DEL releases it", async () => {
    const ns = await newNamespace(h);
    const conf = bridgeConf({ ipam: hostLocal(h, '10.244.1.0/24', { type: 'counting-ipam' }) });
    const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-a', netns: ns, path: withPath() });
    expect(add.exitCode).toBe(0);
    expect(add.json).toMatchObject({ ips: [{ address: '10.244.1.10/24', gateway: '10.244.1.1', interface: 0 }] });
    expect(await endpointIps()).toEqual([['10.244.1.10']]);
    expect(heldIps(h, 'cbr0')).toEqual({ '10.244.1.10': 'pod-a' });
    expect(ipamCalls()).toEqual(['ADD pod-a']);

    const again = await cni(h, { verb: 'ADD', conf, containerId: 'pod-a', netns: ns, path: withPath() });
    expect(again.exitCode).toBe(0);
    expect(again.json).toEqual(add.json);
    expect(ipamCalls()).toEqual(['ADD pod-a']); // not asked again
    expect(heldIps(h, 'cbr0')).toEqual({ '10.244.1.10': 'pod-a' });

    // A second pod gets the next address.
    const b = await cni(h, { verb: 'ADD', conf, containerId: 'pod-b', netns: await newNamespace(h), path: withPath() });
    expect(b.json).toMatchObject({ ips: [{ address: '10.244.1.11/24' }] });

    const del = await cni(h, { verb: 'DEL', conf, containerId: 'pod-a', netns: ns, path: withPath() });
    expect(del).toEqual({ exitCode: 0, stdout: '', json: undefined });
    expect(heldIps(h, 'cbr0')).toEqual({ '10.244.1.11': 'pod-b' });
    expect(await endpointIps()).toEqual([['10.244.1.11']]);
    expect(ipamCalls()).toEqual(['ADD pod-a', 'ADD pod-b', 'DEL pod-a']);
  });

  it('negative control: host-local itself refuses a second ADD for the same attachment', async () => {
    // Why "a repeated ADD does not call IPAM again" matters: calling it would fail the runtime's retry.
    const conf = bridgeConf({ ipam: hostLocal(h) });
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf, containerId: 'pod-a', netns: ns })).exitCode).toBe(0);
    fs.rmSync(path.join(h.stateDir, 'attachments', 'pod-a@eth0.json')); // the plugin forgets; IPAM does not
    const again = await cni(h, { verb: 'ADD', conf, containerId: 'pod-a', netns: ns });
    expect(again.json).toMatchObject({
      code: 102,
      msg: expect.stringMatching(/^ipam plugin "host-local" failed: .*duplicate allocation/),
    });
  });
});

describe('bridge mode with static IPAM', () => {
  it('gets the configured address into HNS and the result; DEL removes the endpoint', async () => {
    const ns = await newNamespace(h);
    const conf = bridgeConf({
      ipam: {
        type: 'static',
        addresses: [{ address: '10.244.1.77/24', gateway: '10.244.1.1' }],
        routes: [{ dst: '0.0.0.0/0' }],
        dns: { nameservers: ['10.0.0.10'] },
      },
    });
    const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-s', netns: ns });
    expect(add.exitCode).toBe(0);
    expect(add.json).toMatchObject({
      ips: [{ address: '10.244.1.77/24', gateway: '10.244.1.1', interface: 0 }],
      routes: [{ dst: '0.0.0.0/0' }],
      dns: { nameservers: ['10.0.0.10'] },
    });
    expect(await endpointIps()).toEqual([['10.244.1.77']]);
    const ep = (await h.sim.control.dump()).endpoints[0]!;
    expect(ep.Dns).toMatchObject({ ServerList: ['10.0.0.10'] });
    expect((await cni(h, { verb: 'DEL', conf, containerId: 'pod-s', netns: ns })).exitCode).toBe(0);
    expect(await endpointIps()).toEqual([]);
    expect(stateFiles(h).filter((f) => !f.startsWith('tombstones/'))).toEqual([]);
  });
});

describe('IPAM failures create nothing', () => {
  it('a missing IPAM is 102 naming the directories searched; nothing in HNS, no state', async () => {
    const ns = await newNamespace(h);
    const before = await lastSeq(h);
    const conf = bridgeConf({ ipam: { type: 'no-such-ipam' } });
    const r = await cni(h, { verb: 'ADD', conf, containerId: 'pod-m', netns: ns, path: withPath() });
    expect(r.exitCode).toBe(1);
    expect(r.json).toEqual({
      cniVersion: '1.0.0',
      code: 102,
      msg: `ipam plugin "no-such-ipam" not found on CNI_PATH [${bin}, ${CNI_BIN}]`,
    });
    expect(await mutationsSince(h, before)).toEqual([]);
    expect(stateFiles(h)).toEqual([]);
  });

  it('a failing IPAM is 102 with its message (its code and details in details); nothing created', async () => {
    const ns = await newNamespace(h);
    const before = await lastSeq(h);
    const conf = bridgeConf({ ipam: { type: 'failing-ipam' } });
    const r = await cni(h, { verb: 'ADD', conf, containerId: 'pod-f', netns: ns, path: withPath() });
    expect(r.exitCode).toBe(1);
    expect(r.json).toEqual({
      cniVersion: '1.0.0',
      code: 102,
      msg: 'ipam plugin "failing-ipam" failed: pool exhausted',
      details: 'ADD: ipam error code 999: range 10.244.1.0/24 is full',
    });
    expect(await mutationsSince(h, before)).toEqual([]);
    expect(stateFiles(h)).toEqual([]);
  });
});

describe('rollback after IPAM allocated', () => {
  it('HcnCreateEndpoint failing: the IP is released, the intent removed, no endpoint', async () => {
    const conf = bridgeConf({ ipam: hostLocal(h, '10.244.1.0/24', { type: 'counting-ipam' }) });
    await h.sim.control.failCall('HcnCreateEndpoint', HR.E_FAIL);
    const r = await cni(h, { verb: 'ADD', conf, containerId: 'pod-r', netns: await newNamespace(h), path: withPath() });
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({
      code: 100,
      msg: expect.stringMatching(
        new RegExp(
          `^creating endpoint ${endpointName({ containerId: 'pod-r', ifname: 'eth0' })}: HcnCreateEndpoint failed`,
        ),
      ),
    });
    expect(JSON.parse(String(r.json!.details))).toMatchObject({ op: 'HcnCreateEndpoint', hresult: '0x80004005' });
    expect(ipamCalls()).toEqual(['ADD pod-r', 'DEL pod-r']);
    expect(heldIps(h, 'cbr0')).toEqual({});
    expect((await h.sim.control.stats()).counts.endpoints).toBe(0);
    expect(stateFiles(h)).toEqual([]);
    // The next pod's ADD works (host-local moves on round-robin, so it gets .11; .10 is simply free).
    const next = await cni(h, {
      verb: 'ADD',
      conf,
      containerId: 'pod-n',
      netns: await newNamespace(h),
      path: withPath(),
    });
    expect(next.exitCode).toBe(0);
    expect(heldIps(h, 'cbr0')).toEqual({ '10.244.1.11': 'pod-n' });
  });

  it('the attach failing (a namespace that does not exist): the endpoint is deleted and the IP released', async () => {
    const conf = bridgeConf({ ipam: hostLocal(h, '10.244.1.0/24', { type: 'counting-ipam' }) });
    const missing = '0badc0de-0000-4000-8000-000000000001';
    const r = await cni(h, { verb: 'ADD', conf, containerId: 'pod-ns', netns: missing, path: withPath() });
    expect(r.exitCode).toBe(1);
    expect(r.json).toMatchObject({
      code: 100,
      msg: expect.stringContaining(`HCN namespace ${missing} does not exist`),
    });
    const ops = (await h.sim.control.calls()).map((c) => c.op);
    expect(ops).toContain('HcnCreateEndpoint');
    expect(ops).toContain('HcnDeleteEndpoint');
    expect((await h.sim.control.stats()).counts.endpoints).toBe(0);
    expect(ipamCalls()).toEqual(['ADD pod-ns', 'DEL pod-ns']);
    expect(heldIps(h, 'cbr0')).toEqual({});
    expect(stateFiles(h)).toEqual([]);
  });
});
