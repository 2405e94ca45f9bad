/**
 * The state store under the plugin, against the simulator.
 *  - A corrupt attachment record is moved to <stateDir>/quarantine with a .why file, logged, reported by STATUS;
 *    it never blocks ADD or DEL of other pods, and its pod's objects are not deleted by another pod's audit
 *    (verdict "protected") until that pod's own DEL, or a GC that does not list it: then they are gone.
 *  - Records are written 0600 (directories 0700) and atomically: no .tmp is left, and a reader hammering the file
 *    in another process while it is rewritten never sees a partial file.
 *  - The OS lock is never held across an HNS call: with HcnCreateEndpoint taking 500 ms, four ADDs in parallel
 *    (processes) all get their create into HNS while the first is still executing, and HNS runs them one after the
 *    other without gaps (a lock held across the create would have let only one in at a time).
 */
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { hostOs } from '../../src/hns/host-os';
import { loadNative } from '../../src/hns/native';
import { parseRecord, type AttachmentRecord } from '../../src/state/records';
import { pluginDeps } from '../../src/plugin/deps';
import { StateStore } from '../../src/state/store';
import { bridgeConf, cni, cniProcess, ROOT, useHarness, stateFiles, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, logLines, newNamespace, recordFiles } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

// The next ADD's whole-node audit is what these tests are about: 0 makes it due on every ADD (audit-due.ts).
const conf = (extra: Record<string, unknown> = {}) =>
  bridgeConf({ cniVersion: '1.1.0', ipam: hostLocal(h), auditIntervalSeconds: 0, ...extra });
const endpointIds = async () => (await h.sim.control.dump()).endpoints.map((e) => e.ID.toLowerCase());
const recordOf = (id: string) =>
  JSON.parse(fs.readFileSync(path.join(h.stateDir, 'attachments', `${id}@eth0.json`), 'utf8')) as AttachmentRecord;

/** Pods q (whose record then rots) and p, both committed; returns q's endpoint id and netns. */
async function corruptQ(): Promise<{ qEndpoint: string; qNetns: string; pNetns: string }> {
  const qNetns = await newNamespace(h);
  const pNetns = await newNamespace(h);
  expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'q', netns: qNetns })).exitCode).toBe(0);
  expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'p', netns: pNetns })).exitCode).toBe(0);
  const qEndpoint = recordOf('q').endpoint.id.toLowerCase();
  fs.writeFileSync(path.join(h.stateDir, 'attachments', 'q@eth0.json'), '\u0000\u0000garbage{{');
  return { qEndpoint, qNetns, pNetns };
}

describe('a corrupt record', () => {
  it('is quarantined, logged, reported; protects its pod from other audits; never blocks other pods; its DEL cleans up', async () => {
    const { qEndpoint, qNetns, pNetns } = await corruptQ();

    // Another pod's ADD (through the CLI, to see the log): succeeds, quarantines q's record, leaves q's endpoint.
    const r = await cniProcess(h, { verb: 'ADD', conf: conf(), containerId: 'r', netns: await newNamespace(h) });
    expect(r.exitCode).toBe(0);
    const q = recordFiles(h, 'quarantine');
    expect(q).toEqual([
      expect.stringMatching(/^attachment--q@eth0\.json\.\d+$/),
      expect.stringMatching(/^attachment--q@eth0\.json\.\d+\.why$/),
    ]);
    expect(fs.readFileSync(path.join(h.stateDir, 'quarantine', q[1]!), 'utf8')).toMatch(/^not JSON: /);
    expect(fs.readFileSync(path.join(h.stateDir, 'quarantine', q[0]!), 'utf8')).toBe('\u0000\u0000garbage{{'); // kept for the operator
    const lines = logLines(r.stderr);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'unreadable state record moved to quarantine',
        file: path.join(h.stateDir, 'attachments', 'q@eth0.json'),
        reason: expect.stringMatching(/^not JSON/),
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        audit: 'protected',
        kind: 'endpoint',
        id: expect.stringMatching(new RegExp(qEndpoint, 'i')),
      }),
    );
    expect(await endpointIds()).toContain(qEndpoint);
    expect(recordFiles(h, 'attachments')).toEqual(['p@eth0.json', 'r@eth0.json']);

    // STATUS reports it.
    const status = await cni(h, { verb: 'STATUS', conf: conf() });
    expect(status.json).toMatchObject({
      code: 51,
      details: expect.stringMatching(
        /^unreadable attachment record of q@eth0 quarantined as .*attachment--q@eth0\.json\.\d+: not JSON/,
      ),
    });

    // Other pods' DEL and ADD are not blocked, and their audits leave q's endpoint alone.
    expect((await cni(h, { verb: 'DEL', conf: conf(), containerId: 'p', netns: pNetns })).exitCode).toBe(0);
    expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 's', netns: await newNamespace(h) })).exitCode).toBe(
      0,
    );
    expect(await endpointIds()).toContain(qEndpoint);
    expect(Object.values(heldIps(h, 'cbr0')).sort()).toEqual(['q', 'r', 's']);

    // q's own DEL: its endpoint, its address and its quarantined record are gone; STATUS is healthy again.
    const del = await cniProcess(h, { verb: 'DEL', conf: conf(), containerId: 'q', netns: qNetns });
    expect({ exit: del.exitCode, out: del.stdout }).toEqual({ exit: 0, out: '' });
    expect(await endpointIds()).not.toContain(qEndpoint);
    expect(Object.values(heldIps(h, 'cbr0')).sort()).toEqual(['r', 's']);
    expect(recordFiles(h, 'quarantine')).toEqual([]);
    expect(await cni(h, { verb: 'STATUS', conf: conf() })).toEqual({ exitCode: 0, stdout: '', json: undefined });
  });

  it('GC leaves a quarantined pod alone, listed or not (an unreadable record cannot say which network it is of); its DEL cleans up', async () => {
    const { qEndpoint, qNetns } = await corruptQ();
    const keep = await cni(h, {
      verb: 'GC',
      conf: {
        ...conf(),
        'cni.dev/valid-attachments': [
          { containerID: 'q', ifname: 'eth0' },
          { containerID: 'p', ifname: 'eth0' },
        ],
      },
    });
    expect(keep.exitCode).toBe(0);
    expect(await endpointIds()).toContain(qEndpoint);
    expect(recordFiles(h, 'quarantine')).toHaveLength(2);

    const notListed = await cni(h, {
      verb: 'GC',
      conf: { ...conf(), 'cni.dev/valid-attachments': [{ containerID: 'p', ifname: 'eth0' }] },
    });
    expect(notListed.exitCode).toBe(0);
    expect((await endpointIds()).sort()).toEqual([recordOf('p').endpoint.id.toLowerCase(), qEndpoint].sort());
    expect(recordFiles(h, 'quarantine')).toHaveLength(2);
    expect(Object.values(heldIps(h, 'cbr0')).sort()).toEqual(['p', 'q']);

    expect((await cni(h, { verb: 'DEL', conf: conf(), containerId: 'q', netns: qNetns })).exitCode).toBe(0);
    expect(await endpointIds()).toEqual([recordOf('p').endpoint.id.toLowerCase()]);
    expect(recordFiles(h, 'quarantine')).toEqual([]);
    expect(Object.values(heldIps(h, 'cbr0'))).toEqual(['p']);
  });
});

describe("a record under another pod's file name", () => {
  it("is quarantined, not trusted: that pod's DEL leaves the record's own pod and its endpoint alone", async () => {
    const ns = await newNamespace(h);
    expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'b', netns: ns })).exitCode).toBe(0);
    const dir = path.join(h.stateDir, 'attachments');
    fs.copyFileSync(path.join(dir, 'b@eth0.json'), path.join(dir, 'a@eth0.json'));
    const before = await endpointIds();
    expect(before).toEqual([recordOf('b').endpoint.id.toLowerCase()]);
    expect((await cni(h, { verb: 'DEL', conf: conf(), containerId: 'a', netns: await newNamespace(h) })).exitCode).toBe(
      0,
    );
    expect(await endpointIds()).toEqual(before);
    expect(Object.values(heldIps(h, 'cbr0'))).toEqual(['b']);
    expect(recordFiles(h, 'attachments')).toEqual(['b@eth0.json']);
  });
});

describe('record files', () => {
  it('are 0600 in 0700 directories, and no .tmp is left behind', async () => {
    const ns = await newNamespace(h);
    expect((await cniProcess(h, { verb: 'ADD', conf: conf(), containerId: 'm', netns: ns })).exitCode).toBe(0);
    const file = path.join(h.stateDir, 'attachments', 'm@eth0.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    for (const d of ['attachments', 'intents', 'tombstones', 'quarantine'])
      expect(fs.statSync(path.join(h.stateDir, d)).mode & 0o777).toBe(0o700);
    // An intent and a tombstone are 0600 too.
    const store = new StateStore(h.stateDir, { os: hostOs(loadNative().native) });
    const now = Date.now();
    await store.writeIntent({
      kind: 'intent',
      schema: 1,
      id: 'i1',
      containerId: 'n',
      ifname: 'eth0',
      planned: [],
      pid: process.pid,
      pidStartTime: null,
      createdAt: now,
      deadline: now + 60_000,
    });
    await store.tombstone({ containerId: 'o', ifname: 'eth0' }, 'test');
    expect(fs.statSync(path.join(h.stateDir, 'intents', 'n@eth0.json')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(h.stateDir, 'tombstones', 'o@eth0.json')).mode & 0o777).toBe(0o600);
    expect((await cniProcess(h, { verb: 'DEL', conf: conf(), containerId: 'm', netns: ns })).exitCode).toBe(0);
    expect(stateFiles(h).filter((f) => /\.tmp$/.test(f))).toEqual([]);
    expect(stateFiles(h)).toEqual(['intents/n@eth0.json', 'tombstones/o@eth0.json']);
  });

  it('a reader in another process never sees a partial record while it is rewritten', async () => {
    const dir = path.join(h.tmp, 'hammer');
    const done = path.join(h.tmp, 'hammer.done');
    const writes = 150;
    // The writer: another process rewriting one record, alternating a small and a ~256 KiB result.
    const writer = `
      const { StateStore } = require(${JSON.stringify(path.join(ROOT, 'dist/state/store.js'))});
      const { hostOs } = require(${JSON.stringify(path.join(ROOT, 'dist/hns/host-os.js'))});
      const fs = require('fs');
      const store = new StateStore(${JSON.stringify(dir)}, { os: hostOs() });
      (async () => {
        for (let i = 0; i < ${writes}; i++) {
          const pad = 'x'.repeat(i % 2 ? 128 * 1024 : 16);
          await store.commitAttachment({ kind: 'attachment', schema: 1, containerId: 'h', ifname: 'eth0', netns: 'none', mode: 'bridge', apiVersion: 2,
            network: { id: 'n', name: 'n', owned: false }, endpoint: { id: 'e' + i, name: 'e', owned: true }, ipamAllocated: false,
            attach: { kind: 'none', target: '' }, result: { i, pad, len: pad.length }, createdAt: Date.now() });
        }
        fs.writeFileSync(${JSON.stringify(done)}, '');
      })();`;
    const child = spawn(process.execPath, ['-e', writer], { stdio: ['ignore', 'inherit', 'inherit'] });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const file = path.join(dir, 'attachments', 'h@eth0.json');
    let reads = 0;
    let big = 0;
    const torn: string[] = [];
    const seen = new Set<number>();
    // The reader: this process, as fast as it can, until the writer is done.
    const deadline = Date.now() + 30_000;
    while (!fs.existsSync(done) && Date.now() < deadline) {
      let text: string;
      try {
        text = fs.readFileSync(file, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT' && seen.size === 0) continue; // not written yet
        throw e;
      }
      reads++;
      try {
        const rec = parseRecord(text, 'attachment');
        const result = rec.result as { i: number; pad: string; len: number };
        if (result.pad.length !== result.len || rec.endpoint.id !== `e${result.i}`)
          torn.push(`inconsistent record ${result.i}`);
        seen.add(result.i);
        if (result.len > 16) big++;
      } catch (e) {
        torn.push(`${(e as Error).message} (${text.length} bytes)`);
      }
      if (reads % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(await exited).toBe(0);
    expect(torn.slice(0, 5)).toEqual([]);
    // The reader really overlapped the writer: it saw many different versions, big ones included.
    expect(seen.size).toBeGreaterThan(20);
    expect(big).toBeGreaterThan(5);
    expect(reads).toBeGreaterThan(100);
    expect(fs.readdirSync(path.join(dir, 'attachments'))).toEqual(['h@eth0.json']); // no .tmp left
  });
});

describe('record format', () => {
  it('cniNetwork (the conflist that made the attachment) is kept, and must be a string when present', () => {
    const rec = {
      kind: 'attachment',
      schema: 1,
      containerId: 'c',
      ifname: 'eth0',
      netns: 'none',
      mode: 'bridge',
      apiVersion: 2,
      network: { id: 'n', name: 'n', owned: false },
      endpoint: { id: 'e', name: 'e', owned: true },
      ipamAllocated: false,
      attach: { kind: 'none', target: '' },
      result: {},
      createdAt: 1,
    };
    expect(parseRecord(JSON.stringify({ ...rec, cniNetwork: 'k8s' }), 'attachment').cniNetwork).toBe('k8s');
    expect(parseRecord(JSON.stringify(rec), 'attachment').cniNetwork).toBeUndefined();
    expect(() => parseRecord(JSON.stringify({ ...rec, cniNetwork: 5 }), 'attachment')).toThrow(
      '"cniNetwork" must be a string',
    );
  });
});

describe('the state lock and HNS calls', () => {
  it('four parallel ADDs all reach HcnCreateEndpoint while the first is still executing; HNS runs them back to back', async () => {
    const conf4 = bridgeConf({ cniVersion: '1.1.0' });
    // The shared network exists already (so the ADDs only create endpoints).
    expect(
      (await cni(h, { verb: 'ADD', conf: conf4, containerId: 'warm', netns: await newNamespace(h) })).exitCode,
    ).toBe(0);
    await h.sim.control.setLatency('HcnCreateEndpoint', 500);
    const pods = ['l1', 'l2', 'l3', 'l4'];
    const netns = await Promise.all(pods.map(() => newNamespace(h)));
    const runs = await Promise.all(
      pods.map((id, i) =>
        cniProcess(h, { verb: 'ADD', conf: { ...conf4, logLevel: 'warn' }, containerId: id, netns: netns[i] }),
      ),
    );
    expect(runs.map((r) => r.exitCode)).toEqual([0, 0, 0, 0]);

    const pids = new Set(runs.map((r) => r.pid));
    const creates = (await h.sim.control.calls())
      .filter((c) => c.op === 'HcnCreateEndpoint' && pids.has(c.pid))
      .sort((a, b) => a.finishedAt - b.finishedAt);
    expect(creates).toHaveLength(4);
    // HNS executed them one at a time, each taking its 500 ms: serial, non-overlapping work.
    for (let i = 1; i < 4; i++) expect(creates[i]!.finishedAt - creates[i - 1]!.finishedAt).toBeGreaterThanOrEqual(490);
    // Every create arrived before the one ahead of it finished: the queue never ran dry. Had a process held the
    // state lock across its create, the next process could only have sent its create after that one finished.
    for (let i = 1; i < 4; i++) expect(creates[i]!.acceptedAt).toBeLessThan(creates[i - 1]!.finishedAt);
    // So the whole thing costs the HNS work plus one process, not four ADDs end to end (no wall-clock assertion: the
    // acceptedAt/finishedAt order above is the proof, and timing belongs to the benchmarks).
    const stats = await h.sim.control.stats();
    expect(stats.busyMs).toBeGreaterThanOrEqual(4 * 490);
  });
});

describe('the node-wide claims register', () => {
  it('an ADD whose claim cannot be registered node-wide fails, leaving no intent and nothing in HNS', async () => {
    // The register's directory is a file: registering fails (as a full or read-only disk would make it).
    const claims = path.join(h.tmp, 'claims-is-a-file');
    fs.writeFileSync(claims, '');
    h.deps = pluginDeps({ pid: process.pid, claimsDir: claims });
    // No audit (it would read the register first and fail there): the registration is the first use of it.
    const add = await cni(h, {
      verb: 'ADD',
      conf: conf({ audit: false }),
      containerId: 'r',
      netns: await newNamespace(h),
    });
    expect(add.exitCode).not.toBe(0);
    expect(recordFiles(h, 'intents')).toEqual([]);
    expect(recordFiles(h, 'attachments')).toEqual([]);
    expect(await endpointIds()).toEqual([]);
    expect(heldIps(h, 'cbr0')).toEqual({});
  });
});
