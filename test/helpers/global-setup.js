// @ts-check
/**
 * Jest's globalSetup: every way of running the tests (npm test, `npx jest FILE`, an editor's runner) runs the current
 * source. In-process tests load src/ through ts-jest; tests that start the plugin as a process run dist/ (the CLI,
 * the crash hook of test builds, fixtures that require dist modules). So before any test, dist/ is rebuilt with tsc
 * when a source is newer than the last build, and compiled files whose source is gone (a rename) are removed, so
 * dist/ cannot answer for a module that no longer exists. An up-to-date tree costs one walk of src/ (a few ms); a
 * rebuild costs what `npm run build:ts` costs. The packaged executables have their own staleness check
 * (scripts/package.js --if-stale, called by the suites that run them).
 *
 * The native build (build/Release: the addon and the simulator client) is not rebuilt here — a node-gyp rebuild takes
 * minutes and needs the toolchain — but a build older than a file under native/ (or binding.gyp) is said, loudly:
 * tests would otherwise run yesterday's addon against today's sources and fail, or pass, for the wrong reason.
 */
'use strict';

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const ROOT = path.join(__dirname, '..', '..');

/** @param {string} dir @param {(f: string) => boolean} keep @returns {string[]} */
function walk(dir, keep) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? walk(p, keep) : keep(p) ? [p] : [];
  });
}

/** @param {string} f */
const mtime = (f) => (fs.existsSync(f) ? fs.statSync(f).mtimeMs : 0);

/**
 * Why dist/ under `root` must be rebuilt (undefined when it is current), and the compiled files without a source.
 * @param {string} root
 */
function distState(root) {
  const src = path.join(root, 'src');
  const dist = path.join(root, 'dist');
  const stamp = path.join(dist, '.build-stamp');
  const built = mtime(stamp);
  const inputs = [
    ...walk(src, (f) => f.endsWith('.ts')),
    path.join(root, 'tsconfig.json'),
    path.join(root, 'tsconfig.build.json'),
  ];
  const newer = inputs.find((f) => mtime(f) > built);
  // tsc's outputs live in dist/<area>/…, beside the packager's files in dist/ itself (and in dist/index.js, run.js).
  const orphans = walk(dist, (f) => /\.(js|d\.ts|js\.map)$/.test(f)).filter((f) => {
    const rel = path.relative(dist, f);
    if (!rel.includes(path.sep) && !['index', 'run'].includes(rel.replace(/\.(js|d\.ts|js\.map)$/, ''))) return false;
    return !fs.existsSync(path.join(src, rel.replace(/\.(js|d\.ts|js\.map)$/, '.ts')));
  });
  const reason = !built
    ? 'dist/ was never built by this check'
    : newer
      ? `${path.relative(root, newer)} changed`
      : orphans.length
        ? `${path.relative(root, orphans[0])} has no source`
        : undefined;
  return { reason, orphans, stamp };
}

/** @param {string} [root] */
function ensureDist(root = ROOT) {
  const { reason, orphans, stamp } = distState(root);
  if (!reason) return { rebuilt: false };
  for (const f of orphans) fs.rmSync(f, { force: true });
  const started = Date.now();
  const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], {
    cwd: root,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`dist/ is stale (${reason}) and tsc failed:\n${r.stdout}${r.stderr}`);
  // The stamp carries the build's start time: a source saved while tsc ran is newer, and rebuilt next time.
  fs.mkdirSync(path.dirname(stamp), { recursive: true });
  fs.writeFileSync(stamp, `${reason}\n`);
  fs.utimesSync(stamp, started / 1000, started / 1000);
  return { rebuilt: true, reason, ms: Date.now() - started };
}

/**
 * Why the native build under `root` is older than its sources (undefined when it is not, or was never built: then
 * the tests that need it say so themselves).
 * @param {string} root
 */
function nativeState(root) {
  const release = path.join(root, 'build', 'Release');
  const outputs = ['hcn.node', 'libhcnsim.so'].map((f) => path.join(release, f)).filter((f) => fs.existsSync(f));
  if (outputs.length === 0) return undefined;
  const oldest = outputs.reduce((a, b) => (mtime(a) <= mtime(b) ? a : b));
  const inputs = [...walk(path.join(root, 'native'), () => true), path.join(root, 'binding.gyp')];
  const newer = inputs.find((f) => mtime(f) > mtime(oldest));
  return newer && `${path.relative(root, oldest)} is older than ${path.relative(root, newer)}`;
}

module.exports = async function globalSetup() {
  const stale = nativeState(ROOT);
  if (stale)
    process.stderr.write(
      `\n[global-setup] STALE NATIVE BUILD: ${stale}; the tests run the old addon. Run \`npx node-gyp rebuild\`.\n`,
    );
  const r = ensureDist();
  if (r.rebuilt)
    process.stderr.write(`\n[global-setup] rebuilt dist/ (${r.reason}) in ${((r.ms ?? 0) / 1000).toFixed(1)} s\n`);
};
module.exports.distState = distState;
module.exports.ensureDist = ensureDist;
module.exports.nativeState = nativeState;
