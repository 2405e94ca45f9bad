// @ts-check
/**
 * Jest's globalSetup: every way of running the tests (npm test, `npx jest FILE`, an editor's runner) runs the current
 * source. In-process tests load src/ through ts-jest; tests that start the plugin as a process run dist/ (the CLI,
 * the crash hook of test builds, fixtures that require dist modules). So before any test, dist/ is rebuilt when it is
 * stale (scripts/fresh-dist.js: the rule, and why nothing else may rebuild it while tests run). The packaged
 * executables have their own staleness check (scripts/package.js --if-stale, called by the suites that run them).
 *
 * The native build (build/Release: the addon and the simulator client) is not rebuilt here — a node-gyp rebuild takes
 * minutes and needs the toolchain — but a build older than a file under native/ (or binding.gyp) is said, loudly:
 * tests would otherwise run yesterday's addon against today's sources and fail, or pass, for the wrong reason.
 */
'use strict';

const fs = require('fs');
const path = require('path');
const { ensureDist, mtime, walk } = require('../../scripts/fresh-dist');

const ROOT = path.join(__dirname, '..', '..');

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
module.exports.nativeState = nativeState;
