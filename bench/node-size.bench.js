#!/usr/bin/env node
// @ts-check
/**
 * The cost of one pod's ADD should not grow with the number of pods already on the node. Through
 * the resident service (the shim → `dist/hcn-cni serve`, the deployed layout of service.bench.js), bridge mode with an
 * existing network, Debian's host-local IPAM (/usr/lib/cni/host-local), the containerd path (CNI_NETNS = an HCN
 * namespace GUID), a zero-latency simulator:
 *
 *   ADD of one fresh pod, then its DEL (the node keeps its size), with N other pods on the node:
 *     median and p90 of the ADD and of the DEL, for each N (default 100 and 3 000)     ADD(3 000) ÷ ADD(100) ≤ 1.2
 *   the same with "audit": false (an ADD's own audit, by name: its share), and with Debian's `static` IPAM (an IPAM
 *   whose cost does not grow, so what grows is the plugin's)
 *   HNS calls of one ADD and one DEL, from the simulator's call log (the service's calls between the
 *   verb's start and end), with their ops                                              ≤ 5 per ADD, ≤ 2 per DEL
 *   DEL with `static` IPAM, 3 000 ÷ 100 pods                                            ≤ 1.2
 *   HNS's share: at the largest size, the static-IPAM ADD and DEL again with the simulator answering every call
 *   after 2 ms and after 20 ms (an assumption: the per-round-trip cost of HNS, an RPC into a service that
 *   serialises its mutations, is not public; 2 ms stands for a quiet node, 20 ms for a busy one), next to what
 *   the same latency costs the reference plugin's call counts (REFERENCE_CALLS); side by side, the HCN path (the
 *   host's choice) and HNS v1's ("apiVersion": 1, one HNSCall per create, attach and detach: the path the service
 *   took on an HCN host before it chose HCN for every write), each with its calls
 *
 * The N pods are the plugin's own: real ADDs through the same service (shims started FILL_PARALLEL at a time, each
 * pod with its own HCN namespace), so the endpoints, attachment records, host-local's files and HNS's namespaces are
 * exactly what the plugin leaves, with no second writer of the state format to keep in step with src/state/store.ts.
 * The filling ADDs carry "audit": false and are otherwise the measured configuration: with the audit on, each of
 * them would list and judge the whole node (quadratic: minutes for 3 000 on 2 cores); with it off, the fill takes
 * about as long as the same number of ADDs on an empty node (timed, and printed). Nodes grow from the smallest size
 * to the next, so the larger one is the smaller plus more pods.
 * Each timed pod gets a fresh container id and a fresh namespace (created before, and deleted after, the timed
 * commands); the audit-on and audit-off pods alternate, so the machine's load spreads evenly over both.
 *
 * Env: BENCH_NODE_SIZES (default "100,3000"), BENCH_RUNS (30), BENCH_WARMUP (5), BENCH_FILL_PARALLEL (8).
 * Needs: node-gyp build (the shim), npm run package (built here with --if-stale), containernetworking-plugins.
 * Numbers from one run; nothing is asserted. Output: a table, then `BENCH_JSON {...}`.
 */
'use strict';

const { spawn, spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { deployedBin, podsConf, quantile, requireServiceBuild, runIfMain, startService, simEnv } = require('./common');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const CNI_PATH = '/usr/lib/cni';
const HOST_LOCAL = path.join(CNI_PATH, 'host-local');
const SIZES = (process.env.BENCH_NODE_SIZES || '100,3000')
  .split(',')
  .map((x) => Number(x.trim()))
  .filter((x) => Number.isInteger(x) && x >= 0)
  .sort((a, b) => a - b);
const RUNS = Number(process.env.BENCH_RUNS || 30);
const WARMUP = Number(process.env.BENCH_WARMUP || 5);
const FILL_PARALLEL = Number(process.env.BENCH_FILL_PARALLEL || 8);
const GOALS = { addRatio: 1.2, addCalls: 5, delCalls: 2, delStaticRatio: 1.2 };
/** Per-call latencies of the HNS-share table (ms), and runs at each. */
const LATENCIES = (process.env.BENCH_HNS_LATENCIES || '2,20').split(',').map(Number);
const LATENCY_RUNS = Number(process.env.BENCH_LATENCY_RUNS || 10);
/**
 * HNS calls of the reference plugin, containernetworking/plugins v1.5.1 win-bridge with host-local, on an existing
 * L2Bridge network and an HCN namespace: win-bridge.exe run under wine against hcn-sim, its calls counted from the
 * simulator's call log (the project's Windows peer run, 2026-12-02). Not re-measured here (no wine in this bench).
 */
const REFERENCE_CALLS = { plugin: 'win-bridge v1.5.1', add: 12, del: 10 };

/**
 * The measured configuration: podsConf's bridge network (bench/common.js) on a /16, so 3 000+ pods fit, with
 * host-local handing out the addresses (its files in the run's temp dir). @param {string} tmp @param {boolean} audit
 */
function nodeConf(tmp, audit, ipam = undefined, extra = {}) {
  return podsConf(path.join(tmp, 'state'), {
    logLevel: 'info',
    audit,
    ...extra,
    ipam: ipam ?? {
      type: 'host-local',
      dataDir: path.join(tmp, 'host-local'),
      ranges: [[{ subnet: '10.88.0.0/16', gateway: '10.88.0.1' }]],
    },
  });
}

/**
 * The same with Debian's `static` IPAM (the address in the configuration, nothing on disk): an IPAM whose cost does
 * not grow with the node, so what still grows is the plugin's. Addresses from 10.88.240.1, above host-local's fill.
 * `extra`: the API path's setting (API_PATHS). @param {string} tmp @param {number} k @param {object} [extra]
 */
function staticConf(tmp, k, extra = {}) {
  const address = `10.88.${240 + Math.floor(k / 250)}.${1 + (k % 250)}/16`;
  return nodeConf(tmp, true, { type: 'static', addresses: [{ address, gateway: '10.88.0.1' }] }, extra);
}

/** The two ways to HNS compared in the HNS-share table: the host's choice (HCN here) and HNS v1's. */
const API_PATHS = [
  { name: 'HCN', extra: {} },
  { name: 'HNS v1', extra: { apiVersion: 1 } },
];

/** @typedef {{ verb: string, containerId: string, netns: string, conf: string }} Verb */

/** @param {string} socket @param {string} tmp @param {Verb} v */
function cniEnv(socket, tmp, v) {
  return {
    PATH: process.env.PATH,
    TMPDIR: tmp,
    HCN_SIM: process.env.HCN_SIM,
    HCN_CNI_SERVICE: socket,
    CNI_COMMAND: v.verb,
    CNI_CONTAINERID: v.containerId,
    CNI_IFNAME: 'eth0',
    CNI_NETNS: v.netns,
    CNI_PATH,
  };
}

/** One run of a CNI executable (the shim, host-local), wall time in ms; throws when the verb failed. @param {string} cmd @param {NodeJS.ProcessEnv} env @param {string} conf */
function timed(cmd, env, conf) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, [], { env, input: conf, stdio: ['pipe', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0)
    throw new Error(
      `${env.CNI_COMMAND} ${env.CNI_CONTAINERID}: exited ${r.status ?? r.signal}: ${r.stdout}${r.stderr}`,
    );
  if (env.CNI_COMMAND === 'ADD' && !/"ips"/.test(String(r.stdout)))
    throw new Error(`ADD ${env.CNI_CONTAINERID}: unexpected output ${r.stdout}`);
  return ms;
}

/** One shim run without waiting for it in a blocking way (the fill). @param {string} shim @param {NodeJS.ProcessEnv} env @param {string} conf */
function shimAsync(shim, env, conf) {
  return new Promise((resolve, reject) => {
    const child = spawn(shim, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(undefined) : reject(new Error(`fill ${env.CNI_CONTAINERID}: exited ${code}: ${out}`)),
    );
    child.stdin.end(conf);
  });
}

/** @param {number[]} xs */
function summary(xs) {
  return { median: quantile(xs, 0.5), p90: quantile(xs, 0.9), min: Math.min(...xs) };
}

async function run() {
  requireServiceBuild();
  if (SIZES.length === 0) throw new Error(`BENCH_NODE_SIZES=${process.env.BENCH_NODE_SIZES}: no sizes`);
  const { startSimulator } = require(path.join(DIST, 'sim'));
  const { Hcn } = require(path.join(DIST, 'hns', 'hcn'));

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-bench-node-size-'));
  const shim = deployedBin(tmp);
  const socket = path.join(tmp, 'run', 'service.sock');

  const sim = await startSimulator({ logLevel: 'warn' });
  process.env.HCN_SIM = sim.address;
  await sim.control.setLatency('*', 0);
  const base = simEnv(tmp, sim.address);
  // No HNS probe: the node agent's calls would land in the call counts below. The service's log goes to a file.
  let started;
  try {
    started = await startService(tmp, socket, base, ['--hns-probe-seconds', '0']);
  } catch (e) {
    await sim.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  const { child: service, logTail } = started;
  const servicePid = service.pid;
  try {
    const hcn = Hcn.open({});
    const confs = { audit: nodeConf(tmp, true), noAudit: nodeConf(tmp, false) };
    const env = (/** @type {Verb} */ v) => cniEnv(socket, tmp, v);

    // The network: created by a first pod's ADD, which stays (it is one of the N).
    let onNode = 0;
    /** @param {number} count */
    const fill = async (count) => {
      const t0 = process.hrtime.bigint();
      let next = 0;
      const worker = async () => {
        while (next < count) {
          const i = onNode + next++;
          const netns = crypto.randomUUID();
          await hcn.createNamespace({}, netns);
          await shimAsync(shim, env({ verb: 'ADD', containerId: `node-pod-${i}`, netns, conf: '' }), confs.noAudit);
        }
      };
      if (onNode === 0 && count > 0) {
        next = 1;
        const netns = crypto.randomUUID();
        await hcn.createNamespace({}, netns);
        await shimAsync(shim, env({ verb: 'ADD', containerId: 'node-pod-0', netns, conf: '' }), confs.noAudit);
      }
      await Promise.all(Array.from({ length: Math.min(FILL_PARALLEL, count) }, worker));
      onNode += count;
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };

    let fresh = 0;
    /** One fresh pod's ADD then DEL, each timed; its namespace made before and removed after. @param {string} conf */
    const addDel = async (conf) => {
      const netns = crypto.randomUUID();
      await hcn.createNamespace({}, netns);
      const v = { containerId: `bench-pod-${fresh++}`, netns, conf };
      const add = timed(shim, env({ ...v, verb: 'ADD' }), conf);
      const del = timed(shim, env({ ...v, verb: 'DEL' }), conf);
      await hcn.deleteNamespace(netns);
      return { add, del };
    };

    /**
     * host-local by itself, on the same dataDir and network name (what the plugin's ADD and DEL run as their IPAM):
     * the floor of this configuration. host-local 1.1.1 reads every file of the network's directory in an ADD
     * (allocator.Get → store.GetByID, a filepath.Walk) and in a DEL (ReleaseByID → ReleaseByKey, the same walk):
     * containernetworking/plugins plugins/ipam/host-local/backend/allocator/allocator.go and backend/disk/backend.go.
     */
    const hostLocal = () => {
      const v = { containerId: `bench-hl-${fresh++}`, netns: crypto.randomUUID(), conf: confs.audit };
      const add = timed(HOST_LOCAL, env({ ...v, verb: 'ADD' }), confs.audit);
      const del = timed(HOST_LOCAL, env({ ...v, verb: 'DEL' }), confs.audit);
      return { add, del };
    };

    /** The service's HNS calls during one fresh pod's ADD and its DEL. @param {string} conf */
    const callsOf = async (conf) => {
      const netns = crypto.randomUUID();
      await hcn.createNamespace({}, netns);
      const v = { containerId: `bench-pod-${fresh++}`, netns, conf };
      const lastSeq = async () => (await sim.control.calls()).reduce((m, r) => Math.max(m, r.seq), 0);
      const s0 = await lastSeq();
      timed(shim, env({ ...v, verb: 'ADD' }), conf);
      const s1 = await lastSeq();
      timed(shim, env({ ...v, verb: 'DEL' }), conf);
      const log = (await sim.control.calls()).filter((r) => r.seq > s0 && r.pid === servicePid);
      const add = log.filter((r) => r.seq <= s1).map((r) => r.op);
      const del = log.filter((r) => r.seq > s1).map((r) => r.op);
      await hcn.deleteNamespace(netns);
      return { add, del };
    };

    /** @type {Record<string, any>} */
    const sizes = {};
    for (const size of SIZES) {
      const fillMs = await fill(size - onNode);
      process.stderr.write(`node-size bench: ${size} pods on the node (fill ${(fillMs / 1000).toFixed(1)} s)\n`);
      for (let i = 0; i < WARMUP; i++) {
        await addDel(confs.audit);
        await addDel(confs.noAudit);
        await addDel(staticConf(tmp, fresh));
        hostLocal();
      }
      /** @type {Record<string, number[]>} */
      const t = {
        add: [],
        del: [],
        addNoAudit: [],
        delNoAudit: [],
        addStatic: [],
        delStatic: [],
        hostLocalAdd: [],
        hostLocalDel: [],
      };
      for (let i = 0; i < RUNS; i++) {
        const a = await addDel(confs.audit);
        const b = await addDel(confs.noAudit);
        t.add.push(a.add);
        t.del.push(a.del);
        t.addNoAudit.push(b.add);
        t.delNoAudit.push(b.del);
        const c = await addDel(staticConf(tmp, fresh));
        t.addStatic.push(c.add);
        t.delStatic.push(c.del);
        const h = hostLocal();
        t.hostLocalAdd.push(h.add);
        t.hostLocalDel.push(h.del);
      }
      const calls = {
        audit: await callsOf(confs.audit),
        noAudit: await callsOf(confs.noAudit),
        static: await callsOf(staticConf(tmp, fresh)),
      };
      sizes[size] = {
        fillMs,
        fillPods: size,
        endpoints: (await hcn.enumerateEndpoints()).length,
        timing: Object.fromEntries(Object.entries(t).map(([k, xs]) => [k, summary(xs)])),
        calls,
      };
    }

    // HNS's share: the largest node, every call answered after `ms` (the simulator's latency fault), each API path.
    /** @type {Array<{ path: string, ms: number, add: any, del: any, calls: { add: string[], del: string[] } }>} */
    const hnsShare = [];
    for (const apiPath of API_PATHS) {
      await addDel(staticConf(tmp, fresh, apiPath.extra)); // the path's first verb: its API choice, its handles
      const calls = await callsOf(staticConf(tmp, fresh, apiPath.extra));
      for (const ms of [0, ...LATENCIES]) {
        await sim.control.setLatency('*', ms);
        /** @type {{ add: number[], del: number[] }} */
        const t = { add: [], del: [] };
        for (let i = 0; i < LATENCY_RUNS; i++) {
          const r = await addDel(staticConf(tmp, fresh, apiPath.extra));
          t.add.push(r.add);
          t.del.push(r.del);
        }
        hnsShare.push({ path: apiPath.name, ms, add: summary(t.add), del: summary(t.del), calls });
      }
      await sim.control.setLatency('*', 0);
    }

    const small = sizes[SIZES[0]];
    const large = sizes[SIZES[SIZES.length - 1]];
    const ratios = {
      add: large.timing.add.median / small.timing.add.median,
      addNoAudit: large.timing.addNoAudit.median / small.timing.addNoAudit.median,
      del: large.timing.del.median / small.timing.del.median,
      hostLocalAdd: large.timing.hostLocalAdd.median / small.timing.hostLocalAdd.median,
      hostLocalDel: large.timing.hostLocalDel.median / small.timing.hostLocalDel.median,
      addStatic: large.timing.addStatic.median / small.timing.addStatic.median,
      delStatic: large.timing.delStatic.median / small.timing.delStatic.median,
      // The plugin's own part: what the ADD costs beyond its IPAM's run.
      addOverHostLocal:
        (large.timing.add.median - large.timing.hostLocalAdd.median) /
        (small.timing.add.median - small.timing.hostLocalAdd.median),
    };
    const all = Object.values(sizes).map((s) => s.calls.audit);
    const callsMax = {
      add: Math.max(...all.map((c) => c.add.length)),
      del: Math.max(...all.map((c) => c.del.length)),
    };
    const met = {
      addRatio: ratios.add <= GOALS.addRatio,
      addCalls: callsMax.add <= GOALS.addCalls,
      delCalls: callsMax.del <= GOALS.delCalls,
      delStaticRatio: ratios.delStatic <= GOALS.delStaticRatio,
    };
    return {
      sizes,
      ratios,
      callsMax,
      hnsShare,
      reference: REFERENCE_CALLS,
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
  }
}

/** Ops with their counts, in first-seen order: "HcnOpenNetwork ×2, …". @param {string[]} ops */
function opList(ops) {
  /** @type {Map<string, number>} */
  const n = new Map();
  for (const op of ops) n.set(op, (n.get(op) ?? 0) + 1);
  return [...n].map(([op, k]) => (k > 1 ? `${op} ×${k}` : op)).join(', ');
}

function print(/** @type {any} */ r) {
  const lo = SIZES[0];
  const hi = SIZES[SIZES.length - 1];
  const lines = [
    `node size (${RUNS} runs after ${WARMUP} warm-up per size, wall time per shim run, service path, zero-latency simulator, host-local IPAM; load average ${r.loadavg.map((/** @type {number} */ x) => x.toFixed(2)).join(' ')} on ${r.cpus} CPUs)`,
    '',
    `${'pods on the node'.padEnd(18)}${'command'.padEnd(22)}${'median ms'.padStart(11)}${'p90 ms'.padStart(9)}${'min ms'.padStart(9)}`,
  ];
  const names = {
    add: 'ADD',
    del: 'DEL',
    addNoAudit: 'ADD (audit off)',
    delNoAudit: 'DEL (audit off)',
    addStatic: 'ADD (static IPAM)',
    delStatic: 'DEL (static IPAM)',
    hostLocalAdd: 'host-local ADD alone',
    hostLocalDel: 'host-local DEL alone',
  };
  for (const size of SIZES) {
    const s = r.sizes[size];
    for (const [k, name] of Object.entries(names)) {
      const t = s.timing[k];
      lines.push(
        `${String(size).padEnd(18)}${name.padEnd(22)}${t.median.toFixed(2).padStart(11)}${t.p90.toFixed(2).padStart(9)}${t.min.toFixed(2).padStart(9)}`,
      );
    }
  }
  lines.push('', 'filling the node (real ADDs through the service, "audit": false, ' + `${FILL_PARALLEL} at a time)`);
  for (const size of SIZES)
    lines.push(
      `  to ${size} pods: ${(r.sizes[size].fillMs / 1000).toFixed(1)} s; HNS endpoints then ${r.sizes[size].endpoints}`,
    );
  lines.push('', "HNS calls of one fresh pod (service warm, network exists; the service's calls in the call log)");
  for (const size of SIZES) {
    for (const [k, label] of [
      ['audit', 'audit on'],
      ['noAudit', 'audit off'],
      ['static', 'static IPAM'],
    ]) {
      const c = r.sizes[size].calls[k];
      const head = `  ${size} pods, ${label}:`.padEnd(24);
      lines.push(`${head}ADD ${c.add.length} (${opList(c.add)})`);
      lines.push(`${' '.repeat(24)}DEL ${c.del.length} (${opList(c.del)})`);
    }
  }
  lines.push('');
  const row = (/** @type {string} */ name, /** @type {string} */ value, goal = '') =>
    lines.push(`${name.padEnd(52)}${value.padStart(8)}${goal ? `   ${goal}` : ''}`);
  const verdict = (/** @type {boolean} */ ok) => (ok ? 'met' : 'MISSED');
  row(
    `ADD median, ${hi} ÷ ${lo} pods`,
    r.ratios.add.toFixed(2),
    `goal ≤ ${r.goals.addRatio} ${verdict(r.met.addRatio)}`,
  );
  row(`ADD median, ${hi} ÷ ${lo} pods, audit off`, r.ratios.addNoAudit.toFixed(2));
  row(`DEL median, ${hi} ÷ ${lo} pods`, r.ratios.del.toFixed(2));
  row(
    `host-local alone, ADD / DEL median, ${hi} ÷ ${lo}`,
    `${r.ratios.hostLocalAdd.toFixed(2)} / ${r.ratios.hostLocalDel.toFixed(2)}`,
  );
  row(`ADD median minus host-local's ADD, ${hi} ÷ ${lo}`, r.ratios.addOverHostLocal.toFixed(2));
  row(
    `ADD median with static IPAM, ${hi} ÷ ${lo}`,
    r.ratios.addStatic.toFixed(2),
    `goal ≤ ${GOALS.addRatio} ${verdict(r.ratios.addStatic <= GOALS.addRatio)}`,
  );
  for (const size of SIZES) {
    const t = r.sizes[size].timing;
    const share = t.add.median - t.addNoAudit.median;
    row(
      `the audit's share of the ADD median at ${size} pods`,
      `${share.toFixed(2)} ms`,
      `${((share / t.add.median) * 100).toFixed(0)} %`,
    );
  }
  row(
    `DEL median with static IPAM, ${hi} ÷ ${lo}`,
    r.ratios.delStatic.toFixed(2),
    `goal ≤ ${GOALS.delStaticRatio} ${verdict(r.met.delStaticRatio)}`,
  );
  row(
    'HNS calls per ADD (most at any size, audit on)',
    String(r.callsMax.add),
    `goal ≤ ${r.goals.addCalls} ${verdict(r.met.addCalls)}`,
  );
  row(
    'HNS calls per DEL (most at any size, audit on)',
    String(r.callsMax.del),
    `goal ≤ ${r.goals.delCalls} ${verdict(r.met.delCalls)}`,
  );
  lines.push(
    '',
    `HNS's share (${hi} pods, static IPAM, every HNS call answered after the latency: an assumption, see the header), per API path`,
    `${'path'.padEnd(8)}${'latency per call'.padEnd(18)}${'ADD median'.padStart(11)}${'DEL median'.padStart(11)}` +
      `${'ADD+DEL calls × latency'.padStart(26)}${`${r.reference.plugin}: ${r.reference.add}+${r.reference.del} calls × latency`.padStart(46)}`,
  );
  for (const x of r.hnsShare)
    lines.push(
      `${x.path.padEnd(8)}${`${x.ms} ms`.padEnd(18)}${x.add.median.toFixed(2).padStart(11)}${x.del.median.toFixed(2).padStart(11)}` +
        `${`${x.calls.add.length}+${x.calls.del.length} → ${((x.calls.add.length + x.calls.del.length) * x.ms).toFixed(0)} ms`.padStart(26)}` +
        `${`${((r.reference.add + r.reference.del) * x.ms).toFixed(0)} ms`.padStart(46)}`,
    );
  for (const p of API_PATHS) {
    const c = r.hnsShare.find((/** @type {any} */ x) => x.path === p.name).calls;
    lines.push(`  ${p.name} calls: ADD ${c.add.length} (${opList(c.add)}); DEL ${c.del.length} (${opList(c.del)})`);
  }
  lines.push(`BENCH_JSON ${JSON.stringify({ bench: 'node-size', ...r })}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

module.exports = { run, print };

runIfMain(module, 'node-size', () => run().then(print));
