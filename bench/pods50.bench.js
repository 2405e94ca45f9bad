#!/usr/bin/env node
// @ts-check
/**
 * 50 pods added in parallel against the simulator with realistic per-call latency: makespan ÷ the simulator's busy
 * time. HNS serialises its mutations, so the busy time is a floor for the makespan; a ratio near 1 means the plugin
 * keeps HNS busy all the time — no state lock held across HNS calls, no needless serialisation of its own.
 * (Goal: ≤ 1.2.)
 *
 * Two runs:
 *  - in process: 50 concurrent runCni ADDs in one Node process (the plugin's own concurrency, no process start-up);
 *  - as processes: 50 `node dist/cli/hcn-cni.js` ADDs started at once, as a runtime would (start-up cost of 50 Node
 *    processes on this machine's cores included).
 * Latencies (ms): every call 2 (reads), HcnCreateEndpoint 60, HcnModifyNamespace 20, HcnDeleteEndpoint 30,
 * HNSCall attach 20. Bridge mode, HCN namespaces created up front (the runtime's job), the audit on.
 * Numbers from one run; nothing is asserted. Output: a table, then `BENCH_JSON {...}`.
 */
'use strict';

const { spawn } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { POD_LATENCY, podsConf, runIfMain } = require('./common');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const { startSimulator } = require(path.join(DIST, 'sim'));
const { runCni } = require(path.join(DIST, 'run'));
const { PluginRuntime } = require(path.join(DIST, 'plugin', 'runtime'));

const PODS = Number(process.env.BENCH_PODS || 50);
const LATENCY = POD_LATENCY;
const { silentLogger: silent } = require(path.join(DIST, 'log', 'logger'));

/** CPU seconds spent by this process's reaped children (Linux /proc/self/stat cutime + cstime). */
function childCpuSeconds() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return NaN;
  }
}

/** The packaged executable when `npm run package` built it, else the compiled CLI. */
function cliCommand() {
  const exe = path.join(DIST, 'hcn-cni');
  return fs.existsSync(exe)
    ? { file: exe, args: [], label: 'dist/hcn-cni (single executable)' }
    : { file: process.execPath, args: [path.join(DIST, 'cli', 'hcn-cni.js')], label: 'node dist/cli/hcn-cni.js' };
}

/** @param {string} sim @param {string} verb @param {string} id @param {string} netns */
function env(sim, verb, id, netns) {
  return {
    CNI_COMMAND: verb,
    CNI_CONTAINERID: id,
    CNI_IFNAME: 'eth0',
    CNI_NETNS: netns,
    CNI_PATH: '/usr/lib/cni',
    HCN_SIM: sim,
    PATH: process.env.PATH,
  };
}

/** @param {import('../dist/sim').RunningSimulator} sim */
async function namespaces(sim, n) {
  const { Hcn } = require(path.join(DIST, 'hns', 'hcn'));
  const hcn = Hcn.open();
  const ids = [];
  for (let i = 0; i < n; i++) {
    const id = crypto.randomUUID();
    await hcn.createNamespace({}, id);
    ids.push(id);
  }
  void sim;
  return ids;
}

/**
 * @param {import('../dist/sim').RunningSimulator} sim
 * @param {string} stateDir
 * @param {(i: number, ns: string) => Promise<number>} add
 */
async function round(sim, stateDir, add) {
  await sim.control.reset();
  await sim.control.setLatency('*', 0);
  // Warm: the shared network exists, the addon is loaded; then realistic latency for the measured round.
  const rt = new PluginRuntime({ pid: process.pid });
  const warmNs = (await namespaces(sim, 1))[0];
  await runCni({
    env: env(sim.address, 'ADD', 'warm', warmNs),
    stdin: podsConf(stateDir),
    runtime: rt,
    createLogger: () => silent,
  });
  const ns = await namespaces(sim, PODS);
  for (const [op, ms] of Object.entries(LATENCY)) await sim.control.setLatency(op, ms);
  const before = await sim.control.stats();
  const t0 = process.hrtime.bigint();
  const codes = await Promise.all(ns.map((n, i) => add(i, n)));
  const makespan = Number(process.hrtime.bigint() - t0) / 1e6;
  await sim.control.waitIdle();
  const after = await sim.control.stats();
  const busy = after.busyMs - before.busyMs;
  const mutations = ['HcnCreateEndpoint', 'HcnModifyNamespace'].reduce(
    (s, op) => s + ((after.calls[op] ?? 0) - (before.calls[op] ?? 0)) * LATENCY[op],
    0,
  );
  return { ok: codes.filter((c) => c === 0).length, makespan, busy, mutationMs: mutations, ratio: makespan / busy };
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-pods-'));
  const sim = await startSimulator({ logLevel: 'warn' });
  process.env.HCN_SIM = sim.address;
  try {
    const inProcessDir = path.join(tmp, 'state-a');
    const rt = new PluginRuntime({ pid: process.pid });
    const inProcess = await round(sim, inProcessDir, async (i, ns) => {
      const r = await runCni({
        env: env(sim.address, 'ADD', `pod-${i}`, ns),
        stdin: podsConf(inProcessDir),
        runtime: rt,
        createLogger: () => silent,
      });
      return r.exitCode;
    });
    const procDir = path.join(tmp, 'state-b');
    const cli = cliCommand();
    const cpu0 = childCpuSeconds();
    const processes = await round(
      sim,
      procDir,
      (i, ns) =>
        new Promise((resolve) => {
          const child = spawn(cli.file, cli.args, {
            env: { ...env(sim.address, 'ADD', `pod-${i}`, ns) },
            stdio: ['pipe', 'ignore', 'ignore'],
          });
          child.on('close', (code) => resolve(code ?? -1));
          child.stdin.end(podsConf(procDir, { logLevel: 'silent' }));
        }),
    );
    const childCpu = childCpuSeconds() - cpu0;
    const rows = [
      ['run', 'ADDs ok', 'makespan ms', 'sim busy ms', 'serial mutation ms', 'makespan ÷ busy'],
      [
        'in process',
        `${inProcess.ok}/${PODS}`,
        inProcess.makespan.toFixed(0),
        inProcess.busy.toFixed(0),
        String(inProcess.mutationMs),
        inProcess.ratio.toFixed(3),
      ],
      [
        '50 processes',
        `${processes.ok}/${PODS}`,
        processes.makespan.toFixed(0),
        processes.busy.toFixed(0),
        String(processes.mutationMs),
        processes.ratio.toFixed(3),
      ],
    ];
    const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
    console.log(
      `${PODS} pods in parallel, bridge mode, latencies ${JSON.stringify(LATENCY)}; ${os.cpus().length} CPUs, node ${process.version}`,
    );
    for (const r of rows) console.log(r.map((v, c) => v.padEnd(widths[c])).join('  '));
    console.log(
      `processes: ${cli.label}; their CPU time ${childCpu.toFixed(1)} s in all (${((childCpu / PODS) * 1000).toFixed(0)} ms each) on ${os.cpus().length} CPUs`,
    );
    console.log(
      `BENCH_JSON ${JSON.stringify({ bench: 'pods50', pods: PODS, latency: LATENCY, inProcess, processes: { ...processes, cli: cli.label, childCpuSeconds: childCpu }, cpus: os.cpus().length })}`,
    );
  } finally {
    await sim.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

runIfMain(module, 'pods50', main);
