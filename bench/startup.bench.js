#!/usr/bin/env node
// @ts-check
/**
 * Startup cost of the packaged plugin, measured like hyperfine -N: each command is spawned (no shell) WARMUP times,
 * then RUNS times; wall time per spawn; median and p90.
 *
 *   node -e 0                          the floor: starting this node at all
 *   dist/hcn-cni  VERSION              the executable, nothing but the answer
 *   node dist/hcn-cni.cni.bundle.js VERSION  the executable's main script outside it (docs/building.md, "Packaging")
 *   dist/hcn-cni  ADD (bridge mode)    against a zero-latency simulator (unix socket); each ADD is followed by an
 *                                      untimed DEL so every ADD does the same work
 *
 * Goals: VERSION / node -e 0 <= 1.10, ADD / node -e 0 <= 1.5.
 * Needs: npm run build:ts (the simulator) and npm run package (dist/hcn-cni; built here with --if-stale if missing).
 * Env: BENCH_EXE / BENCH_BUNDLE (measure other builds; no packaging then), BENCH_RUNS (default 30), BENCH_WARMUP
 *      (default 5), BENCH_CPU_PROF=dir (also run one ADD and one VERSION of the bundle with --cpu-prof into dir),
 *      BENCH_CLOCK=cpu (measure the CPU time, user + sys, each spawn used instead of its wall time: bash's `times`
 *      reports its children's getrusage in ms; on a machine busy with other work, CPU time is disturbed far less
 *      than wall time, though it leaves out what the process waits for — fsync, HNS round trips).
 */
'use strict';

const { spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { podConf, quantile, runIfMain } = require('./common');

const ROOT = path.resolve(__dirname, '..');
const EXE = process.env.BENCH_EXE ? path.resolve(process.env.BENCH_EXE) : path.join(ROOT, 'dist', 'hcn-cni');
const BUNDLE = process.env.BENCH_BUNDLE
  ? path.resolve(process.env.BENCH_BUNDLE)
  : path.join(ROOT, 'dist', 'hcn-cni.cni.bundle.js');
const RUNS = Number(process.env.BENCH_RUNS || 30);
const WARMUP = Number(process.env.BENCH_WARMUP || 5);
const GOALS = { version: 1.1, add: 1.5 };
const CPU_CLOCK = process.env.BENCH_CLOCK === 'cpu';

/**
 * @typedef {{ name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv, input?: string,
 *   after?: () => void, check?: (r: import('child_process').SpawnSyncReturns<Buffer>) => void }} Case
 */

/** One spawn of a case, timed; `after` (untimed) resets state, e.g. the DEL after an ADD. @param {Case} c */
function once(c) {
  const t0 = process.hrtime.bigint();
  const r = CPU_CLOCK
    ? spawnSync('bash', ['-c', '"$@"; s=$?; times >&2; exit $s', 'bash', c.cmd, ...c.args], {
        env: c.env,
        input: c.input ?? '',
        stdio: ['pipe', 'pipe', 'pipe'],
      })
    : spawnSync(c.cmd, c.args, { env: c.env, input: c.input ?? '', stdio: ['pipe', 'pipe', 'pipe'] });
  let ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (CPU_CLOCK) {
    // `times`: the shell's own user/sys, then its children's (the command's) — "0m0.021s 0m0.004s".
    const children = String(r.stderr).trim().split('\n').at(-1) ?? '';
    const secs = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
    if (secs.length !== 2) throw new Error(`${c.name}: no CPU times in ${JSON.stringify(children)}`);
    ms = (secs[0] + secs[1]) * 1000;
  }
  if (r.status !== 0) throw new Error(`${c.name}: exited ${r.status ?? r.signal}: ${r.stdout}${r.stderr}`);
  c.check?.(r);
  c.after?.();
  return ms;
}

/**
 * Runs the cases round-robin (one spawn of each per round), so load from other processes on this machine spreads
 * evenly over all commands instead of skewing whichever ran during a busy second.
 * @param {Case[]} cases
 */
function measureInterleaved(cases) {
  for (let i = 0; i < WARMUP; i++) for (const c of cases) once(c);
  /** @type {number[][]} */
  const times = cases.map(() => []);
  for (let i = 0; i < RUNS; i++) cases.forEach((c, j) => times[j].push(once(c)));
  /** @type {Record<string, {median: number, p90: number, min: number, runs: number}>} */
  const out = {};
  cases.forEach((c, j) => {
    out[c.name] = {
      median: quantile(times[j], 0.5),
      p90: quantile(times[j], 0.9),
      min: Math.min(...times[j]),
      runs: RUNS,
    };
  });
  return out;
}

function ensurePackage() {
  const r = spawnSync(
    process.execPath,
    [path.join(ROOT, 'scripts', 'package.js'), '--target', 'linux', '--if-stale', '--quiet'],
    { stdio: 'inherit' },
  );
  if (r.status !== 0) throw new Error('scripts/package.js failed');
}

async function run() {
  if (!process.env.BENCH_EXE) ensurePackage();
  const { startSimulator } = require(path.join(ROOT, 'dist', 'sim'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-bench-startup-'));
  const sim = await startSimulator({ logLevel: 'warn' });
  /** @type {Record<string, {median: number, p90: number, min: number, runs: number}>} */
  let results;
  try {
    // A minimal environment, as a runtime gives its plugins. (NODE_EXTRA_CA_CERTS alone adds ~50 ms to every node start.)
    const baseEnv = { PATH: process.env.PATH, TMPDIR: tmp, HCN_SIM: sim.address };
    const versionEnv = { ...baseEnv, CNI_COMMAND: 'VERSION' };

    // One HCN namespace for the pod; the executable itself creates the network on the first (warm-up) ADD.
    const ns = crypto.randomUUID();
    process.env.HCN_SIM = sim.address;
    const { Hcn } = require(path.join(ROOT, 'dist', 'hns', 'hcn'));
    await Hcn.open({}).createNamespace({}, ns);
    const conf = podConf(path.join(tmp, 'state'));
    /** @param {string} verb */
    const cniEnv = (verb) => ({
      ...baseEnv,
      CNI_COMMAND: verb,
      CNI_CONTAINERID: 'bench-pod',
      CNI_IFNAME: 'eth0',
      CNI_NETNS: ns,
      CNI_PATH: '/usr/lib/cni',
    });
    const del = () => {
      const r = spawnSync(EXE, [], { env: cniEnv('DEL'), input: conf });
      if (r.status !== 0) throw new Error(`DEL failed: ${r.stdout}${r.stderr}`);
    };
    results = measureInterleaved([
      { name: 'node -e 0', cmd: process.execPath, args: ['-e', '0'], env: baseEnv },
      { name: 'hcn-cni VERSION', cmd: EXE, args: [], env: versionEnv },
      { name: 'node bundle VERSION', cmd: process.execPath, args: [BUNDLE], env: versionEnv },
      {
        name: 'hcn-cni ADD',
        cmd: EXE,
        args: [],
        env: cniEnv('ADD'),
        input: conf,
        after: del,
        check: (r) => {
          if (!/"ips"/.test(String(r.stdout))) throw new Error(`ADD printed no result: ${r.stdout}`);
        },
      },
    ]);

    if (process.env.BENCH_CPU_PROF) {
      const dir = path.resolve(process.env.BENCH_CPU_PROF);
      fs.mkdirSync(dir, { recursive: true });
      // The CLI ends with the addon's exitNow (an immediate _exit), which would skip writing the profile.
      const preload = path.join(tmp, 'no-exit-now.js');
      fs.writeFileSync(
        preload,
        'const o = process.dlopen; process.dlopen = function (m, ...a) { const r = o.call(this, m, ...a); if (m.exports && m.exports.exitNow) m.exports.exitNow = (c) => process.exit(c); return r; };\n',
      );
      const prof = (name) => [
        '-r',
        preload,
        '--cpu-prof',
        '--cpu-prof-dir',
        dir,
        '--cpu-prof-interval',
        '200',
        '--cpu-prof-name',
        name,
        BUNDLE,
      ];
      spawnSync(process.execPath, prof('version.cpuprofile'), { env: versionEnv });
      spawnSync(process.execPath, prof('add.cpuprofile'), { env: cniEnv('ADD'), input: conf });
      del();
      process.stderr.write(`startup bench: CPU profiles of the bundle's VERSION and ADD in ${dir}\n`);
    }
  } finally {
    await sim.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const base = results['node -e 0'].median;
  const ratios = {
    'VERSION / node -e 0': results['hcn-cni VERSION'].median / base,
    'bundle VERSION / node -e 0': results['node bundle VERSION'].median / base,
    'ADD / node -e 0': results['hcn-cni ADD'].median / base,
  };
  const verdict = {
    version: ratios['VERSION / node -e 0'] <= GOALS.version,
    add: ratios['ADD / node -e 0'] <= GOALS.add,
  };
  return { results, ratios, goals: GOALS, met: verdict };
}

function print(report) {
  const lines = [
    `startup (${RUNS} runs after ${WARMUP} warm-up, ${CPU_CLOCK ? 'CPU time (user + sys)' : 'wall time'} per spawn, commands interleaved)`,
    '',
  ];
  lines.push(`${'command'.padEnd(24)}${'median ms'.padStart(11)}${'p90 ms'.padStart(9)}${'min ms'.padStart(9)}`);
  for (const [name, r] of Object.entries(report.results)) {
    lines.push(
      `${name.padEnd(24)}${r.median.toFixed(1).padStart(11)}${r.p90.toFixed(1).padStart(9)}${r.min.toFixed(1).padStart(9)}`,
    );
  }
  lines.push('');
  for (const [name, v] of Object.entries(report.ratios)) lines.push(`${name.padEnd(28)}${v.toFixed(2)}`);
  lines.push(
    `goal VERSION <= ${report.goals.version}: ${report.met.version ? 'met' : 'MISSED'}; goal ADD <= ${report.goals.add}: ${report.met.add ? 'met' : 'MISSED'}`,
  );
  lines.push(`BENCH_JSON ${JSON.stringify({ bench: 'startup', clock: CPU_CLOCK ? 'cpu' : 'wall', ...report })}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

module.exports = { run, print };

runIfMain(module, 'startup', () => run().then(print));
