/**
 * The attachment record's file is written, and fsynced, while HNS attaches the endpoint (src/plugin/endpoint.ts,
 * StateStore.prepareAttachment): the slow half of the commit overlaps the attach instead of following it. Until the
 * commit it is only a temp file, which no reader counts; an ADD whose attach fails leaves none behind.
 */
import * as fs from 'fs';
import * as path from 'path';
import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace, recordFiles, until } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

const conf = bridgeConf({ cniVersion: '1.1.0' });
const attachCalls = async () => (await h.sim.control.stats()).calls.HcnModifyNamespace ?? 0;
const read = (name: string) => JSON.parse(fs.readFileSync(path.join(h.stateDir, 'attachments', name), 'utf8'));

it('while HNS attaches, the record is already written as a temp file; the commit renames exactly that into place', async () => {
  const netns = await newNamespace(h);
  const seen = await attachCalls();
  await h.sim.control.hang('HcnModifyNamespace');
  const adding = cni(h, { verb: 'ADD', conf, containerId: 'pod-a', netns });
  await until(async () => ((await attachCalls()) > seen ? true : undefined), 10_000, 'the attach');
  const files = recordFiles(h, 'attachments');
  expect(files).toEqual([expect.stringMatching(/^\.pod-a@eth0\.json\..+\.tmp$/)]);
  const early = read(files[0]!);
  expect(early).toMatchObject({ kind: 'attachment', containerId: 'pod-a', ifname: 'eth0', mode: 'bridge' });
  // Not a record yet: a second ADD of the pod meanwhile is a concurrent ADD (its intent is live), not a repeat.
  expect(recordFiles(h, 'intents')).toEqual(['pod-a@eth0.json']);
  await h.sim.control.release('HcnModifyNamespace');
  expect((await adding).exitCode).toBe(0);
  expect(recordFiles(h, 'attachments')).toEqual(['pod-a@eth0.json']);
  expect(read('pod-a@eth0.json')).toEqual(early);
  expect(recordFiles(h, 'intents')).toEqual([]);
});

it('an attach HNS refuses leaves neither a record nor its temp file', async () => {
  const netns = await newNamespace(h);
  await h.sim.control.failCall('HcnModifyNamespace', 0x80070005); // E_ACCESSDENIED
  const out = await cni(h, { verb: 'ADD', conf, containerId: 'pod-b', netns });
  expect(out.exitCode).not.toBe(0);
  expect(recordFiles(h, 'attachments')).toEqual([]);
});

it('a directory made where the prepared record goes, while HNS attaches, is moved to quarantine; the record is put in place', async () => {
  const netns = await newNamespace(h);
  const seen = await attachCalls();
  await h.sim.control.hang('HcnModifyNamespace');
  const adding = cni(h, { verb: 'ADD', conf, containerId: 'pod-c', netns });
  await until(async () => ((await attachCalls()) > seen ? true : undefined), 10_000, 'the attach');
  // After the ADD's reads (which would have moved it aside), before its commit renames the record over it.
  const inTheWay = path.join(h.stateDir, 'attachments', 'pod-c@eth0.json');
  fs.mkdirSync(inTheWay);
  fs.writeFileSync(path.join(inTheWay, 'inside'), 'x');
  await h.sim.control.release('HcnModifyNamespace');
  expect((await adding).exitCode).toBe(0);
  expect(read('pod-c@eth0.json')).toMatchObject({ kind: 'attachment', containerId: 'pod-c' });
  expect(recordFiles(h, 'quarantine')).toEqual(
    expect.arrayContaining([expect.stringMatching(/^attachment--pod-c@eth0\.json\.\d+$/)]),
  );
});
