/**
 * No stray file, full disk, lying HNS error or odd input may stall a node, free a live pod's IP, or make
 * a DEL impossible. One scenario per defect, against the simulator, in process (runCni) unless the log or the
 * process matters. Each failed before its fix.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { HR } from '../../src/hns/hresults';
import type { AttachmentRecord, TombstoneRecord } from '../../src/state/records';
import { fileKey } from '../../src/state/file-names';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { DETACH_OP, heldIps, hostLocal, newNamespace, recordFiles } from './support';
import { endpointName } from '../../src/orphans/ownership';

let h: Harness;
useHarness(undefined, (x) => (h = x));

// The next ADD's whole-node audit is what these tests are about: 0 makes it due on every ADD (audit-due.ts).
const conf = (extra: Record<string, unknown> = {}) =>
  bridgeConf({ cniVersion: '1.1.0', ipam: hostLocal(h), auditIntervalSeconds: 0, ...extra });
/** The runtime's GC with these pods (on eth0) still valid. */
const gcKeeping = (...pods: string[]) =>
  cni(h, {
    verb: 'GC',
    conf: { ...conf(), 'cni.dev/valid-attachments': pods.map((containerID) => ({ containerID, ifname: 'eth0' })) },
  });
const endpoints = async () => (await h.sim.control.dump()).endpoints.map((e) => e.ID.toLowerCase());
const file = (dir: string, containerId: string, ifname = 'eth0') =>
  path.join(h.stateDir, dir, `${fileKey({ containerId, ifname })}.json`);
const recordOf = (id: string) => JSON.parse(fs.readFileSync(file('attachments', id), 'utf8')) as AttachmentRecord;
const tombOf = (id: string) => JSON.parse(fs.readFileSync(file('tombstones', id), 'utf8')) as TombstoneRecord;

async function addPod(
  id: string,
  extra: Record<string, unknown> = {},
): Promise<{ netns: string; endpoint: string; ip: string }> {
  const netns = await newNamespace(h);
  const r = await cni(h, { verb: 'ADD', conf: conf(extra), containerId: id, netns });
  expect(r.exitCode).toBe(0);
  const rec = recordOf(id);
  const ip = Object.entries(heldIps(h, 'cbr0')).find(([, owner]) => owner === id)![0];
  return { netns, endpoint: rec.endpoint.id.toLowerCase(), ip };
}

describe('an IP is never freed while HNS still has its endpoint', () => {
  it('a "not found" answer to the detach and the delete is confirmed by a listing; the IP stays until the endpoint is gone', async () => {
    const a = await addPod('pod-a');
    // HNS says "not found" to both, but keeps the endpoint, attached.
    await h.sim.control.failCall(DETACH_OP, HR.ERROR_NOT_FOUND);
    await h.sim.control.failCall('HcnDeleteEndpoint', HR.ERROR_NOT_FOUND);
    const del = await cni(h, { verb: 'DEL', conf: conf(), containerId: 'pod-a', netns: a.netns });
    expect(del.exitCode).toBe(0);
    expect(await endpoints()).toContain(a.endpoint);
    expect(heldIps(h, 'cbr0')).toEqual({ [a.ip]: 'pod-a' });
    expect(tombOf('pod-a')).toMatchObject({ ipamPending: true });

    // The next ADD's audit: HNS lies once more to the sweep's delete — still not confirmed, the IP stays.
    await h.sim.control.failCall('HcnDeleteEndpoint', HR.ERROR_NOT_FOUND);
    const b = await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-b', netns: await newNamespace(h) });
    expect(b.exitCode).toBe(0);
    expect(await endpoints()).toContain(a.endpoint);
    expect(heldIps(h, 'cbr0')[a.ip]).toBe('pod-a');

    // The one after removes it for real, and only then frees the address.
    const c = await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-c', netns: await newNamespace(h) });
    expect(c.exitCode).toBe(0);
    expect(await endpoints()).not.toContain(a.endpoint);
    expect(Object.values(heldIps(h, 'cbr0')).sort()).toEqual(['pod-b', 'pod-c']);
    expect(tombOf('pod-a').ipamPending).toBeUndefined();
  });

  it('DEL without a readable record, HNS refusing the delete (0x803B0006), keeps the IP (ipamPending) like DEL with one', async () => {
    const a = await addPod('pod-a');
    fs.writeFileSync(file('attachments', 'pod-a'), '{ torn');
    await h.sim.control.failCall('HcnDeleteEndpoint', HR.ADAPTER_NOT_FOUND);
    const del = await cni(h, { verb: 'DEL', conf: conf(), containerId: 'pod-a', netns: a.netns });
    expect(del.exitCode).toBe(0);
    expect(await endpoints()).toContain(a.endpoint);
    expect(heldIps(h, 'cbr0')).toEqual({ [a.ip]: 'pod-a' });
    expect(tombOf('pod-a')).toMatchObject({ ipamPending: true });
    // The quarantined record no longer protects the endpoint: the tombstone says the pod is gone.
    expect(recordFiles(h, 'quarantine')).toEqual([]);
    expect(
      (await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-b', netns: await newNamespace(h) })).exitCode,
    ).toBe(0);
    expect(await endpoints()).not.toContain(a.endpoint);
    expect(Object.values(heldIps(h, 'cbr0'))).toEqual(['pod-b']);
  });

  it('a record that parses but lacks a required field (ipamAllocated) is quarantined; DEL then releases the IP', async () => {
    const a = await addPod('pod-a');
    const { ipamAllocated: _dropped, ...rest } = recordOf('pod-a');
    fs.writeFileSync(file('attachments', 'pod-a'), JSON.stringify(rest));
    const del = await cni(h, { verb: 'DEL', conf: conf(), containerId: 'pod-a', netns: a.netns });
    expect(del.exitCode).toBe(0);
    expect(await endpoints()).not.toContain(a.endpoint);
    expect(heldIps(h, 'cbr0')).toEqual({});
    // The pod's next ADD works (it used to fail with 102: the IP was still held under its name).
    expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-a', netns: a.netns })).exitCode).toBe(0);
  });
});

describe('one bad file costs one pod at most, never the node', () => {
  it('a directory named like a record in attachments/, intents/ and tombstones/ blocks nobody; at its own path DEL still cleans up', async () => {
    const q = await addPod('pod-q');
    for (const d of ['attachments', 'intents', 'tombstones']) fs.mkdirSync(file(d, 'stray'));
    fs.rmSync(file('attachments', 'pod-q'));
    fs.mkdirSync(file('attachments', 'pod-q'));
    fs.writeFileSync(path.join(file('attachments', 'pod-q'), 'inside'), 'x');

    expect(
      (await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-r', netns: await newNamespace(h) })).exitCode,
    ).toBe(0);
    expect((await gcKeeping('pod-r', 'pod-q')).exitCode).toBe(0);
    // The directories went to quarantine, reported by STATUS; q's endpoint was protected meanwhile.
    expect(
      recordFiles(h, 'quarantine')
        .filter((n) => !n.endsWith('.why'))
        .sort(),
    ).toEqual([
      expect.stringMatching(/^attachment--pod-q@eth0\.json\.\d+$/),
      expect.stringMatching(/^attachment--stray@eth0\.json\.\d+$/),
      expect.stringMatching(/^intent--stray@eth0\.json\.\d+$/),
      expect.stringMatching(/^tombstone--stray@eth0\.json\.\d+$/),
    ]);
    expect(await endpoints()).toContain(q.endpoint);
    const del = await cni(h, { verb: 'DEL', conf: conf(), containerId: 'pod-q', netns: q.netns });
    expect(del.exitCode).toBe(0);
    expect(await endpoints()).not.toContain(q.endpoint);
    expect(Object.values(heldIps(h, 'cbr0'))).toEqual(['pod-r']);
    // A directory where an ADD writes its intent is moved aside too; the ADD succeeds.
    fs.mkdirSync(file('intents', 'pod-s'));
    expect(
      (await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-s', netns: await newNamespace(h) })).exitCode,
    ).toBe(0);
  });

  it('a FIFO, and a symlink to one, in the state directory hang nothing; they are quarantined', async () => {
    const p = await addPod('pod-p');
    execFileSync('mkfifo', [file('attachments', 'fifo')]);
    execFileSync('mkfifo', [path.join(h.tmp, 'elsewhere.fifo')]);
    fs.symlinkSync(path.join(h.tmp, 'elsewhere.fifo'), file('tombstones', 'linked'));
    fs.rmSync(file('attachments', 'pod-p'));
    execFileSync('mkfifo', [file('attachments', 'pod-p')]);

    expect(
      (await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-r', netns: await newNamespace(h) })).exitCode,
    ).toBe(0);
    expect(
      (
        await cni(h, {
          verb: 'CHECK',
          conf: conf({ prevResult: { cniVersion: '1.1.0', ips: [] } }),
          containerId: 'pod-r',
        })
      ).exitCode,
    ).not.toBe(999);
    expect((await gcKeeping('pod-r', 'pod-p')).exitCode).toBe(0);
    expect(fs.existsSync(path.join(h.tmp, 'elsewhere.fifo'))).toBe(true); // the link was moved, not its target
    expect((await cni(h, { verb: 'DEL', conf: conf(), containerId: 'pod-p', netns: p.netns })).exitCode).toBe(0);
    expect(await endpoints()).not.toContain(p.endpoint);
    const why = recordFiles(h, 'quarantine')
      .filter((n) => n.endsWith('.why'))
      .map((n) => fs.readFileSync(path.join(h.stateDir, 'quarantine', n), 'utf8'));
    expect(why).toEqual(
      expect.arrayContaining([expect.stringMatching(/FIFO/), expect.stringMatching(/symbolic link/)]),
    );
  });

  it('a symlink to /dev/zero is quarantined without reading it (memory stays bounded)', async () => {
    fs.mkdirSync(path.join(h.stateDir, 'intents'), { recursive: true });
    fs.symlinkSync('/dev/zero', file('intents', 'zero'));
    const before = process.memoryUsage().rss;
    expect(
      (await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-r', netns: await newNamespace(h) })).exitCode,
    ).toBe(0);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    expect(recordFiles(h, 'quarantine')).toEqual([
      expect.stringMatching(/^intent--zero@eth0\.json\.\d+$/),
      expect.stringMatching(/\.why$/),
    ]);
  });

  it('file-system trouble is error 5 naming the path and what is wrong, never 999', async () => {
    // stateDir is a file.
    const asFile = path.join(h.tmp, 'state-file');
    fs.writeFileSync(asFile, '');
    let r = await cni(h, {
      verb: 'ADD',
      conf: conf({ stateDir: asFile }),
      containerId: 'pod-x',
      netns: await newNamespace(h),
    });
    expect(r.json).toMatchObject({
      code: 5,
      msg: expect.stringContaining(`${asFile}: is a file where the state directory needs a directory`),
    });
    expect(String(r.json!.details ?? '')).not.toMatch(/\n\s+at /);

    // attachments/ is a file; quarantine/ is a file; lock is a directory.
    for (const [what, make] of [
      ['attachments', (d: string) => fs.writeFileSync(path.join(d, 'attachments'), '')],
      ['quarantine', (d: string) => fs.writeFileSync(path.join(d, 'quarantine'), '')],
      ['lock', (d: string) => fs.mkdirSync(path.join(d, 'lock'))],
    ] as const) {
      const dir = path.join(h.tmp, `state-${what}`);
      fs.mkdirSync(dir);
      make(dir);
      r = await cni(h, {
        verb: 'ADD',
        conf: conf({ stateDir: dir }),
        containerId: 'pod-x',
        netns: await newNamespace(h),
      });
      expect(r.json).toMatchObject({ code: 5, msg: expect.stringContaining(path.join(dir, what)) });
      expect(r.json!.msg).toMatch(
        what === 'lock' ? /is a directory/ : /is a file where the state directory needs a directory/,
      );
    }
  });
});

describe('inputs the spec allows have state files that fit, and DEL always works', () => {
  it('container ids of 250 and 1000 characters: ADD and DEL work, file names stay short', async () => {
    for (const id of ['c'.repeat(250), `X${'y'.repeat(999)}`]) {
      const netns = await newNamespace(h);
      const add = await cni(h, { verb: 'ADD', conf: conf(), containerId: id, netns });
      // HNS may refuse a name this long (that is the HNS name's business); the state never fails.
      expect([0, 100]).toContain(add.exitCode);
      expect(add.json?.code).not.toBe(5);
      expect(add.json?.code).not.toBe(999);
      const del = await cni(h, { verb: 'DEL', conf: conf(), containerId: id, netns });
      expect(del.exitCode).toBe(0);
      for (const d of ['attachments', 'intents', 'tombstones', 'quarantine'])
        for (const n of recordFiles(h, d as 'attachments')) expect(n.length).toBeLessThan(140);
    }
    expect(heldIps(h, 'cbr0')).toEqual({});
  });

  it('ids that differ only in case never share a state file on a case-insensitive file system', async () => {
    const a = await addPod('Pod-A');
    const b = await addPod('pod-a');
    const c = await addPod('POD-A');
    const names = recordFiles(h, 'attachments');
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(3);
    expect(new Set([a.endpoint, b.endpoint, c.endpoint]).size).toBe(3);
    expect((await cni(h, { verb: 'DEL', conf: conf(), containerId: 'pod-a', netns: b.netns })).exitCode).toBe(0);
    expect(recordOf('Pod-A').containerId).toBe('Pod-A');
    expect(recordOf('POD-A').containerId).toBe('POD-A');
  });
});

describe('two ADDs of one pod at once', () => {
  it('one wins; the other gets 11 saying another ADD is running — and no DEL is blamed', async () => {
    const netns = await newNamespace(h);
    // Hold the first ADD inside HNS (its intent is written) while the second arrives.
    const seen = (await h.sim.control.stats()).calls.HcnCreateEndpoint ?? 0;
    await h.sim.control.hang('HcnCreateEndpoint');
    const first = cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-a', netns });
    await until(async () => (((await h.sim.control.stats()).calls.HcnCreateEndpoint ?? 0) > seen ? true : undefined));
    const second = await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-a', netns });
    expect(second.json).toMatchObject({ code: 11, msg: expect.stringMatching(/another ADD of pod-a@eth0 is running/) });
    expect(second.json!.msg).not.toMatch(/DEL/);
    await h.sim.control.release('HcnCreateEndpoint');
    expect((await first).exitCode).toBe(0);
    expect(Object.values(heldIps(h, 'cbr0'))).toEqual(['pod-a']);
    // Once the first has finished, the second's retry is a repeated ADD: the same result.
    expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-a', netns })).exitCode).toBe(0);
  });
});

describe('an intent an ended attempt of this process left behind', () => {
  it('in a resident service or an embedder: the retry of an ADD that lost HNS is not refused as concurrent', async () => {
    const netns = await newNamespace(h);
    // HNS stops answering mid-ADD: the intent stays for the audit, and this process (the same pid) lives on.
    await h.sim.control.failCall('HcnCreateEndpoint', HR.RPC_S_CALL_FAILED);
    // (No IPAM: HNS assigns the address, so the retry needs no DEL in between to free one.)
    expect(
      (await cni(h, { verb: 'ADD', conf: conf({ ipam: undefined }), containerId: 'pod-a', netns })).json,
    ).toMatchObject({ code: 11 });
    expect(recordFiles(h, 'intents')).toEqual(['pod-a@eth0.json']);
    const retry = await cni(h, { verb: 'ADD', conf: conf({ ipam: undefined }), containerId: 'pod-a', netns });
    expect(retry.exitCode).toBe(0);
  });
});

describe('two conflists with different state directories on one node', () => {
  it("one's audit leaves alone the endpoint the other's running ADD created and has not attached yet", async () => {
    const stateB = path.join(h.tmp, 'state-b');
    const netns = await newNamespace(h);
    // Conflist B's ADD creates its endpoint, then hangs in HNS on its way to the attach (opening the namespace: a
    // read, so HNS goes on serving everyone else meanwhile).
    const seen = (await h.sim.control.stats()).calls.HcnOpenNamespace ?? 0;
    await h.sim.control.hang('HcnOpenNamespace');
    const addB = cni(h, {
      verb: 'ADD',
      conf: conf({ stateDir: stateB, ipam: undefined }),
      containerId: 'pod-b',
      netns,
    });
    await until(async () => (((await h.sim.control.stats()).calls.HcnOpenNamespace ?? 0) > seen ? true : undefined));
    const created = (await h.sim.control.dump()).endpoints.find(
      (e) => e.Name === endpointName({ containerId: 'pod-b', ifname: 'eth0' }),
    )!;
    expect(created).toBeDefined();
    // Conflist A's ADD of another pod audits HNS meanwhile: B's endpoint is unattached and A knows nothing of it.
    const addA = await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-a', netns: await newNamespace(h) });
    expect(addA.exitCode).toBe(0);
    expect(await endpoints()).toContain(created.ID.toLowerCase());
    await h.sim.control.release('HcnOpenNamespace');
    expect((await addB).exitCode).toBe(0);
    expect(await endpoints()).toContain(created.ID.toLowerCase());
    // Committed: its claim is withdrawn from the node-wide register.
    expect(fs.readdirSync(path.join(h.tmp, 'claims')).filter((n) => n.endsWith('.json'))).toEqual([]);
  });
});

async function until<T>(probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition never came true');
}
