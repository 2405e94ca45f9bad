/**
 * src/hns/native.ts, the addon loader, in the places it can find the addon other than a single-executable build
 * (that one is dist/hcn-cni, tested in executable.test.ts):
 *  - a source checkout / npm install: <package root>/build/Release/hcn.node, loaded in place;
 *  - pkg's snapshot file system, simulated: a child process with `process.pkg` set, running the loader bundled
 *    into a directory under the package root (as pkg puts the package under /snapshot/<name>/). dlopen cannot
 *    read the snapshot, so the loader must copy the addon and the simulator library out, to a content-hashed
 *    directory, once.
 * Each case runs in its own child: the addon is loaded once per process.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { extractDirName, ROOT } from './helpers';

const RELEASE = path.join(ROOT, 'build', 'Release');
let work: string;
let loader: string;

beforeAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded synchronously on demand: start-up pays only for what is used
  const esbuild = require('esbuild') as typeof import('esbuild');
  fs.mkdirSync(path.join(ROOT, '.cache'), { recursive: true });
  work = fs.mkdtempSync(path.join(ROOT, '.cache', 'loader-test-'));
  loader = path.join(work, 'snapshot', 'hcn-cni', 'dist', 'hns', 'native.js');
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'src', 'hns', 'native.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile: loader,
    logLevel: 'error',
  });
});

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

const child = `
const [loader, extractDir, fakePkg] = process.argv.slice(1);
if (fakePkg === 'pkg') process.pkg = { entrypoint: loader, defaultEntrypoint: loader };
const { loadNative } = require(loader);
const t0 = process.hrtime.bigint();
const r = loadNative(extractDir === '-' ? {} : { extractDir });
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
process.stdout.write(JSON.stringify({ source: r.source, addonPath: r.addonPath, libraryPath: r.libraryPath, caps: r.capabilities, ms }));
`;

function load(
  extractDir: string,
  fakePkg: boolean,
): {
  source: string;
  addonPath: string;
  libraryPath: string;
  caps: { v2Supported: boolean; hcnLibrary: string };
  ms: number;
} {
  const r = spawnSync(process.execPath, ['-e', child, loader, extractDir, fakePkg ? 'pkg' : 'plain'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  return JSON.parse(r.stdout);
}

test('from a checkout: build/Release/hcn.node and libhcnsim.so beside it, loaded in place', () => {
  const r = load('-', false);
  expect(r).toMatchObject({
    source: 'package',
    addonPath: path.join(RELEASE, 'hcn.node'),
    libraryPath: path.join(RELEASE, 'libhcnsim.so'),
  });
  expect(r.caps).toMatchObject({ v2Supported: true, hcnLibrary: path.join(RELEASE, 'libhcnsim.so') });
});

test('under pkg (process.pkg set): copied out of the snapshot to a content-hashed directory, once', () => {
  const extractDir = path.join(work, 'extract');
  const dirName = extractDirName();
  const dir = path.join(extractDir, dirName);
  const first = load(extractDir, true);
  expect(first).toMatchObject({
    source: 'pkg',
    addonPath: path.join(dir, 'hcn.node'),
    libraryPath: path.join(dir, 'libhcnsim.so'),
  });
  expect(first.caps).toMatchObject({ v2Supported: true, hcnLibrary: path.join(dir, 'libhcnsim.so') });
  expect(fs.readFileSync(path.join(dir, 'hcn.node')).equals(fs.readFileSync(path.join(RELEASE, 'hcn.node')))).toBe(
    true,
  );
  const stamp = fs
    .readdirSync(dir)
    .map((f) => [f, fs.statSync(path.join(dir, f)).ino, fs.statSync(path.join(dir, f)).ctimeMs]);

  const second = load(extractDir, true);
  expect(second.addonPath).toBe(first.addonPath);
  expect(
    fs.readdirSync(dir).map((f) => [f, fs.statSync(path.join(dir, f)).ino, fs.statSync(path.join(dir, f)).ctimeMs]),
  ).toEqual(stamp);
});

test('a shared extract directory that is not private to this user is refused', () => {
  const extractDir = path.join(work, 'shared');
  const dirName = extractDirName();
  fs.mkdirSync(path.join(extractDir, dirName), { recursive: true });
  fs.chmodSync(path.join(extractDir, dirName), 0o777);
  const r = spawnSync(process.execPath, ['-e', child, loader, extractDir, 'pkg'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  expect(r.status).not.toBe(0);
  expect(r.stderr).toMatch(/refusing to load the embedded addon from .*writable only by it/);
});
