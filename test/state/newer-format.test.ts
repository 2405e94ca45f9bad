/**
 * State format versions: a record of a newer hcn-cni (a higher "schema") met by this version — during a rolling
 * upgrade or a rollback — is not quarantined, rewritten or acted on. The pod's DEL says so (error 5, naming the file)
 * and changes nothing; a GC with no attachment valid leaves the pod's endpoint and the file alone.
 */
import * as fs from 'fs';
import * as path from 'path';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { V2Api } from '../../src/hns/api';
import { newNamespace } from '../plugin/support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

it('an older version meeting a newer record says so and changes nothing', async () => {
  const conf = bridgeConf();
  const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-new', netns: await newNamespace(h) });
  expect(add.exitCode).toBe(0);
  const file = path.join(h.stateDir, 'attachments', 'pod-new@eth0.json');
  const rec = JSON.parse(fs.readFileSync(file, 'utf8'));
  expect(rec.schema).toBe(1);
  const newer = JSON.stringify({ ...rec, schema: 2, aFieldOfTheFuture: { x: 1 } });
  fs.writeFileSync(file, newer);
  const endpoints = async () => (await h.sim.control.dump()).endpoints.map((e) => e.ID);
  const before = await endpoints();
  expect(before).toHaveLength(1);

  const del = await cni(h, { verb: 'DEL', conf, containerId: 'pod-new' });
  expect(del.exitCode).not.toBe(0);
  expect(del.json).toMatchObject({
    code: 5,
    msg: expect.stringMatching(
      /pod-new@eth0\.json: written by a newer hcn-cni \(record schema 2; this version reads 1\): left as it is/,
    ),
  });
  const gc = await cni(h, { verb: 'GC', conf: { ...conf, cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] } });
  expect(gc.exitCode).toBe(0);

  expect(await endpoints()).toEqual(before);
  expect(fs.readFileSync(file, 'utf8')).toBe(newer);
  const quarantine = path.join(h.stateDir, 'quarantine');
  expect(fs.existsSync(quarantine) ? fs.readdirSync(quarantine) : []).toEqual([]);
  expect(fs.readdirSync(path.join(h.stateDir, 'tombstones'))).toEqual([]);
});

/** An ADD of `containerId` through the harness, then its attachment record turned into what a newer version's running
 * ADD leaves: no record, and its intent (or node-wide claim) in a newer schema naming the endpoint it created. */
async function newerAddRunning(containerId: string): Promise<{ conf: Record<string, unknown>; endpoint: string }> {
  const conf = bridgeConf();
  const netns = await newNamespace(h);
  const add = await cni(h, { verb: 'ADD', conf, containerId, netns });
  expect(add.exitCode).toBe(0);
  const file = path.join(h.stateDir, 'attachments', `${containerId}@eth0.json`);
  const rec = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.rmSync(file);
  // Created, not attached yet: nothing but the running ADD's claim keeps it from being an orphan.
  expect(await new V2Api(h.deps.hns.hcn({ hnsTimeoutSeconds: 30 })).detachNamespace(rec.endpoint.id, netns)).toBe(
    'deleted',
  );
  return { conf, endpoint: rec.endpoint.id as string };
}

function newerIntent(containerId: string, endpoint: string): Record<string, unknown> {
  return {
    kind: 'intent',
    schema: 2,
    containerId,
    ifname: 'eth0',
    id: 'intent-of-the-future',
    planned: [{ kind: 'endpoint', name: 'whatever the newer version names it', id: endpoint }],
    pid: process.pid,
    pidStartTime: null,
    createdAt: Date.now(),
    deadline: Date.now() + 600_000,
    aFieldOfTheFuture: true,
  };
}

it("a newer version's running ADD (its intent in a newer schema) keeps its objects through an older audit", async () => {
  const { conf, endpoint } = await newerAddRunning('pod-adding');
  const intent = path.join(h.stateDir, 'intents', 'pod-adding@eth0.json');
  const text = JSON.stringify(newerIntent('pod-adding', endpoint));
  fs.writeFileSync(intent, text);

  const gc = await cni(h, { verb: 'GC', conf: { ...conf, cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] } });
  expect(gc.stdout).toBe('');
  expect(gc.exitCode).toBe(0);
  expect((await h.sim.control.dump()).endpoints.map((e) => e.ID)).toEqual([endpoint]);
  expect(fs.readFileSync(intent, 'utf8')).toBe(text);
});

it("a newer version's node-wide claim (another state directory) keeps its objects through an older audit", async () => {
  const { conf, endpoint } = await newerAddRunning('pod-claimed');
  const claims = path.join(h.tmp, 'claims');
  fs.mkdirSync(claims, { recursive: true });
  const claim = path.join(claims, 'pod-claimed@eth0#intent-of-the-future.json');
  const text = JSON.stringify({
    stateDir: path.join(h.tmp, 'another-state'),
    intent: newerIntent('pod-claimed', endpoint),
  });
  fs.writeFileSync(claim, text);

  const gc = await cni(h, { verb: 'GC', conf: { ...conf, cniVersion: '1.1.0', 'cni.dev/valid-attachments': [] } });
  expect(gc.exitCode).toBe(0);
  expect((await h.sim.control.dump()).endpoints.map((e) => e.ID)).toEqual([endpoint]);
  expect(fs.readFileSync(claim, 'utf8')).toBe(text);
});

it('an ADD or CHECK of a pod whose record is newer says so in one error and changes nothing', async () => {
  const conf = bridgeConf();
  const netns = await newNamespace(h);
  const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-again', netns });
  const file = path.join(h.stateDir, 'attachments', 'pod-again@eth0.json');
  const newer = JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), schema: 2 });
  fs.writeFileSync(file, newer);
  const before = await h.sim.control.dump();
  for (const verb of ['ADD', 'CHECK'] as const) {
    const out = await cni(h, {
      verb,
      conf: verb === 'CHECK' ? { ...conf, prevResult: add.json } : conf,
      containerId: 'pod-again',
      netns,
    });
    expect({ verb, code: out.exitCode === 0 ? 0 : out.json?.code }).toEqual({ verb, code: 5 });
    expect(out.json?.msg).toMatch(/written by a newer hcn-cni \(record schema 2; this version reads 1\)/);
  }
  expect(await h.sim.control.dump()).toEqual(before);
  expect(fs.readFileSync(file, 'utf8')).toBe(newer);
});

it("an older ADD of a pod whose newer version's intent is there says so (error 5) and never overwrites that intent", async () => {
  const conf = bridgeConf();
  const dir = path.join(h.stateDir, 'intents');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'pod-racing@eth0.json');
  const text = JSON.stringify(newerIntent('pod-racing', 'an-endpoint-the-newer-add-creates'));
  fs.writeFileSync(file, text);
  const before = await h.sim.control.dump();
  const add = await cni(h, { verb: 'ADD', conf, containerId: 'pod-racing', netns: await newNamespace(h) });
  expect(add.exitCode).not.toBe(0);
  expect(add.json).toMatchObject({
    code: 5,
    msg: expect.stringMatching(/pod-racing@eth0\.json: written by a newer hcn-cni/),
  });
  expect(fs.readFileSync(file, 'utf8')).toBe(text);
  expect((await h.sim.control.dump()).endpoints).toEqual(before.endpoints);
});

it("an older DEL of a pod whose newer version's tombstone is there says so (error 5) and never rewrites that tombstone", async () => {
  const conf = bridgeConf();
  const dir = path.join(h.stateDir, 'tombstones');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'pod-gone@eth0.json');
  const text = JSON.stringify({
    kind: 'tombstone',
    schema: 2,
    containerId: 'pod-gone',
    ifname: 'eth0',
    createdAt: Date.now(),
    reason: 'DEL of a newer version',
    planned: [],
    ipamPending: true,
    aFieldOfTheFuture: true,
  });
  fs.writeFileSync(file, text);
  const del = await cni(h, { verb: 'DEL', conf, containerId: 'pod-gone' });
  expect(del.exitCode).not.toBe(0);
  expect(del.json).toMatchObject({
    code: 5,
    msg: expect.stringMatching(/pod-gone@eth0\.json: written by a newer hcn-cni/),
  });
  expect(fs.readFileSync(file, 'utf8')).toBe(text);
});
