/**
 * The jest globalSetup (test/helpers/global-setup.js) rebuilds dist/ when it is stale (scripts/fresh-dist.js), so
 * `npx jest FILE` after an edit runs the edit in the tests that start the plugin as a process. Its staleness rule, on
 * a scratch tree.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/* eslint-disable @typescript-eslint/no-require-imports -- plain CommonJS modules (jest's setup, a script) */
const { distState } = require('../../scripts/fresh-dist') as {
  distState(root: string): { reason?: string; orphans: string[]; stamp: string };
};
const { nativeState } = require('../helpers/global-setup') as { nativeState(root: string): string | undefined };
/* eslint-enable @typescript-eslint/no-require-imports */

let root: string;
const write = (rel: string, text = '', mtimeSec?: number) => {
  const f = path.join(root, rel);
  fs.mkdirSync(path.dirname(f), { recursive: true });
  fs.writeFileSync(f, text);
  if (mtimeSec !== undefined) fs.utimesSync(f, mtimeSec, mtimeSec);
};

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-fresh-dist-'));
  for (const f of ['tsconfig.json', 'tsconfig.build.json', 'src/index.ts', 'src/cni/a.ts']) write(f, '', 1000);
  for (const f of ['dist/index.js', 'dist/cni/a.js', 'dist/cni/a.d.ts', 'dist/hcn-cni.bundle.js']) write(f, '', 1000);
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

it('is stale until a build stamped it, and current after', () => {
  expect(distState(root).reason).toMatch(/never built/);
  write('dist/.build-stamp', '', 2000);
  expect(distState(root)).toMatchObject({ reason: undefined, orphans: [] });
});

it('is stale when a source or a tsconfig is newer than the stamp', () => {
  write('dist/.build-stamp', '', 2000);
  write('src/cni/a.ts', 'edited', 3000);
  expect(distState(root).reason).toBe(`${path.join('src', 'cni', 'a.ts')} changed`);
  write('dist/.build-stamp', '', 4000);
  write('tsconfig.build.json', '{}', 5000);
  expect(distState(root).reason).toBe('tsconfig.build.json changed');
});

it('is stale when a compiled module has lost its source (a rename), and lists it; the packager files are not modules', () => {
  write('dist/.build-stamp', '', 2000);
  fs.rmSync(path.join(root, 'src/cni/a.ts'));
  const s = distState(root);
  expect(s.reason).toBe(`${path.join('dist', 'cni', 'a.d.ts')} has no source`);
  expect(s.orphans.map((f) => path.relative(root, f)).sort()).toEqual([
    path.join('dist', 'cni', 'a.d.ts'),
    path.join('dist', 'cni', 'a.js'),
  ]);
});

it('says when the native build is older than a file under native/, and nothing when it is newer or absent', () => {
  expect(nativeState(root)).toBeUndefined();
  write('native/addon/a.cc', '', 1000);
  write('binding.gyp', '', 1000);
  write('build/Release/hcn.node', '', 2000);
  write('build/Release/libhcnsim.so', '', 2000);
  expect(nativeState(root)).toBeUndefined();
  write('native/addon/a.cc', 'edited', 3000);
  expect(nativeState(root)).toBe(
    `${path.join('build', 'Release', 'hcn.node')} is older than ${path.join('native', 'addon', 'a.cc')}`,
  );
});
