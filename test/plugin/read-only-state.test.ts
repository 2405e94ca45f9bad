/**
 * A DEL on a read-only state file system that has removed the HNS objects and released the IP must
 * still say what it did. A read-only mount needs privileges CI may not have, so `fs.unlinkSync` fails with EROFS for
 * the attachment records instead (the module is mocked for this file only; everything else is the real fs).
 */
import * as path from 'path';

const failing = {
  unlink: undefined as undefined | ((p: string) => boolean),
  open: undefined as undefined | ((p: string) => boolean),
};
jest.mock('fs', () => {
  const real = jest.requireActual<typeof import('fs')>('fs');
  return {
    ...real,
    openSync: (p: import('fs').PathLike, ...rest: unknown[]) => {
      if (failing.open?.(String(p)))
        throw Object.assign(new Error(`EROFS: read-only file system, open '${String(p)}'`), { code: 'EROFS' });
      return (real.openSync as (...a: unknown[]) => number)(p, ...rest);
    },
    unlinkSync: (p: import('fs').PathLike) => {
      if (failing.unlink?.(String(p)))
        throw Object.assign(new Error(`EROFS: read-only file system, unlink '${String(p)}'`), { code: 'EROFS' });
      return real.unlinkSync(p);
    },
  };
});

import { bridgeConf, cni, useHarness, type Harness } from '../helpers/cni-harness';
import { heldIps, hostLocal, newNamespace, recordFiles } from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));

const conf = () => bridgeConf({ cniVersion: '1.1.0', ipam: hostLocal(h) });

it('DEL whose record cannot be removed says it deleted the endpoint and released the IP (code 5, naming the file)', async () => {
  const netns = await newNamespace(h);
  expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-a', netns })).exitCode).toBe(0);
  const endpoint = (await h.sim.control.dump()).endpoints[0]!.ID.toLowerCase();
  failing.unlink = (p) => p.includes(`${path.sep}attachments${path.sep}`);
  try {
    const del = await cni(h, { verb: 'DEL', conf: conf(), containerId: 'pod-a', netns });
    expect(del.json).toMatchObject({
      code: 5,
      msg: expect.stringMatching(
        new RegExp(
          `^DEL deleted endpoint ${endpoint} and released its IP, but .*attachments/pod-a@eth0\\.json: the file system is read-only`,
          'i',
        ),
      ),
    });
  } finally {
    failing.unlink = undefined;
  }
  expect((await h.sim.control.dump()).endpoints).toEqual([]);
  expect(heldIps(h, 'cbr0')).toEqual({});
  // The runtime retries the DEL once the file system is writable again: it finishes cleanly.
  expect((await cni(h, { verb: 'DEL', conf: conf(), containerId: 'pod-a', netns })).exitCode).toBe(0);
  expect(recordFiles(h, 'attachments')).toEqual([]);
});

it('ADD on a read-only state directory: 5 naming the file and saying the file system is read-only, nothing created', async () => {
  const netns = await newNamespace(h);
  // The directories exist already (a node that worked before its state volume went read-only).
  expect((await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-a', netns })).exitCode).toBe(0);
  failing.open = (p) => p.startsWith(h.stateDir) && /\.tmp$/.test(p);
  try {
    const add = await cni(h, { verb: 'ADD', conf: conf(), containerId: 'pod-b', netns: await newNamespace(h) });
    expect(add.json).toMatchObject({
      code: 5,
      msg: expect.stringMatching(/intents\/pod-b@eth0\.json: the file system is read-only/),
    });
    expect(String(add.json!.details ?? '')).not.toMatch(/\n\s+at /);
  } finally {
    failing.open = undefined;
  }
  expect((await h.sim.control.dump()).endpoints).toHaveLength(1);
  expect(Object.values(heldIps(h, 'cbr0'))).toEqual(['pod-a']);
});
