/**
 * The retired-pods note (src/service/hand-over/retired-pods.ts): only the pod whose own service handed the address over is kept
 * from taking it back, and a pod UID is a file name only when it is a plain name — never a path out of the directory.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { forgetRetired, isRetired, noteRetired } from '../../src/service/hand-over/retired-pods';

let tmp: string;
let dir: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-retired-'));
  dir = path.join(tmp, 'run', 'retired-pods');
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

it("only the pod whose own service handed over is noted: a service of any other pod is not held back by other pods' notes", () => {
  const handedOver = '0b6c7a3e-1f2d-4c5e-8f90-123456789abc';
  expect(noteRetired(dir, handedOver)).toBeUndefined();
  expect(noteRetired(dir, 'an-earlier-update-pod')).toBeUndefined();
  expect(isRetired(dir, handedOver)).toBe(true);
  expect(isRetired(dir, 'd4e5f6a7-0000-4000-8000-000000000001')).toBe(false);
  forgetRetired(dir, handedOver);
  expect(isRetired(dir, handedOver)).toBe(false);
  expect(isRetired(dir, 'an-earlier-update-pod')).toBe(true);
});

it('a pod UID with a path separator or ".." is never noted, looked up or removed (no file outside the directory)', () => {
  // A file outside the directory that such a UID would name.
  fs.mkdirSync(dir, { recursive: true });
  const outside = path.join(tmp, 'run', 'escaped');
  fs.writeFileSync(outside, 'keep');
  for (const uid of ['../escaped', 'x/../../escaped', '..', '.', `x${path.sep}y`, '', '-starts-with-a-dash']) {
    expect([uid, noteRetired(dir, uid)]).toEqual([uid, expect.stringMatching(/is not a file name/)]);
    expect([uid, isRetired(dir, uid)]).toEqual([uid, false]);
    forgetRetired(dir, uid);
  }
  expect(fs.readFileSync(outside, 'utf8')).toBe('keep');
  expect(fs.readdirSync(dir)).toEqual([]);
});
