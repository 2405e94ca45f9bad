#!/usr/bin/env node
// @ts-check
/**
 * Issue 14: the native shim in front of the resident service (`hcn-cni serve`), against Debian's Go host-local
 * (/usr/lib/cni/host-local), the start-up anchor of a Go CNI plugin — all in ONE run, commands interleaved
 * round-robin (like startup.bench.js) so the machine's load spreads evenly over them.
 *
 *   VERSION                 shim → service  vs  host-local VERSION                      goal ≤ 1.0 ×
 *                           (and vs `sh -c true`, the floor for a process that does nothing)
 *   ADD+DEL (bridge mode)   shim → service on a zero-latency simulator  vs  host-local ADD+DEL   goal ≤ 1.5 ×
 *                           (also with the plugin's state on tmpfs: host-local does not fsync, the plugin does)
 *   peak memory (max RSS)   the shim process (ADD) vs host-local (ADD), GNU time %M       goal ≤ 1.0 ×
 *   50 pods in parallel     50 shims at once, realistic HNS latency (pods50.bench.js's), makespan ÷ the
 *                           simulator's busy time                                       goal ≤ 1.1
 * and the same through the fallback (no service: the shim runs hcn-cni-standalone = dist/hcn-cni).
 * Side by side, the service's ADD+DEL through HCN (the host's choice) and through HNS v1 ("apiVersion": 1: one HNSCall
 * per create, attach and detach, the path the service took on an HCN host before it chose HCN for every write): in
 * the interleaved table, and with every HNS call answered after 0, 2 and 20 ms, each with its calls.
 *
 * The bin directory is the deployed layout: build/Release/hcn-cni-shim copied as `hcn-cni`, and dist/hcn-cni as
 * `hcn-cni-standalone` beside it. The service is dist/hcn-cni serve. Needs: node-gyp build (the shim), npm run
 * package (built here with --if-stale), Debian's containernetworking-plugins.
 * Env: BENCH_RUNS (default 30), BENCH_WARMUP (default 5), BENCH_PODS (default 50); BENCH_AUDIT=0 turns the ADD-time
 * leak audit off in the ADD+DEL cases (to see its share).
 * Numbers from one run; nothing is asserted. Output: a table, then `BENCH_JSON {...}`.
 */
'use strict';

const { spawn, spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const {
  POD_LATENCY,
  deployedBin,
  HOST_LOCAL,
  podConf,
  podsConf,
  quantile,
  requireServiceBuild,
  runIfMain,
  startService,
  simEnv,
} = require('./common');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const RUNS = Number(process.env.BENCH_RUNS || 30);
const WARMUP = Number(process.env.BENCH_WARMUP || 5);
const PODS = Number(process.env.BENCH_PODS || 50);
const LATENCY = POD_LATENCY;
const GOALS = { version: 1.0, addDel: 1.5, memory: 1.0, pods: 1.1 };

/** @typedef {{ cmd: string, args?: string[], env: NodeJS.ProcessEnv, input: string, expect?: RegExp }} Spawn */
/** @typedef {{ name: string, steps: Spawn[] }} Case */

/** One spawn, wall time in ms. @param {Spawn} s */
function spawnTimed(s) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(s.cmd, s.args ?? [], { env: s.env, input: s.input, stdio: ['pipe', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0)
    throw new Error(`${s.cmd} ${s.env.CNI_COMMAND}: exited ${r.status ?? r.signal}: ${r.stdout}${r.stderr}`);
  if (s.expect && !s.expect.test(String(r.stdout)))
    throw new Error(`${s.cmd} ${s.env.CNI_COMMAND}: unexpected output ${r.stdout}`);
  return ms;
}

/** @param {Case[]} cases */
function measureInterleaved(cases) {
  const once = (/** @type {Case} */ c) => c.steps.reduce((sum, s) => sum + spawnTimed(s), 0);
  for (let i = 0; i < WARMUP; i++) for (const c of cases) once(c);
  /** @type {number[][]} */
  const times = cases.map(() => []);
  for (let i = 0; i < RUNS; i++) cases.forEach((c, j) => times[j].push(once(c)));
  /** @type {Record<string, {median: number, p90: number, min: number}>} */
  const out = {};
  cases.forEach(
    (c, j) =>
      (out[c.name] = { median: quantile(times[j], 0.5), p90: quantile(times[j], 0.9), min: Math.min(...times[j]) }),
  );
  return out;
}

/** Peak RSS in KiB of one run of `s` (GNU time's %M: the largest of the process and the children it waited for). */
function peakKiB(/** @type {Spawn} */ s) {
  {
    const r = spawnSync('/usr/bin/time', ['-f', 'HCNMAXRSS %M', s.cmd], {
      env: s.env,
      input: s.input,
      encoding: 'utf8',
    });
    const m = /HCNMAXRSS (\d+)/.exec(r.stderr);
    if (r.status !== 0 || !m) throw new Error(`peak of ${s.cmd}: ${r.stdout}${r.stderr}`);
    return Number(m[1]);
  }
}

async function run() {
  requireServiceBuild();
  const { startSimulator } = require(path.join(DIST, 'sim'));
  const { Hcn } = require(path.join(DIST, 'hns', 'hcn'));

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-bench-service-'));
  const shim = deployedBin(tmp);
  const socket = path.join(tmp, 'run', 'service.sock');
  const absent = path.join(tmp, 'run', 'nobody.sock');

  const sim = await startSimulator({ logLevel: 'warn' });
  process.env.HCN_SIM = sim.address;
  const base = simEnv(tmp, sim.address);
  const shmState = fs.existsSync('/dev/shm')
    ? fs.mkdtempSync('/dev/shm/hcn-bench-state-')
    : path.join(tmp, 'shm-state');
  // The service's log (a line per verb, the node agent's audits) goes to a file, not between the table's lines.
  let started;
  try {
    started = await startService(tmp, socket, base);
  } catch (e) {
    await sim.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(shmState, { recursive: true, force: true });
    throw e;
  }
  const { child: service, logTail } = started;
  try {
    const hcn = Hcn.open({});
    const ns = crypto.randomUUID();
    await hcn.createNamespace({}, ns);
    const conf = podConf(path.join(tmp, 'state'), { audit: process.env.BENCH_AUDIT !== '0' });
    // The plugin fsyncs the attachment record before its rename (src/state/store.ts WRITE_DURABILITY); host-local
    // fsyncs nothing (os.WriteFile, no Sync, in containernetworking/plugins plugins/ipam/host-local/backend/disk/
    // backend.go). The same ADD+DEL with the state on tmpfs, where fsync costs nothing, shows what is the service path
    // and what is the disk.
    const confShm = JSON.stringify({ ...JSON.parse(conf), stateDir: shmState });
    const confV1 = JSON.stringify({ ...JSON.parse(conf), apiVersion: 1 });
    const hlConf = JSON.stringify({
      cniVersion: '1.0.0',
      name: 'hl',
      type: 'host-local',
      ipam: { type: 'host-local', subnet: '10.99.0.0/16', dataDir: path.join(tmp, 'host-local') },
    });
    // host-local is an IPAM plugin: its conflist entry is the ipam section's owner, so stdin is the whole conf.
    const cni = (/** @type {string} */ verb, /** @type {string} */ address) => ({
      ...base,
      CNI_COMMAND: verb,
      CNI_CONTAINERID: 'bench-pod',
      CNI_IFNAME: 'eth0',
      CNI_NETNS: ns,
      CNI_PATH: '/usr/lib/cni',
      HCN_CNI_SERVICE: address,
    });
    const version = (/** @type {string} */ cmd, /** @type {string} */ address) => ({
      cmd,
      env: { ...base, CNI_COMMAND: 'VERSION', HCN_CNI_SERVICE: address },
      input: '',
      expect: /supportedVersions/,
    });
    const addDel = (/** @type {string} */ cmd, /** @type {string} */ c, /** @type {string} */ address) => [
      { cmd, env: cni('ADD', address), input: c, expect: /"ips"/ },
      { cmd, env: cni('DEL', address), input: c },
    ];
    const timing = measureInterleaved([
      // The floor for "start-up with nothing to do": a static shell doing nothing.
      { name: 'sh -c true', steps: [{ cmd: '/bin/sh', args: ['-c', 'true'], env: base, input: '' }] },
      { name: 'host-local VERSION', steps: [version(HOST_LOCAL, socket)] },
      { name: 'shim VERSION (service)', steps: [version(shim, socket)] },
      { name: 'shim VERSION (fallback)', steps: [version(shim, absent)] },
      { name: 'host-local ADD+DEL', steps: addDel(HOST_LOCAL, hlConf, socket) },
      { name: 'shim ADD+DEL (service)', steps: addDel(shim, conf, socket) },
      { name: 'shim ADD+DEL (service, tmpfs)', steps: addDel(shim, confShm, socket) },
      { name: 'shim ADD+DEL (service, HNS v1)', steps: addDel(shim, confV1, socket) },
      { name: 'shim ADD+DEL (fallback)', steps: addDel(shim, conf, absent) },
    ]);

    const apiPaths = await perApiPath(sim, service.pid, [
      { name: 'HCN', steps: addDel(shim, conf, socket) },
      { name: 'HNS v1', steps: addDel(shim, confV1, socket) },
    ]);

    const del = (/** @type {string} */ cmd, /** @type {string} */ c) =>
      spawnTimed({ cmd, env: cni('DEL', socket), input: c });
    /** @type {Record<string, number>} */
    const memory = {};
    memory['host-local ADD'] = peakKiB({ cmd: HOST_LOCAL, env: cni('ADD', socket), input: hlConf });
    del(HOST_LOCAL, hlConf);
    memory['shim ADD (service)'] = peakKiB({ cmd: shim, env: cni('ADD', socket), input: conf });
    del(shim, conf);
    memory['shim ADD (fallback, incl. hcn-cni-standalone)'] = peakKiB({
      cmd: shim,
      env: cni('ADD', absent),
      input: conf,
    });
    del(shim, conf);
    memory['shim VERSION (service)'] = peakKiB(version(shim, socket));
    const status = fs.readFileSync(`/proc/${service.pid}/status`, 'utf8');
    const serviceRssKiB = Number((/VmHWM:\s+(\d+)/.exec(status) ?? [])[1]);

    const pods = async (/** @type {string} */ address) => {
      await sim.control.reset();
      await sim.control.setLatency('*', 0);
      const stateDir = path.join(tmp, `pods-${crypto.randomUUID()}`);
      const c = podsConf(stateDir, { logLevel: 'error' });
      const warm = crypto.randomUUID();
      await hcn.createNamespace({}, warm);
      spawnTimed({
        cmd: shim,
        env: { ...cni('ADD', address), CNI_NETNS: warm, CNI_CONTAINERID: 'warm' },
        input: c,
        expect: /"ips"/,
      });
      const nss = [];
      for (let i = 0; i < PODS; i++) {
        const id = crypto.randomUUID();
        await hcn.createNamespace({}, id);
        nss.push(id);
      }
      for (const [op, ms] of Object.entries(LATENCY)) await sim.control.setLatency(op, ms);
      const before = await sim.control.stats();
      const t0 = process.hrtime.bigint();
      const codes = await Promise.all(
        nss.map(
          (n, i) =>
            new Promise((resolve) => {
              const child = spawn(shim, [], {
                env: { ...cni('ADD', address), CNI_NETNS: n, CNI_CONTAINERID: `pod-${i}` },
                stdio: ['pipe', 'ignore', 'ignore'],
              });
              child.on('close', (code) => resolve(code ?? -1));
              child.stdin.end(c);
            }),
        ),
      );
      const makespan = Number(process.hrtime.bigint() - t0) / 1e6;
      await sim.control.waitIdle();
      const after = await sim.control.stats();
      const busy = after.busyMs - before.busyMs;
      return { ok: codes.filter((x) => x === 0).length, makespanMs: makespan, busyMs: busy, ratio: makespan / busy };
    };
    const parallel = { service: await pods(socket), fallback: await pods(absent) };

    const hl = timing['host-local VERSION'].median;
    const hlAdd = timing['host-local ADD+DEL'].median;
    const ratios = {
      'VERSION: shim (service) / host-local': timing['shim VERSION (service)'].median / hl,
      'VERSION: shim (service) / sh -c true': timing['shim VERSION (service)'].median / timing['sh -c true'].median,
      'ADD+DEL: shim (service) / host-local': timing['shim ADD+DEL (service)'].median / hlAdd,
      'ADD+DEL: shim (service, state on tmpfs) / host-local': timing['shim ADD+DEL (service, tmpfs)'].median / hlAdd,
      'ADD+DEL: shim (service, HNS v1) / host-local': timing['shim ADD+DEL (service, HNS v1)'].median / hlAdd,
      'peak memory: shim ADD (service) / host-local ADD': memory['shim ADD (service)'] / memory['host-local ADD'],
      [`${PODS} pods: makespan / simulator busy (service)`]: parallel.service.ratio,
      'VERSION: shim (fallback) / host-local': timing['shim VERSION (fallback)'].median / hl,
      'ADD+DEL: shim (fallback) / host-local': timing['shim ADD+DEL (fallback)'].median / hlAdd,
      'peak memory: shim ADD (fallback) / host-local ADD':
        memory['shim ADD (fallback, incl. hcn-cni-standalone)'] / memory['host-local ADD'],
      [`${PODS} pods: makespan / simulator busy (fallback)`]: parallel.fallback.ratio,
    };
    const met = {
      version: ratios['VERSION: shim (service) / host-local'] <= GOALS.version,
      addDel: ratios['ADD+DEL: shim (service) / host-local'] <= GOALS.addDel,
      memory: ratios['peak memory: shim ADD (service) / host-local ADD'] <= GOALS.memory,
      pods: parallel.service.ratio <= GOALS.pods,
    };
    return {
      timing,
      apiPaths,
      memoryKiB: memory,
      serviceRssKiB,
      parallel,
      ratios,
      goals: GOALS,
      met,
      loadavg: os.loadavg(),
      cpus: os.cpus().length,
    };
  } catch (e) {
    throw new Error(`${/** @type {Error} */ (e).message}\nthe service's last log lines:\n${logTail()}`, { cause: e });
  } finally {
    service.kill('SIGTERM');
    await new Promise((r) => (service.exitCode !== null ? r(undefined) : service.once('exit', r)));
    await sim.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.rmSync(shmState, { recursive: true, force: true });
  }
}

/** Per-call latencies of the API-path table (ms). */
const PATH_LATENCIES = [0, 2, 20];

/**
 * Each API path's ADD+DEL through the service, with every HNS call answered after each of PATH_LATENCIES (median of
 * RUNS), and the service's calls of one ADD+DEL from the simulator's call log.
 * @param {any} sim @param {number | undefined} pid @param {Array<{ name: string, steps: any[] }>} paths
 */
async function perApiPath(sim, pid, paths) {
  const lastSeq = async () =>
    (await sim.control.calls()).reduce((/** @type {number} */ m, /** @type {any} */ c) => Math.max(m, c.seq), 0);
  const out = [];
  for (const p of paths) {
    const s0 = await lastSeq();
    spawnTimed(p.steps[0]);
    const s1 = await lastSeq();
    spawnTimed(p.steps[1]);
    const log = (await sim.control.calls()).filter((/** @type {any} */ c) => c.seq > s0 && c.pid === pid);
    const calls = {
      add: log.filter((/** @type {any} */ c) => c.seq <= s1).map((/** @type {any} */ c) => c.op),
      del: log.filter((/** @type {any} */ c) => c.seq > s1).map((/** @type {any} */ c) => c.op),
    };
    for (const ms of PATH_LATENCIES) {
      await sim.control.setLatency('*', ms);
      const xs = [];
      for (let i = 0; i < RUNS; i++) xs.push(p.steps.reduce((sum, st) => sum + spawnTimed(st), 0));
      out.push({ path: p.name, ms, median: quantile(xs, 0.5), calls });
    }
    await sim.control.setLatency('*', 0);
  }
  return out;
}

function print(/** @type {any} */ r) {
  const lines = [
    `service (${RUNS} runs after ${WARMUP} warm-up, wall time per spawn, commands interleaved; load average ${r.loadavg.map((x) => x.toFixed(2)).join(' ')} on ${r.cpus} CPUs)`,
    '',
  ];
  // Each name column as wide as its longest name, so no figure runs into it.
  const wide = (/** @type {string[]} */ names) => Math.max(...names.map((n) => n.length)) + 2;
  const cmdWidth = wide(['command', ...Object.keys(r.timing)]);
  lines.push(`${'command'.padEnd(cmdWidth)}${'median ms'.padStart(11)}${'p90 ms'.padStart(9)}${'min ms'.padStart(9)}`);
  for (const [name, t] of Object.entries(r.timing))
    lines.push(
      `${name.padEnd(cmdWidth)}${t.median.toFixed(2).padStart(11)}${t.p90.toFixed(2).padStart(9)}${t.min.toFixed(2).padStart(9)}`,
    );
  lines.push('', 'ADD+DEL through the service per API path, every HNS call answered after the latency (median ms)');
  for (const x of r.apiPaths)
    lines.push(
      `  ${x.path.padEnd(8)}${`${x.ms} ms`.padEnd(8)}${x.median.toFixed(2).padStart(10)}   calls ADD ${x.calls.add.length} + DEL ${x.calls.del.length}`,
    );
  for (const name of [...new Set(r.apiPaths.map((/** @type {any} */ x) => x.path))]) {
    const c = r.apiPaths.find((/** @type {any} */ x) => x.path === name).calls;
    lines.push(`  ${name}: ADD ${c.add.join(', ')}; DEL ${c.del.join(', ')}`);
  }
  lines.push('', 'peak RSS (KiB)');
  for (const [name, v] of Object.entries(r.memoryKiB)) lines.push(`  ${name.padEnd(48)}${String(v).padStart(8)}`);
  lines.push(`  ${'the service process (VmHWM, for reference)'.padEnd(48)}${String(r.serviceRssKiB).padStart(8)}`);
  lines.push('', `${PODS} pods in parallel through the shim`);
  for (const [name, p] of Object.entries(r.parallel))
    lines.push(
      `  ${name.padEnd(10)} ok ${p.ok}/${PODS}  makespan ${p.makespanMs.toFixed(0)} ms  busy ${p.busyMs.toFixed(0)} ms  ratio ${p.ratio.toFixed(2)}`,
    );
  lines.push('');
  const ratioWidth = wide(Object.keys(r.ratios));
  for (const [name, v] of Object.entries(r.ratios)) lines.push(`${name.padEnd(ratioWidth)}${v.toFixed(2)}`);
  lines.push(
    `goals (service path): VERSION ≤ ${r.goals.version} ${r.met.version ? 'met' : 'MISSED'}; ADD+DEL ≤ ${r.goals.addDel} ${r.met.addDel ? 'met' : 'MISSED'}; memory ≤ ${r.goals.memory} ${r.met.memory ? 'met' : 'MISSED'}; ${PODS} pods ≤ ${r.goals.pods} ${r.met.pods ? 'met' : 'MISSED'}`,
  );
  lines.push(`BENCH_JSON ${JSON.stringify({ bench: 'service', ...r })}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

module.exports = { run, print };

runIfMain(module, 'service', () => run().then(print));
