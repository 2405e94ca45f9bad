/**
 * Housekeeping never fails a verb (src/state/housekeeping.ts): a state directory whose files cannot be removed makes
 * every verb answer as it would on a healthy disk, and what could not be removed is noted (and logged) for later.
 * Failing disks need privileges CI may not have, so `fs` is mocked for this file only: removals (unlink, rm) — and,
 * for an immutable file, renames — of chosen paths fail with EPERM; everything else is the real fs.
 */
const failing = {
  remove: undefined as undefined | ((p: string) => boolean),
  rename: undefined as undefined | ((p: string) => boolean),
};
const eperm = (what: string, p: unknown) =>
  Object.assign(new Error(`EPERM: operation not permitted, ${what} '${String(p)}'`), { code: 'EPERM' });
jest.mock('fs', () => {
  const real = jest.requireActual<typeof import('fs')>('fs');
  return {
    ...real,
    unlinkSync: (p: import('fs').PathLike) => {
      if (failing.remove?.(String(p))) throw eperm('unlink', p);
      return real.unlinkSync(p);
    },
    rmSync: (p: import('fs').PathLike, o?: import('fs').RmOptions) => {
      if (failing.remove?.(String(p))) throw eperm('rm', p);
      return real.rmSync(p, o);
    },
    renameSync: (a: import('fs').PathLike, b: import('fs').PathLike) => {
      if (failing.rename?.(String(a))) throw eperm('rename', a);
      return real.renameSync(a, b);
    },
  };
});

import * as fs from 'fs';
import * as path from 'path';
import type { HnsApi } from '../../src/hns/api';
import { runOps } from '../../src/cli/operator';
import { silentLogger } from '../../src/log/logger';
import { audit } from '../../src/orphans/audit';
import { MAX_FAILED_CHORES_PER_ROUND } from '../../src/state/housekeeping';
import { pluginDeps } from '../../src/plugin/deps';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, newNamespace, recordFiles } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
afterEach(() => {
  failing.remove = undefined;
  failing.rename = undefined;
});

let clock = 0;
/** A runtime on an injected clock (tombstones age past their grace without waiting). */
function clocked(): void {
  clock = 1_800_000_000_000;
  h.deps = pluginDeps({ pid: process.pid, claimsDir: path.join(h.tmp, 'claims'), now: () => clock });
}

const conf = (extra: Record<string, unknown> = {}) =>
  bridgeConf({ cniVersion: '1.1.0', ipam: hostLocal(h), auditIntervalSeconds: 0, ...extra });
const valid = (...ids: string[]) => ids.map((id) => ({ containerID: id, ifname: 'eth0' }));
const underState = (p: string) => p.startsWith(h.stateDir + path.sep) || p.startsWith(path.join(h.tmp, 'claims'));

/** A node's life: ADDs, DELs (one refused by HNS, one of a pod never added), CHECK, an aged tombstone, GC, STATUS. */
async function life(): Promise<Record<string, unknown>> {
  const answers: Array<[string, number, unknown]> = [];
  const run = async (verb: 'ADD' | 'DEL' | 'CHECK' | 'GC' | 'STATUS', id: string, c = conf(), netns?: string) => {
    const r = await cni(h, { verb, conf: c, containerId: id, ...(netns ? { netns } : {}) });
    answers.push([`${verb} ${id}`, r.exitCode, r.json ? ((r.json.ips as unknown) ?? r.json.code) : undefined]);
    return r;
  };
  const ns = { a: await newNamespace(h), b: await newNamespace(h), c: await newNamespace(h) };
  await run('ADD', 'pod-a', conf(), ns.a);
  await run('ADD', 'pod-b', conf(), ns.b);
  await run('DEL', 'pod-never-added');
  await run('CHECK', 'pod-a', { ...conf(), prevResult: (await run('ADD', 'pod-a', conf(), ns.a)).json }, ns.a);
  await run('DEL', 'pod-a', conf(), ns.a);
  await h.sim.control.failCall('HcnDeleteEndpoint', 0x80070005); // E_ACCESSDENIED: DEL keeps pod-b's IP
  await run('DEL', 'pod-b', conf(), ns.b);
  clock += 3_600_000; // every tombstone is past its grace
  await run('ADD', 'pod-c', conf(), ns.c); // the whole-node audit: removes pod-b's endpoint, releases its IP, tidies
  await run('GC', 'gc', { ...conf(), 'cni.dev/valid-attachments': valid('pod-c') });
  await run('STATUS', 'status');
  const dump = await h.sim.control.dump();
  return {
    answers,
    attachments: recordFiles(h, 'attachments').filter((f) => f.endsWith('.json')),
    intents: recordFiles(h, 'intents').filter((f) => f.endsWith('.json')),
    tombstones: recordFiles(h, 'tombstones').filter((f) => f.endsWith('.json')),
    ips: Object.values(heldIps(h, 'cbr0')),
    endpoints: dump.endpoints.map((e) => e.Name),
  };
}

it('every removal in the state directory failing: every verb answers as on a healthy disk; the failures are noted', async () => {
  clocked();
  const healthy = await life();
  expect((healthy.answers as unknown[][]).filter(([, exit]) => exit !== 0)).toEqual([]);
  expect(h.deps.stores.store({ stateDir: h.stateDir }, silentLogger).housekeeping()).toEqual([]);

  await h.reset();
  clocked();
  failing.remove = underState;
  const failingDisk = await life();
  expect(failingDisk).toEqual(healthy);
  // What could not be deleted was set aside (readers skip it) and noted, for the audits to retry.
  const noted = h.deps.stores.store({ stateDir: h.stateDir }, silentLogger).housekeeping();
  expect(noted.length).toBeGreaterThan(0);
  for (const c of noted) {
    expect(c).toMatchObject({ error: expect.stringMatching(/operation not permitted/), deleteFile: true });
    expect(fs.existsSync(c.file)).toBe(true);
  }

  // The disk heals: the next whole-node audit (an ADD's) deletes them, and the note is gone.
  failing.remove = undefined;
  expect(
    (await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-d', netns: await newNamespace(h) })).exitCode,
  ).toBe(0);
  expect(h.deps.stores.store({ stateDir: h.stateDir }, silentLogger).housekeeping()).toEqual([]);
  expect(noted.filter((c) => fs.existsSync(c.file))).toEqual([]);
});

it('an old tombstone that can be neither deleted nor moved fails no ADD, GC or audit; it is noted and retried', async () => {
  clocked();
  const c = conf({ auditIntervalSeconds: 60 });
  expect((await cni(h, { verb: 'DEL', conf: c, containerId: 'gone1' })).exitCode).toBe(0);
  const tomb = path.join(h.stateDir, 'tombstones', 'gone1@eth0.json');
  expect(fs.existsSync(tomb)).toBe(true);
  clock += 3_600_000;
  fs.rmSync(path.join(h.stateDir, 'audited'), { force: true }); // the whole-node audit is due
  failing.remove = (p) => p === tomb;
  failing.rename = (p) => p === tomb;

  for (const pod of ['p2', 'p3']) {
    const r = await cni(h, { verb: 'ADD', conf: c, containerId: pod, netns: await newNamespace(h) });
    expect({ pod, exit: r.exitCode, code: r.json?.code }).toEqual({ pod, exit: 0, code: undefined });
  }
  // The audit stamped itself done: the next ADDs are not due again because of the file.
  expect(fs.existsSync(path.join(h.stateDir, 'audited'))).toBe(true);
  expect((await cni(h, { verb: 'GC', conf: { ...c, 'cni.dev/valid-attachments': valid('p2', 'p3') } })).exitCode).toBe(
    0,
  );
  const store = h.deps.stores.store({ stateDir: h.stateDir }, silentLogger);
  expect(store.housekeeping()).toEqual([
    expect.objectContaining({
      what: 'removing the tombstone of gone1@eth0',
      file: tomb,
      error: expect.stringMatching(/operation not permitted/),
      failures: 2, // the first ADD's audit, then GC's (the second ADD's was not due)
    }),
  ]);

  // The operator's commands: the audit succeeds (on the real clock, years behind this test's: the tombstone is not
  // past its grace there, so it is not tried), and `hcn-cni state` shows what is overdue.
  let out = '';
  const io = { env: {}, load: {}, out: (t: string) => void (out += t), err: (t: string) => void (out += t) };
  expect(await runOps(['audit', '--state-dir', h.stateDir], io)).toBe(0);
  out = '';
  expect(await runOps(['state', '--state-dir', h.stateDir], io)).toBe(0);
  expect(out).toMatch(/housekeeping overdue \(1\):[\s\S]*removing the tombstone of gone1@eth0 .*gone1@eth0\.json +2 /);

  // Fixed: the next audit removes it and forgets the note.
  failing.remove = failing.rename = undefined;
  expect((await cni(h, { verb: 'GC', conf: { ...c, 'cni.dev/valid-attachments': valid('p2', 'p3') } })).exitCode).toBe(
    0,
  );
  expect(fs.existsSync(tomb)).toBe(false);
  expect(store.housekeeping()).toEqual([]);
});

it("an audit's housekeeping is bounded: after a few failures the rest waits for the next audit, old failures last", async () => {
  clocked();
  const store = h.deps.stores.store({ stateDir: h.stateDir }, silentLogger);
  const owners = ['bad1', 'bad2', 'bad3', 'bad4', 'bad5', 'good'].map((id) => ({ containerId: id, ifname: 'eth0' }));
  for (const o of owners) await store.tombstone(o, 'DEL');
  const file = (id: string) => path.join(h.stateDir, 'tombstones', `${id}@eth0.json`);
  failing.remove = failing.rename = (p) => /bad\d@eth0\.json$/.test(p);
  clock += 3_600_000;
  const auditNow = () =>
    audit({
      api: { listNetworks: async () => [], listEndpoints: async () => [] } as unknown as HnsApi,
      store,
      os: h.deps.hns.os(),
      log: silentLogger,
      now: () => clock,
      graceMs: 60_000,
    });
  const first = await auditNow();
  expect(first.housekeeping).toEqual({ done: 0, failed: MAX_FAILED_CHORES_PER_ROUND, deferred: 3 });
  expect(fs.existsSync(file('good'))).toBe(true);
  // The next audit tries what it left first (the healthy one is removed), and what failed before last.
  const second = await auditNow();
  expect(second.housekeeping).toEqual({ done: 1, failed: MAX_FAILED_CHORES_PER_ROUND, deferred: 2 });
  expect(fs.existsSync(file('good'))).toBe(false);
  expect(store.housekeeping().map((c) => [path.basename(c.file), c.failures])).toEqual([
    ['bad2@eth0.json', 1],
    ['bad3@eth0.json', 1],
    ['bad4@eth0.json', 1],
    ['bad5@eth0.json', 1],
    ['bad1@eth0.json', 2],
  ]);
  expect(store.housekeeping()).toHaveLength(5);
});

it("the audit's retry of noted chores never deletes a record file, whatever a (stale or hand-edited) note says", async () => {
  const ns = await newNamespace(h);
  expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-kept', netns: ns })).exitCode).toBe(0);
  // A DEL whose endpoint HNS refused to delete: its tombstone keeps the IP.
  const nsGone = await newNamespace(h);
  expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-gone', netns: nsGone })).exitCode).toBe(0);
  await h.sim.control.failCall('HcnDeleteEndpoint', 0x80070005);
  await cni(h, { verb: 'DEL', conf: conf(), containerId: 'pod-gone', netns: nsGone });
  const record = path.join(h.stateDir, 'attachments', 'pod-kept@eth0.json');
  const tombstone = path.join(h.stateDir, 'tombstones', 'pod-gone@eth0.json');
  expect(fs.existsSync(tombstone)).toBe(true);
  const note = [record, tombstone].map((file) => ({
    what: 'deleting a file set aside',
    file,
    error: 'EPERM',
    deleteFile: true,
    failures: 1,
    firstAt: 1,
    lastAt: 1,
  }));
  fs.writeFileSync(path.join(h.stateDir, 'housekeeping.json'), JSON.stringify(note));
  const endpoint = JSON.parse(fs.readFileSync(record, 'utf8')).endpoint.id as string;
  // Two whole-node audits (an ADD each): the first retries the noted chores, the second would remove what lost its
  // record.
  for (const pod of ['pod-x', 'pod-y'])
    expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: pod, netns: await newNamespace(h) })).exitCode).toBe(
      0,
    );
  expect(fs.existsSync(record)).toBe(true);
  expect(fs.existsSync(tombstone)).toBe(true);
  expect((await h.sim.control.dump()).endpoints.map((e) => e.ID.toLowerCase())).toContain(endpoint.toLowerCase());
});
