#!/usr/bin/env node
// @ts-check
/**
 * How soon the resident service (`hcn-cni serve`) repairs the pods an HNS restart took, on the simulator: from HNS
 * answering again (the end of `ctl restart --downMs`) to the service's status counting every recorded pod repaired.
 *
 *   notification   HNS's service notifications (the default where the host has them; docs/hns-restart.md)
 *   probe          --no-hns-notifications: the agent's probe at its default interval (5 s), which sees only a
 *                  restart that is down when it asks; a shorter one waits for auditIntervalSeconds (here 3600 s)
 *
 * Without either (probe 0, no notifications) nothing notices until auditIntervalSeconds (here 3600 s): not measured,
 * test/service/node-agent.test.ts shows the notification is what repairs then.
 * Each case: a fresh service, BENCH_PODS pods (default 10) ADDed through the shim with repair: true, then BENCH_RUNS
 * restarts (default 5) of BENCH_DOWN_MS (default 500; the probe also with 6000). The status is read every 5 ms. Numbers from one run; nothing
 * is asserted. Output: a table, then `BENCH_JSON {...}`.
 */
'use strict';

const { spawn, spawnSync } = require('child_process');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { answers, deployedBin, EXE, podConf, quantile, requireServiceBuild, runIfMain, simEnv } = require('./common');

const DIST = path.join(__dirname, '..', 'dist');
const PODS = Number(process.env.BENCH_PODS ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const DOWN_MS = Number(process.env.BENCH_DOWN_MS ?? 500);
/** A case not repaired this long after HNS is back is reported as such (it waits for auditIntervalSeconds). */
const GIVE_UP_MS = 30_000;
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/** @param {string} name @param {string[]} serveArgs @param {number} downMs */
async function measure(name, serveArgs, downMs) {
  const { startSimulator } = require(path.join(DIST, 'sim'));
  const { Hcn } = require(path.join(DIST, 'hns', 'hcn'));
  const { queryStatus } = require(path.join(DIST, 'service', 'transport', 'client'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hcn-bench-restart-'));
  const shim = deployedBin(tmp);
  const socket = path.join(tmp, 'run', 'service.sock');
  const sim = await startSimulator({ logLevel: 'warn' });
  process.env.HCN_SIM = sim.address;
  const base = simEnv(tmp, sim.address);
  const service = spawn(EXE, ['serve', '--listen', socket, ...serveArgs], {
    env: base,
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  try {
    for (let i = 0; !(await answers(socket)); i++) {
      if (i > 300 || service.exitCode !== null) throw new Error('the service did not start');
      await sleep(50);
    }
    const hcn = Hcn.open({});
    const conf = podConf(path.join(tmp, 'state'), { repair: true, auditIntervalSeconds: 3600 });
    for (let i = 0; i < PODS; i++) {
      const ns = crypto.randomUUID();
      await hcn.createNamespace({}, ns);
      const env = { ...base, CNI_COMMAND: 'ADD', CNI_CONTAINERID: `pod-${i}`, CNI_IFNAME: 'eth0', CNI_NETNS: ns };
      const r = spawnSync(shim, [], {
        env: { ...env, CNI_PATH: '/usr/lib/cni', HCN_CNI_SERVICE: socket },
        input: conf,
      });
      if (r.status !== 0) throw new Error(`ADD pod-${i}: ${r.stdout}${r.stderr}`);
    }
    const repaired = async () => (await queryStatus(socket)).tally.repairs.repaired ?? 0;
    // The agent's first audit of the directory, before the first restart.
    while ((await queryStatus(socket)).agent.audits < 1) await sleep(20);
    /** @type {number[]} */
    const ms = [];
    for (let run = 1; run <= RUNS; run++) {
      // The simulator runs in this process: HNS answers again DOWN_MS after the restart began (taken just before it,
      // so the figure errs long by the control call's round trip).
      const back = Date.now() + downMs;
      await sim.control.restart({ downMs });
      while ((await repaired()) < run * PODS && Date.now() - back < GIVE_UP_MS) await sleep(5);
      if ((await repaired()) < run * PODS) return { name, ms, unrepaired: true };
      ms.push(Date.now() - back);
    }
    return { name, ms, unrepaired: false };
  } finally {
    service.kill('SIGTERM');
    await new Promise((r) => (service.exitCode !== null ? r(undefined) : service.once('exit', r)));
    await sim.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

async function run() {
  requireServiceBuild();
  console.log(`HNS back (ctl restart --downMs D) → all ${PODS} recorded pods repaired, ${RUNS} restarts each:`);
  console.log(`  ${'case'.padEnd(34)}${'D'.padStart(7)}${'median'.padStart(10)}${'max'.padStart(10)}   each (ms)`);
  const results = [];
  for (const [name, args, downMs] of /** @type {[string, string[], number][]} */ ([
    ['notification', [], DOWN_MS],
    ['probe every 5 s, no notification', ['--no-hns-notifications'], DOWN_MS],
    // Down longer than the probe's interval: the probe sees it, and the recovery follows at the agent's next tick.
    ['probe every 5 s, no notification', ['--no-hns-notifications'], 6000],
  ])) {
    const r = await measure(name, args, downMs);
    results.push({ ...r, downMs });
    const tail = r.unrepaired ? `   restart ${r.ms.length + 1}: not repaired within ${GIVE_UP_MS / 1000} s` : '';
    const median = r.ms.length ? `${Math.round(quantile(r.ms, 0.5))} ms` : '-';
    const max = r.ms.length ? `${Math.max(...r.ms)} ms` : '-';
    console.log(
      `  ${name.padEnd(34)}${String(downMs).padStart(7)}${median.padStart(10)}${max.padStart(10)}   ${r.ms.join(' ')}${tail}`,
    );
  }
  console.log(`BENCH_JSON ${JSON.stringify({ pods: PODS, results })}`);
}

module.exports = { run };
runIfMain(module, 'hns-restart', run);
