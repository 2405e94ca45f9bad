// @ts-check
/**
 * What more than one benchmark uses: the quantile of a sample, the HNS latencies and configuration of a realistic pod
 * ADD, the service benchmarks' build check, deployed bin directory and service start, and the run-when-main
 * boilerplate.
 */
'use strict';

const { spawn, spawnSync } = require('child_process');
const fs = require('fs');
const net = require('net');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');
const SHIM = path.join(ROOT, 'build', 'Release', 'hcn-cni-shim');
const EXE = path.join(ROOT, 'dist', 'hcn-cni');
const HOST_LOCAL = '/usr/lib/cni/host-local';

/** The q-quantile (0..1) of xs, interpolating between the two nearest ranks. @param {number[]} xs @param {number} q */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

/**
 * Per-call simulator latencies (ms) for the parallel-pods benchmarks: HNS's endpoint create dominates, the rest are
 * a few ms (the ordering model is src/sim/engine.ts). The same figures in pods50 and service, so their makespan ratios
 * compare.
 */
const POD_LATENCY = Object.freeze({
  '*': 2,
  HcnCreateEndpoint: 60,
  HcnModifyNamespace: 20,
  HcnDeleteEndpoint: 30,
  'HNSCall POST /endpoints/{id}/attach': 20,
  // HNS v1's create, attach and detach ("apiVersion": 1, or a host without HCN): the same work as the HCN calls, so
  // the same latency — without these the model would make those calls nearly free.
  'HNSCall POST /endpoints': 60,
  'HNSCall POST /namespaces/{id}/addresource': 20,
  'HNSCall POST /namespaces/{id}/removeresource': 20,
});

/**
 * The bridge-mode configuration the parallel-pods benchmarks add their pods with (one /16, so 50 pods fit; a long
 * HNS time limit, since 50 pods queue behind each other in HNS). @param {string} stateDir @param {object} [extra]
 */
function podsConf(stateDir, extra = {}) {
  return JSON.stringify({
    cniVersion: '1.0.0',
    name: 'cbr0',
    type: 'hcn-cni',
    createNetwork: true,
    subnet: '10.88.0.0/16',
    stateDir,
    hnsTimeoutSeconds: 60,
    ...extra,
  });
}

/**
 * The single pod's bridge configuration the start-up and service benchmarks time (the network is created by the first,
 * warm-up ADD). @param {string} stateDir @param {object} [extra]
 */
function podConf(stateDir, extra = {}) {
  return JSON.stringify({
    cniVersion: '1.0.0',
    name: 'cbr0',
    type: 'hcn-cni',
    createNetwork: true,
    subnet: '10.244.1.0/24',
    stateDir,
    logLevel: 'info',
    ...extra,
  });
}

/**
 * Runs a benchmark file's main when the file is run directly (not when bench/run.js or a test requires it); a failure
 * is printed and exits 1. @param {NodeJS.Module} mod @param {string} name @param {() => Promise<void>} main
 */
function runIfMain(mod, name, main) {
  if (require.main !== mod) return;
  main().catch((e) => {
    process.stderr.write(`${name} bench: ${e instanceof Error ? e.stack : e}\n`);
    process.exit(1);
  });
}

/**
 * What the service benchmarks need before they start: dist/ packaged (scripts/package.js --if-stale), the shim built
 * (node-gyp), and Debian's host-local. Throws saying which is missing.
 */
function requireServiceBuild() {
  const pkg = spawnSync(
    process.execPath,
    [path.join(ROOT, 'scripts', 'package.js'), '--target', 'linux', '--if-stale', '--quiet'],
    { stdio: 'inherit' },
  );
  if (pkg.status !== 0) throw new Error('scripts/package.js failed');
  if (!fs.existsSync(SHIM)) throw new Error(`${SHIM} is missing: npx node-gyp rebuild`);
  if (!fs.existsSync(HOST_LOCAL))
    throw new Error(`${HOST_LOCAL} is missing: apt-get install containernetworking-plugins`);
}

/**
 * The deployed layout in `tmp`/bin: the shim copied as `hcn-cni`, dist/hcn-cni as `hcn-cni-standalone` beside it.
 * @param {string} tmp @returns {string} the shim's path
 */
function deployedBin(tmp) {
  const bin = path.join(tmp, 'bin');
  fs.mkdirSync(bin);
  fs.copyFileSync(SHIM, path.join(bin, 'hcn-cni'));
  fs.chmodSync(path.join(bin, 'hcn-cni'), 0o755);
  fs.symlinkSync(EXE, path.join(bin, 'hcn-cni-standalone'));
  return path.join(bin, 'hcn-cni');
}

/** Whether something accepts connections at the address (the service has started). @param {string} address */
function answers(address) {
  return new Promise((resolve) => {
    const c = net.connect(address);
    c.once('connect', () => (c.destroy(), resolve(true)));
    c.once('error', () => resolve(false));
  });
}

/**
 * Starts the resident service (`dist/hcn-cni serve --listen socket …args`) and waits until it accepts connections.
 * Its log (each verb's info lines, the node agent's audits) goes to service.log in `tmp`, not into the benchmark's
 * output, where it would land between the table's lines; `logTail()` gives its last lines for an error that says why
 * the service or a verb failed. @param {string} tmp @param {string} socket @param {NodeJS.ProcessEnv} env
 * @param {string[]} [args] @returns {Promise<{ child: import('child_process').ChildProcess, logTail: () => string }>}
 */
async function startService(tmp, socket, env, args = []) {
  const logFile = path.join(tmp, 'service.log');
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(EXE, ['serve', '--listen', socket, ...args], { env, stdio: ['ignore', 'ignore', fd] });
  fs.closeSync(fd); // the child has its own copy
  const logTail = () => fs.readFileSync(logFile, 'utf8').split('\n').slice(-20).join('\n');
  for (let i = 0; !(await answers(socket)); i++) {
    if (i > 300 || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`the service did not start; its last log lines:\n${logTail()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, logTail };
}

/**
 * The environment every process of a benchmark runs with: the simulator as HNS, and a node-wide claims register as on
 * Windows (C:\\ProgramData\\hcn-cni\\claims), so state directories that share a network (the service bench's state on
 * disk and on tmpfs) protect each other's ADDs in flight. @param {string} tmp @param {string} simAddress
 */
function simEnv(tmp, simAddress) {
  return { PATH: process.env.PATH, TMPDIR: tmp, HCN_SIM: simAddress, HCN_CNI_CLAIMS_DIR: path.join(tmp, 'claims') };
}

module.exports = {
  simEnv,
  quantile,
  POD_LATENCY,
  podConf,
  podsConf,
  runIfMain,
  requireServiceBuild,
  deployedBin,
  answers,
  startService,
  SHIM,
  EXE,
  HOST_LOCAL,
};
