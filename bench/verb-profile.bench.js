#!/usr/bin/env node
// @ts-check
/**
 * Where a verb's time goes through the service: the native shim in front of `hcn-cni serve` (run from its JS entry,
 * dist/cli/hcn-cni.js, with bench/cpu-profile-preload.js: a single executable takes no Node options), bridge mode on an existing
 * network, a zero-latency simulator. N ADDs one after another, then their N DELs; the V8 CPU profile's samples are
 * split by the monotonic time of each phase (V8's profile timestamps and process.hrtime both read CLOCK_MONOTONIC on
 * Linux), so each verb gets its own profile:
 *   - wall time per verb (the shim's spawn to exit) and the service's CPU per verb (non-idle samples ÷ N);
 *   - that CPU by part of the code (the plugin, the state files, the HNS facade, logging, the service, Node itself,
 *     garbage collection) and the heaviest functions by self time;
 *   - the simulator's busy time per verb (its own CPU per HNS call is not HNS's on Windows: zero latency here).
 * The rest of the wall time is the shim's start, the hops between processes and waiting for the disk (fsync).
 * Env: BENCH_PROFILE_PODS (default 200), BENCH_WARMUP (default 20). Numbers from one run; nothing is asserted.
 */
'use strict';

const { spawn, spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { answers, deployedBin, podConf, quantile, requireServiceBuild, runIfMain, simEnv } = require('./common');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const PODS = Number(process.env.BENCH_PROFILE_PODS || 200);
const WARMUP = Number(process.env.BENCH_WARMUP || 20);

/** Which part of the code a profile node's script belongs to. @param {string} url @param {string} fn */
function partOf(url, fn) {
  if (fn === '(garbage collector)') return 'garbage collection';
  if (fn === '(program)' || fn === '(root)') return 'V8/native (program)';
  if (!url) return 'V8/native (program)';
  if (url.startsWith('node:')) return 'Node built-ins';
  if (url.includes('node_modules/pino') || url.includes('node_modules/sonic-boom') || url.includes('/log/'))
    return 'logging (pino)';
  const m = /\/dist\/([^/]+)\//.exec(url);
  if (m) return `src/${m[1]}`;
  if (url.includes('node_modules')) return 'other dependencies';
  return 'other';
}

/**
 * Self time per profile node inside [from, to) (µs, CLOCK_MONOTONIC).
 * @param {any} profile @param {bigint} from @param {bigint} to
 */
function selfTimes(profile, from, to) {
  /** @type {Map<number, any>} */
  const byId = new Map(profile.nodes.map((/** @type {any} */ n) => [n.id, n]));
  /** @type {Map<number, number>} */
  const self = new Map();
  let t = BigInt(profile.startTime);
  for (let i = 0; i < profile.samples.length; i++) {
    t += BigInt(profile.timeDeltas[i]);
    if (t < from || t >= to) continue;
    const dt = i + 1 < profile.timeDeltas.length ? profile.timeDeltas[i + 1] : 0;
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + Math.max(0, dt));
  }
  return { byId, self };
}

/** @param {any} profile @param {bigint} fromNs @param {bigint} toNs @param {number} n */
function summarize(profile, fromNs, toNs, n) {
  const { byId, self } = selfTimes(profile, fromNs / 1000n, toNs / 1000n);
  /** @type {Record<string, number>} */
  const parts = {};
  /** @type {Map<string, number>} */
  const fns = new Map();
  let busyUs = 0;
  for (const [id, us] of self) {
    const node = byId.get(id);
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    busyUs += us;
    const part = partOf(url, functionName);
    parts[part] = (parts[part] ?? 0) + us;
    const key = `${functionName || '(anonymous)'} ${url ? path.relative(ROOT, url.replace(/^file:\/\//, '')) : ''}:${lineNumber + 1}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
  }
  const perVerb = (/** @type {number} */ us) => Math.round((us / n / 1000) * 1000) / 1000;
  return {
    cpuMsPerVerb: perVerb(busyUs),
    parts: Object.fromEntries(
      Object.entries(parts)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, perVerb(v)]),
    ),
    top: [...fns.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 12)
      .map(([k, v]) => ({ fn: k, msPerVerb: perVerb(v) })),
  };
}

async function run() {
  requireServiceBuild();
  const { startSimulator } = require(path.join(DIST, 'sim'));
  const { Hcn } = require(path.join(DIST, 'hns', 'hcn'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-bench-profile-'));
  const shim = deployedBin(tmp);
  const socket = path.join(tmp, 'run', 'service.sock');
  const profFile = path.join(tmp, 'service.cpuprofile');
  const sim = await startSimulator({ logLevel: 'warn' });
  process.env.HCN_SIM = sim.address;
  const base = simEnv(tmp, sim.address);
  const logFd = fs.openSync(path.join(tmp, 'service.log'), 'a');
  const service = spawn(
    process.execPath,
    [
      '--require',
      path.join(__dirname, 'cpu-profile-preload.js'),
      path.join(DIST, 'cli', 'hcn-cni.js'),
      'serve',
      '--listen',
      socket,
    ],
    { env: { ...base, HCN_BENCH_CPU_PROFILE: profFile }, stdio: ['ignore', 'ignore', logFd] },
  );
  fs.closeSync(logFd);
  try {
    for (let i = 0; !(await answers(socket)); i++) {
      if (i > 300 || service.exitCode !== null) throw new Error('the service did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
    const hcn = Hcn.open({});
    const conf = podConf(path.join(tmp, 'state'), { logLevel: 'error' });
    /** @param {string} verb @param {string} ns @param {string} id */
    const verb = (verb, ns, id) => {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(shim, [], {
        input: conf,
        env: {
          ...base,
          CNI_COMMAND: verb,
          CNI_CONTAINERID: id,
          CNI_IFNAME: 'eth0',
          CNI_NETNS: ns,
          CNI_PATH: '/usr/lib/cni',
          HCN_CNI_SERVICE: socket,
        },
      });
      if (r.status !== 0) throw new Error(`${verb} ${id}: ${r.stdout}${r.stderr}`);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    /** @param {number} n @param {string} tag */
    const pods = async (n, tag) => {
      const out = [];
      for (let i = 0; i < n; i++) {
        const ns = crypto.randomUUID();
        await hcn.createNamespace({}, ns);
        out.push({ ns, id: `${tag}-${i}` });
      }
      return out;
    };
    for (const p of await pods(WARMUP, 'warm')) {
      verb('ADD', p.ns, p.id);
      verb('DEL', p.ns, p.id);
    }
    const list = await pods(PODS, 'pod');
    /** @type {Record<string, {from: bigint, to: bigint, wall: number[], simBusyMs: number, calls: number}>} */
    const phases = {};
    for (const v of ['ADD', 'DEL']) {
      const before = await sim.control.stats();
      const from = process.hrtime.bigint();
      const wall = list.map((p) => verb(v, p.ns, p.id));
      const to = process.hrtime.bigint();
      const after = await sim.control.stats();
      const total = (/** @type {any} */ st) => Object.values(st.calls).reduce((a, b) => Number(a) + Number(b), 0);
      phases[v] = { from, to, wall, simBusyMs: after.busyMs - before.busyMs, calls: total(after) - total(before) };
    }
    service.kill('SIGUSR2');
    for (let i = 0; !fs.existsSync(profFile); i++) {
      if (i > 600 || fs.existsSync(`${profFile}.error`)) throw new Error('the service wrote no CPU profile');
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 200)); // the write is one synchronous call; let it finish
    const profile = JSON.parse(fs.readFileSync(profFile, 'utf8'));
    const load = os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
    console.log(`verb-profile: ${PODS} pods, load average ${load}, service profiled by bench/cpu-profile-preload.js`);
    const json = {};
    for (const [v, p] of Object.entries(phases)) {
      const s = summarize(profile, p.from, p.to, PODS);
      const wallMedian = quantile(p.wall, 0.5);
      const simPerVerb = p.simBusyMs / PODS;
      console.log(`\n${v}: wall median ${wallMedian.toFixed(2)} ms (shim spawn to exit)`);
      console.log(
        `  service CPU ${s.cpuMsPerVerb.toFixed(2)} ms/verb; simulator busy ${simPerVerb.toFixed(2)} ms/verb`,
      );
      console.log(`  HNS calls: ${Number.isFinite(p.calls) ? (p.calls / PODS).toFixed(2) : '?'} per verb`);
      console.log('  service CPU by part (ms/verb):');
      for (const [k, ms] of Object.entries(s.parts)) console.log(`    ${ms.toFixed(3).padStart(7)}  ${k}`);
      console.log('  heaviest functions, self time (ms/verb):');
      for (const f of s.top) console.log(`    ${f.msPerVerb.toFixed(3).padStart(7)}  ${f.fn}`);
      Object.assign(json, { [v]: { wallMedianMs: wallMedian, simBusyMsPerVerb: simPerVerb, ...s } });
    }
    console.log(`BENCH_JSON ${JSON.stringify({ bench: 'verb-profile', pods: PODS, load, ...json })}`);
  } finally {
    if (service.exitCode === null) service.kill('SIGKILL');
    await sim.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

module.exports = { run };
runIfMain(module, 'verb-profile', run);
