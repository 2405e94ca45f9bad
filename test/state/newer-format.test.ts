/**
 * State format versions: a record of a newer hcn-cni (a higher "schema") met by this version — during a rolling
 * upgrade or a rollback — is not quarantined, rewritten or acted on. The pod's DEL says so (error 5, naming the file)
 * and changes nothing; a GC with no attachment valid leaves the pod's endpoint and the file alone.
 */
import * as fs from 'fs';
import * as path from 'path';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
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
