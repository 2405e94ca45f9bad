/**
 * Bad inputs through runCni with a live simulator and a node that already has a pod: each gives its CNI code and
 * a message naming the problem, and leaves HNS and the state exactly as they were. "Unchanged" is measured in the
 * simulator's call log (no HcnCreate/Modify/Delete, no HNSCall POST/PUT/DELETE since the call) and in HNS's objects
 * and the state directory's files (the same before and after; in particular no attachment, intent or tombstone of
 * the refused pod).
 */
import { runCni } from '../../src/run';
import { silentLogger } from '../../src/log/logger';
import { pluginDeps } from '../../src/plugin/deps';
import { bridgeConf, cni, CNI_BIN, startHarness, stateFiles, type Harness } from '../helpers/cni-harness';
import { lastSeq, mutationsSince, newNamespace } from './support';

let h: Harness;
let ns: string;
beforeAll(async () => {
  h = await startHarness();
  ns = await newNamespace(h);
  // A node with one healthy pod: its objects and record must survive every bad input untouched.
  const ok = await cni(h, { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-ok', netns: ns });
  expect(ok.exitCode).toBe(0);
});
afterAll(async () => {
  await h.stop();
});

type Env = Record<string, string | undefined>;

function env(over: Env = {}): Env {
  const e: Env = {
    CNI_COMMAND: 'ADD',
    CNI_CONTAINERID: 'pod-bad',
    CNI_IFNAME: 'eth0',
    CNI_NETNS: '5f0e7a3c-1b2d-4c5e-8f90-123456789abc',
    CNI_PATH: CNI_BIN,
    ...over,
  };
  for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k];
  return e;
}

const conf = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ ...bridgeConf(), stateDir: h.stateDir, ...extra });
const NIC_MAC = '00-15-5D-AA-00-02'; // the simulator's default "Ethernet 2"
const nicConf = (extra: Record<string, unknown> = {}) =>
  conf({ name: 'nic', mode: 'delegatedNic', createNetwork: false, subnet: '10.10.2.0/24', ...extra });

interface Case {
  name: string;
  env?: Env;
  stdin: () => string | Buffer;
  code: number;
  msg: string | RegExp;
}

const cases: Case[] = [
  {
    name: 'malformed JSON',
    stdin: () => '{"cniVersion":"1.0.0","name":',
    code: 6,
    msg: /^failed to decode the network configuration: /,
  },
  {
    name: 'mtu of the wrong type',
    stdin: () => conf({ mtu: 'abc' }),
    code: 7,
    msg: 'invalid network configuration: "mtu" must be an integer from 576 to 9000, got "abc"',
  },
  {
    name: 'createNetwork of the wrong type',
    stdin: () => conf({ createNetwork: 'yes' }),
    code: 7,
    msg: /"createNetwork" must be true or false, got "yes"/,
  },
  { name: 'subnet of the wrong type', stdin: () => conf({ subnet: 24 }), code: 7, msg: /"subnet" must be .*, got 24/ },
  {
    name: 'unknown cniVersion',
    stdin: () => conf({ cniVersion: '0.5.0' }),
    code: 1,
    msg: 'incompatible CNI version "0.5.0"; this plugin supports 0.1.0, 0.2.0, 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0',
  },
  {
    name: 'missing CNI_CONTAINERID and CNI_NETNS',
    env: env({ CNI_CONTAINERID: undefined, CNI_NETNS: undefined }),
    stdin: () => conf(),
    code: 4,
    msg: 'required env variables [CNI_CONTAINERID, CNI_NETNS] missing for ADD',
  },
  {
    name: 'missing CNI_COMMAND',
    env: env({ CNI_COMMAND: undefined }),
    stdin: () => conf(),
    code: 4,
    msg: 'required env variables [CNI_COMMAND] missing',
  },
  {
    name: 'path characters in the container id',
    env: env({ CNI_CONTAINERID: '../../etc/passwd' }),
    stdin: () => conf(),
    code: 4,
    msg: /^invalid CNI_CONTAINERID "\.\.\/\.\.\/etc\/passwd"/,
  },
  {
    name: 'a backslash in the container id (DEL)',
    env: env({ CNI_COMMAND: 'DEL', CNI_CONTAINERID: 'pod-ok\\..\\x' }),
    stdin: () => conf(),
    code: 4,
    msg: /^invalid CNI_CONTAINERID/,
  },
  {
    name: 'ipam.type with a path',
    stdin: () => conf({ ipam: { type: '/usr/lib/cni/host-local' } }),
    code: 7,
    msg: 'invalid network configuration: "ipam.type" must be a plain executable name (no "/", "\\", "..", ":" or NUL), got "/usr/lib/cni/host-local"',
  },
  {
    name: 'oversized stdin',
    stdin: () => conf({ pad: 'x'.repeat(1024 * 1024) }),
    code: 6,
    msg: /^stdin is 1048\d{3} bytes; the network configuration may be at most 1048576 bytes \(1 MiB\)$/,
  },
  {
    name: 'a policy without Type',
    stdin: () =>
      conf({ AdditionalArgs: [{ Name: 'EndpointPolicy', Value: { Settings: { Exceptions: ['10.0.0.0/8'] } } }] }),
    code: 7,
    msg: /"AdditionalArgs\[0\]\.Value\.Type" must be a non-empty string, got nothing/,
  },
  {
    name: 'an sctp portMapping',
    stdin: () => conf({ runtimeConfig: { portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'sctp' }] } }),
    code: 2,
    msg: 'unsupported field: runtimeConfig.portMappings protocol "sctp" (HNS maps tcp and udp only)',
  },
  {
    name: 'loopbackDSR with apiVersion 1',
    stdin: () => conf({ loopbackDSR: true, apiVersion: 1 }),
    code: 2,
    msg: 'unsupported field: loopbackDSR true needs the HCN (v2) API, and this host uses HNS v1',
  },
  {
    name: 'a CNI_NETNS that is a Linux path',
    env: env({ CNI_NETNS: '/var/run/netns/cni-5f0e7a3c' }),
    stdin: () => conf(),
    code: 4,
    msg: 'CNI_NETNS must be an HCN namespace GUID, "none", or "container:<id>"; got "/var/run/netns/cni-5f0e7a3c"',
  },
  {
    name: 'delegatedNic without any MAC',
    stdin: () => nicConf(),
    code: 7,
    msg: 'delegatedNic mode needs the pod NIC MAC: runtimeConfig.mac (capability "mac"), CNI_ARGS MAC=…, or a MAC in the IPAM result',
  },
  {
    name: 'runtimeConfig.mac and CNI_ARGS MAC disagreeing',
    env: env({ CNI_ARGS: 'IgnoreUnknown=1;MAC=00:15:5d:aa:00:01' }),
    stdin: () => nicConf({ runtimeConfig: { mac: NIC_MAC } }),
    code: 7,
    msg: `runtimeConfig.mac ${NIC_MAC} and CNI_ARGS MAC 00-15-5D-AA-00-01 disagree`,
  },
  {
    name: 'a repeated ADD of a live pod with another netns',
    env: env({ CNI_CONTAINERID: 'pod-ok', CNI_NETNS: 'none' }),
    stdin: () => conf(),
    code: 4,
    msg: /^attachment pod-ok@eth0 exists with CNI_NETNS ".*", not "none"; DEL it first$/,
  },
];

interface Snapshot {
  files: string[];
  objects: string[];
}

async function snapshot(): Promise<Snapshot> {
  const dump = await h.sim.control.dump();
  return {
    files: stateFiles(h),
    objects: [...dump.networks, ...dump.endpoints, ...dump.namespaces].map((o) => JSON.stringify(o)).sort(),
  };
}

async function expectUnchanged(before: Snapshot, seq: number): Promise<void> {
  expect(await mutationsSince(h, seq)).toEqual([]);
  const after = await snapshot();
  expect(after).toEqual(before);
  expect(after.files).toEqual(['attachments/pod-ok@eth0.json']);
}

describe('bad inputs with a live simulator', () => {
  it.each(cases.map((c) => [c.name, c] as const))(
    '%s: its code and message; HNS and state unchanged',
    async (_name, c) => {
      const before = await snapshot();
      const seq = await lastSeq(h);
      const r = await runCni({
        env: c.env ?? env(),
        stdin: c.stdin(),
        deps: h.deps,
        createLogger: () => silentLogger,
      });
      expect(r.exitCode).toBe(1);
      const out = JSON.parse(r.stdout) as { code: number; msg: string };
      expect(out.code).toBe(c.code);
      if (typeof c.msg === 'string') expect(out.msg).toBe(c.msg);
      else expect(out.msg).toMatch(c.msg);
      await expectUnchanged(before, seq);
    },
  );

  it('apiVersion 2 on a host without HCN is 107; HNS and state unchanged', async () => {
    await h.sim.control.setVersion(7, 2, { v2: false });
    // The API choice is cached per runtime (a property of the host): this is another host now.
    h.deps = pluginDeps({ pid: process.pid });
    try {
      const before = await snapshot();
      const seq = await lastSeq(h);
      const r = await cni(h, { verb: 'ADD', conf: bridgeConf({ apiVersion: 2 }), containerId: 'pod-bad', netns: ns });
      expect(r.exitCode).toBe(1);
      expect(r.json).toMatchObject({
        code: 107,
        msg: expect.stringMatching(
          /^the HCN \(v2\) API is not available on this host: Hcn\w+ answered E_NOTIMPL while .*; check "apiVersion"/,
        ),
      });
      await expectUnchanged(before, seq);
      // auto on the same host is fine (v1), so the 107 is about the setting, not the host being broken.
      const v1 = await cni(h, { verb: 'ADD', conf: bridgeConf(), containerId: 'pod-v1', netns: 'none' });
      expect(v1.exitCode).toBe(0);
      expect((await cni(h, { verb: 'DEL', conf: bridgeConf(), containerId: 'pod-v1', netns: 'none' })).exitCode).toBe(
        0,
      );
    } finally {
      await h.sim.control.setVersion(15, 4, { v2: true });
      h.deps = pluginDeps({ pid: process.pid });
    }
  });
});
