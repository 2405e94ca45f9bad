#!/usr/bin/env node
// @ts-check
/**
 * dist/ (tsc's output) rebuilt only when it is stale. Jest's globalSetup calls it before any test, and the demo calls
 * it before it runs; `node scripts/fresh-dist.js` does the same by hand.
 *
 * Why "only when stale": tsc rewrites every file it emits in place (truncate, then write). A process that starts
 * while that happens can read an empty module. For example, `hcn-cni serve` once read an empty hcn-error.js and
 * failed with "Usage: setErrorClass(...)". That happened in CI while the demo, run by one jest worker, called
 * `npm run build:ts` and other workers started the CLI. An up-to-date tree costs one walk of src/ (a few ms).
 *
 * Staleness: dist/.build-stamp (written here, with the time the build started) is older than a source under src/ or a
 * tsconfig, or a compiled module has lost its source (a rename; such files are removed before the build, so dist/
 * cannot answer for a module that no longer exists).
 */
'use strict';

const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const ROOT = path.join(__dirname, '..');

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

module.exports = { distState, ensureDist, walk, mtime };

if (require.main === module) {
  const r = ensureDist();
  process.stderr.write(
    r.rebuilt ? `rebuilt dist/ (${r.reason}) in ${((r.ms ?? 0) / 1000).toFixed(1)} s\n` : 'dist/ is current\n',
  );
}
