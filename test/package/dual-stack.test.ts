/**
 * A dual-stack pod through the packaged executable (dist/hcn-cni) against the simulator, with Debian's host-local
 * handing out one address per family: ADD, CHECK, GC (which removes the other pod and releases both of its
 * addresses) and DEL (which releases both of this pod's).
 */
import * as crypto from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { cniEnv, startHarness, type Harness } from '../helpers/cni-harness';
import { ensureLinuxPackage, EXE, run } from './helpers';

let h: Harness;
let tmp: string;

beforeAll(async () => {
  ensureLinuxPackage();
  h = await startHarness();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-dual-'));
}, 600_000);
afterAll(async () => {
  await h?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

function conf(): Record<string, unknown> {
  return {
    cniVersion: '1.1.0',
    name: 'dual',
    type: 'hcn-cni',
    createNetwork: true,
    subnet: ['10.244.1.0/24', 'fd00:10:244:1::/64'],
    ipam: {
      type: 'host-local',
      dataDir: path.join(tmp, 'ipam'),
      ranges: [
        [{ subnet: '10.244.1.0/24', rangeStart: '10.244.1.10', rangeEnd: '10.244.1.60', gateway: '10.244.1.1' }],
        [
          {
            subnet: 'fd00:10:244:1::/64',
            rangeStart: 'fd00:10:244:1::10',
            rangeEnd: 'fd00:10:244:1::60',
            gateway: 'fd00:10:244:1::1',
          },
        ],
      ],
    },
    stateDir: h.stateDir,
    logLevel: 'debug',
  };
}
const held = () =>
  fs
    .readdirSync(path.join(tmp, 'ipam', 'dual'))
    .filter((f) => /^[0-9a-f.:]{4,}$/.test(f))
    .sort();

async function exe(
  verb: 'ADD' | 'CHECK' | 'DEL' | 'GC',
  c: Record<string, unknown>,
  containerId?: string,
  netns?: string,
) {
  const env = {
    ...cniEnv(h, { verb, conf: c, ...(containerId ? { containerId } : {}), ...(netns ? { netns } : {}) }),
    TMPDIR: tmp,
  };
  const r = await run(EXE, [], env, JSON.stringify(c));
  return { ...r, json: r.stdout.trim() ? (JSON.parse(r.stdout) as Record<string, any>) : undefined };
}
async function namespace(): Promise<string> {
  const id = crypto.randomUUID();
  await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).createNamespace({}, id);
  return id;
}

it('ADD / CHECK / GC / DEL of a dual-stack pod with host-local, through the executable', async () => {
  const nsA = await namespace();
  const a = await exe('ADD', conf(), 'pod-a', nsA);
  expect(a.json).toMatchObject({
    cniVersion: '1.1.0',
    ips: [
      { address: '10.244.1.10/24', gateway: '10.244.1.1', interface: 0 },
      { address: 'fd00:10:244:1::10/64', gateway: 'fd00:10:244:1::1', interface: 0 },
    ],
    routes: [
      { dst: '0.0.0.0/0', gw: '10.244.1.1' },
      { dst: '::/0', gw: 'fd00:10:244:1::1' },
    ],
  });
  const b = await exe('ADD', conf(), 'pod-b', await namespace());
  expect(b.json!.ips.map((ip: { address: string }) => ip.address)).toEqual(['10.244.1.11/24', 'fd00:10:244:1::11/64']);
  expect(held()).toEqual(['10.244.1.10', '10.244.1.11', 'fd00:10:244:1::10', 'fd00:10:244:1::11']);
  const eps = (await h.sim.control.dump()).endpoints.map((e) =>
    (e.IpConfigurations as Array<{ IpAddress: string }>).map((c) => c.IpAddress),
  );
  expect(eps).toEqual([
    ['10.244.1.10', 'fd00:10:244:1::10'],
    ['10.244.1.11', 'fd00:10:244:1::11'],
  ]);

  const check = await exe('CHECK', { ...conf(), prevResult: a.json }, 'pod-a', nsA);
  expect([check.code, check.stdout]).toEqual([0, '']);

  const gc = await exe('GC', { ...conf(), 'cni.dev/valid-attachments': [{ containerID: 'pod-a', ifname: 'eth0' }] });
  expect([gc.code, gc.stdout]).toEqual([0, '']);
  expect(held()).toEqual(['10.244.1.10', 'fd00:10:244:1::10']);
  expect((await h.sim.control.dump()).endpoints).toHaveLength(1);

  const del = await exe('DEL', conf(), 'pod-a', nsA);
  expect([del.code, del.stdout]).toEqual([0, '']);
  expect(held()).toEqual([]);
  expect((await h.sim.control.dump()).endpoints).toEqual([]);
});
