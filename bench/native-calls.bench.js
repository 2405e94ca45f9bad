#!/usr/bin/env node
// @ts-check
/**
 * Cost of one call through the real stack: hcn.node (worker thread) → libhcnsim.so (C ABI, UTF-16 ↔ UTF-8, one
 * unix-socket connection per HCN function) → hcn-sim (zero latency) and back.
 *
 * 1. Latency of single calls, sequential, after warm-up: p50 / p99 / mean / calls per second for
 *      native getNetworkProperties   HcnOpenNetwork + HcnQueryNetworkProperties + HcnCloseNetwork (2 wire requests)
 *      native enumerateNetworks      HcnEnumerateNetworks (1 wire request)
 *      Hcn.getNetwork (facade)       the same as the first plus JSON.parse and the timeout race
 *      WireClient query (no addon)   one HcnQueryNetworkProperties request from the TypeScript client: the wire floor
 * 2. With 1 000 networks: listNetworksDetailed (one native call: enumerate + open/query/close each, assembled in
 *    C++) vs the same list from JS (enumerateNetworks + N getNetworkProperties), sequential and with all N in
 *    flight; min and median of BENCH_LIST_RUNS runs; per-object cost; ratios.
 *
 * Numbers and ratios from one run on this machine; nothing is asserted. Needs npm run build:ts and the addon.
 * Env: BENCH_CALLS (default 3000), BENCH_WARMUP (default 300), BENCH_OBJECTS (default 1000), BENCH_LIST_RUNS
 * (default 7). Output: a table, then one line `BENCH_JSON {...}`.
 */
'use strict';

const os = require('os');
const path = require('path');
const { quantile, runIfMain } = require('./common');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const { startSimulator, WireClient } = require(path.join(DIST, 'sim'));
const { loadNative } = require(path.join(DIST, 'hns', 'native'));
const { Hcn } = require(path.join(DIST, 'hns', 'hcn'));

const CALLS = Number(process.env.BENCH_CALLS || 3000);
const WARMUP = Number(process.env.BENCH_WARMUP || 300);
const OBJECTS = Number(process.env.BENCH_OBJECTS || 1000);
const LIST_RUNS = Math.max(5, Number(process.env.BENCH_LIST_RUNS || 7));
const Q2 = JSON.stringify({ SchemaVersion: { Major: 2, Minor: 0 } });

/** @param {number[]} xs */
function summary(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { n: s.length, min: s[0], p50: quantile(s, 0.5), p99: quantile(s, 0.99), max: s[s.length - 1], mean };
}

const now = () => process.hrtime.bigint();
/** @param {bigint} t0 */
const msSince = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

/**
 * Sequential latency of `fn` in ms per call.
 * @param {() => Promise<unknown>} fn
 */
async function latency(fn) {
  for (let i = 0; i < WARMUP; i++) await fn();
  /** @type {number[]} */
  const samples = new Array(CALLS);
  const t0 = now();
  for (let i = 0; i < CALLS; i++) {
    const t = now();
    await fn();
    samples[i] = msSince(t);
  }
  const wall = msSince(t0);
  return { ...summary(samples), callsPerSecond: (CALLS / wall) * 1000 };
}

/**
 * Wall time in ms of `fn`, LIST_RUNS times (after one untimed run).
 * @param {() => Promise<unknown>} fn
 */
async function repeated(fn) {
  await fn();
  /** @type {number[]} */
  const runs = [];
  for (let i = 0; i < LIST_RUNS; i++) {
    const t = now();
    await fn();
    runs.push(msSince(t));
  }
  return summary(runs);
}

const f = (/** @type {number} */ x, d = 3) => x.toFixed(d);

async function main() {
  const sim = await startSimulator({ logLevel: 'warn' });
  process.env.HCN_SIM = sim.address;
  try {
    const loaded = loadNative();
    const native = loaded.native;
    const hcn = new Hcn(native, loaded.capabilities);
    const wire = new WireClient(sim.address);
    if (!loaded.capabilities.v2Supported) throw new Error(`HCN not available: ${JSON.stringify(loaded.capabilities)}`);

    // ---- 1. single-call latency ----
    const probe = JSON.parse(
      await native.createNetwork(
        null,
        JSON.stringify({
          SchemaVersion: { Major: 2, Minor: 0 },
          Name: 'probe',
          Type: 'NAT',
          Ipams: [{ Subnets: [{ IpAddressPrefix: '172.16.0.0/24' }] }],
        }),
        Q2,
      ),
    );
    const id = probe.ID;
    const single = {
      'native getNetworkProperties': { wireRequests: 2, ...(await latency(() => native.getNetworkProperties(id, Q2))) },
      'native enumerateNetworks': { wireRequests: 1, ...(await latency(() => native.enumerateNetworks(Q2))) },
      'Hcn.getNetwork (facade)': { wireRequests: 2, ...(await latency(() => hcn.getNetwork(id))) },
      'WireClient query (no addon)': { wireRequests: 1, ...(await latency(() => wire.queryNetworkProperties(id, Q2))) },
    };

    // ---- 2. 1 000 networks: one native list vs JS enumerate + N gets ----
    await sim.control.reset();
    const createStart = now();
    const BATCH = 64;
    for (let i = 0; i < OBJECTS; i += BATCH) {
      const batch = [];
      for (let j = i; j < Math.min(OBJECTS, i + BATCH); j++) {
        const settings = {
          SchemaVersion: { Major: 2, Minor: 0 },
          Name: `bench-net-${j}`,
          Type: 'NAT',
          Ipams: [
            {
              Type: 'Static',
              Subnets: [
                {
                  IpAddressPrefix: `10.${j >> 8}.${j & 255}.0/24`,
                  Routes: [{ NextHop: `10.${j >> 8}.${j & 255}.1`, DestinationPrefix: '0.0.0.0/0' }],
                },
              ],
            },
          ],
          Dns: { ServerList: ['10.0.0.10'] },
        };
        batch.push(native.createNetwork(null, JSON.stringify(settings), Q2));
      }
      await Promise.all(batch);
    }
    const createMs = msSince(createStart);

    let listBytes = 0;
    const detailed = await repeated(async () => {
      const text = await native.listNetworksDetailed(Q2);
      listBytes = Buffer.byteLength(text);
      return text;
    });
    const jsSequential = await repeated(async () => {
      const ids = JSON.parse(await native.enumerateNetworks(Q2));
      const docs = [];
      for (const x of ids) docs.push(await native.getNetworkProperties(x, Q2));
      return docs;
    });
    const jsParallel = await repeated(async () => {
      const ids = JSON.parse(await native.enumerateNetworks(Q2));
      return Promise.all(ids.map((/** @type {string} */ x) => native.getNetworkProperties(x, Q2)));
    });
    // Same content both ways (a sanity check of what was timed, not an assertion on the numbers).
    const fromList = JSON.parse(await native.listNetworksDetailed(Q2));
    const ids = JSON.parse(await native.enumerateNetworks(Q2));
    const fromJs = await Promise.all(
      ids.map((/** @type {string} */ x) => native.getNetworkProperties(x, Q2).then(JSON.parse)),
    );
    const consistent = fromList.length === OBJECTS && JSON.stringify(fromList) === JSON.stringify(fromJs);

    const stats = native.stats();
    const simStats = await sim.control.stats();

    // ---- report ----
    const cpus = os.cpus();
    const machine = {
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? 'unknown',
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
      memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
      uvThreadpool: Number(process.env.UV_THREADPOOL_SIZE || 4),
      loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    };
    const list = {
      objects: OBJECTS,
      runs: LIST_RUNS,
      listBytes,
      createMs,
      createsPerSecond: (OBJECTS / createMs) * 1000,
      listNetworksDetailed: detailed,
      jsEnumeratePlusGetsSequential: jsSequential,
      jsEnumeratePlusGetsParallel: jsParallel,
      perObjectUs: {
        listNetworksDetailed: (detailed.p50 / OBJECTS) * 1000,
        jsSequential: (jsSequential.p50 / OBJECTS) * 1000,
        jsParallel: (jsParallel.p50 / OBJECTS) * 1000,
      },
      ratio: {
        jsSequentialOverDetailed: jsSequential.p50 / detailed.p50,
        jsParallelOverDetailed: jsParallel.p50 / detailed.p50,
      },
      consistent,
    };

    const line = '-'.repeat(100);
    console.log(
      `machine: ${machine.cpus} x ${machine.cpuModel}, ${machine.memoryGiB} GiB, node ${machine.node} ${machine.platform}, libuv threadpool ${machine.uvThreadpool}, loadavg ${machine.loadavg.join(' ')}`,
    );
    console.log(
      `simulator: zero latency, unix socket; ${CALLS} sequential calls per row after ${WARMUP} warm-up calls`,
    );
    console.log(line);
    console.log(
      `${'single call'.padEnd(32)}${'wire req'.padStart(9)}${'p50 ms'.padStart(10)}${'p99 ms'.padStart(10)}${'mean ms'.padStart(10)}${'max ms'.padStart(10)}${'calls/s'.padStart(11)}`,
    );
    for (const [name, r] of Object.entries(single)) {
      console.log(
        `${name.padEnd(32)}${String(r.wireRequests).padStart(9)}${f(r.p50).padStart(10)}${f(r.p99).padStart(10)}${f(r.mean).padStart(10)}${f(r.max).padStart(10)}${f(r.callsPerSecond, 0).padStart(11)}`,
      );
    }
    console.log(line);
    console.log(
      `${OBJECTS} networks (created in ${f(createMs, 0)} ms, ${f(list.createsPerSecond, 0)} creates/s); list = ${(listBytes / 1024).toFixed(0)} KiB of JSON; ${LIST_RUNS} runs each`,
    );
    console.log(
      `${'list all networks with properties'.padEnd(44)}${'min ms'.padStart(10)}${'median ms'.padStart(11)}${'max ms'.padStart(10)}${'µs/object'.padStart(11)}${'× native'.padStart(10)}`,
    );
    const rows = [
      ['listNetworksDetailed (1 native call)', detailed, 1],
      ['JS: enumerate + N gets, sequential', jsSequential, list.ratio.jsSequentialOverDetailed],
      ['JS: enumerate + N gets, all in flight', jsParallel, list.ratio.jsParallelOverDetailed],
    ];
    for (const [name, r, ratio] of /** @type {Array<[string, ReturnType<typeof summary>, number]>} */ (rows)) {
      console.log(
        `${name.padEnd(44)}${f(r.min, 1).padStart(10)}${f(r.p50, 1).padStart(11)}${f(r.max, 1).padStart(10)}${f((r.p50 / OBJECTS) * 1000, 1).padStart(11)}${f(ratio, 2).padStart(10)}`,
      );
    }
    console.log(`same documents both ways: ${consistent}`);
    console.log(line);
    console.log(
      `native calls this run: ${Object.entries(stats.calls)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${k}=${n}`)
        .join(' ')} frees=${stats.frees}; simulator busy ${f(simStats.busyMs / 1000, 2)} s since the reset`,
    );
    console.log(
      'BENCH_JSON ' + JSON.stringify({ bench: 'native-calls', machine, calls: CALLS, warmup: WARMUP, single, list }),
    );
  } finally {
    await sim.stop();
  }
}

runIfMain(module, 'native-calls', main);
