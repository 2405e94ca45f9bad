#!/usr/bin/env node
// @ts-check
/**
 * The leak audit's cost inside ADD, as HNS fills up: ADD latency (bridge mode, zero-latency simulator, in process)
 * with the audit on and off, and the audit's own duration, with 0, 20 networks + 250 endpoints, 1 000 and 5 000
 * objects in HNS. The objects are the mix a busy node has, so every verdict path is timed, not only the cheap one:
 * foreign networks and endpoints (other software's, 40 % of the endpoints), live attachments of ours (50 %: an
 * endpoint in HNS and its committed record), in-flight ADDs (10 %: an endpoint and the live intent of a running
 * process — this one — that planned it, so each costs a process start-time check), and DEL tombstones (one per
 * 10 endpoints; they keep an IPAM release pending, so no audit tidies them away mid-run). Each timed ADD is followed
 * by its DEL, so the mix stays the same from run to run; the audit line of every ADD is checked against it.
 * Durations come from monotonic clocks (process.hrtime, and the audit's own performance.now()).
 * Goal: the audit's share grows linearly and stays ≤ 20 ms at 20 + 250.
 * The last column is the same audit listing through HCN (listNetworksDetailed / listEndpointsDetailed: enumerate,
 * then open/query/close each object) instead of one v1 GET per kind — the reason V2Api lists through v1 when it can.
 * Numbers from one run; nothing is asserted. Output: a table, then `BENCH_JSON {...}`.
 */
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { runIfMain } = require('./common');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const { startSimulator } = require(path.join(DIST, 'sim'));
const { runCni } = require(path.join(DIST, 'run'));
const { PluginRuntime } = require(path.join(DIST, 'plugin', 'runtime'));
const { Hcn } = require(path.join(DIST, 'hns', 'hcn'));
const { hostOs } = require(path.join(DIST, 'hns', 'host-os'));
const { endpointName } = require(path.join(DIST, 'orphans', 'ownership'));
const { StateStore } = require(path.join(DIST, 'state', 'store'));

const RUNS = Number(process.env.BENCH_RUNS || 15);
/** BENCH_AUDIT_SIZES=20+250,1000 measures only those sizes (the 5 000-object set-up takes minutes: records are fsynced). */
const ONLY = process.env.BENCH_AUDIT_SIZES?.split(',').map((x) => x.trim());
const ALL_SIZES = [
  { label: '0', networks: 0, endpoints: 0 },
  { label: '20 + 250', networks: 20, endpoints: 250 },
  { label: '1 000', networks: 80, endpoints: 920 },
  { label: '5 000', networks: 400, endpoints: 4600 },
];
const SIZES = ONLY
  ? ALL_SIZES.filter((z) => ONLY.includes(z.label.replace(/[ +]+/g, (m) => (m.includes('+') ? '+' : ''))))
  : ALL_SIZES;

/** @param {number[]} xs */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Records the audit's own "audit done" line: its duration, and its verdict counts in `counts` (the last one). */
function recorder(out, counts = {}) {
  const log = {
    trace() {},
    debug() {},
    info(obj) {
      if (obj && obj.audit === 'summary') {
        out.push(obj.durationMs);
        for (const k of ['foreign', 'live', 'in-flight', 'protected', 'orphan']) counts[k] = obj[k];
      }
    },
    warn() {},
    error() {},
    child() {
      return log;
    },
  };
  return log;
}

/** Fills HNS with foreign networks (each with foreign endpoints) and returns how many endpoints are left for ours. */
async function populateForeign(hcn, size, foreignEndpoints) {
  const per = size.networks ? Math.floor(foreignEndpoints / size.networks) : 0;
  let left = foreignEndpoints;
  for (let n = 0; n < size.networks; n++) {
    // Each network its own MAC pool: the default pool has 4 096 addresses, fewer than the 5 000-object host needs.
    const hex = (b) => b.toString(16).toUpperCase().padStart(2, '0');
    const mac = `00-16-${hex(n >> 8)}-${hex(n & 255)}`;
    const net = await hcn.createNetwork({
      Name: `ext-${n}`,
      Type: 'NAT',
      MacPool: { Ranges: [{ StartMacAddress: `${mac}-00-00`, EndMacAddress: `${mac}-0F-FF` }] },
      Ipams: [{ Type: 'Static', Subnets: [{ IpAddressPrefix: `10.${100 + (n >> 8)}.${n & 255}.0/24` }] }],
    });
    const count = n === size.networks - 1 ? left : Math.min(per, left);
    for (let e = 0; e < count; e++) await hcn.createEndpoint(net.ID, { Name: `docker-${n}-${e}` });
    left -= count;
  }
}

/**
 * Ours, in the bridge network the warm-up ADD created: committed attachments (endpoint + record), in-flight ADDs
 * (endpoint + this process's live intent), and tombstones of DELs. Written straight to HNS and the state directory:
 * thousands of real ADDs would each audit the growing population (quadratic set-up).
 */
async function populateOurs(hcn, store, bridge, mix) {
  const startTime = hostOs().processStartTime(process.pid);
  const now = Date.now();
  for (let i = 0; i < mix.live; i++) {
    const owner = { containerId: `live-${i}`, ifname: 'eth0' };
    const ep = await hcn.createEndpoint(bridge.ID, { Name: endpointName(owner) });
    await store.commitAttachment({
      kind: 'attachment',
      schema: 1,
      ...owner,
      cniNetwork: 'cbr0',
      netns: crypto.randomUUID(),
      mode: 'bridge',
      apiVersion: 2,
      network: { id: bridge.ID, name: bridge.Name, owned: false },
      endpoint: { id: ep.ID, name: ep.Name, owned: true },
      ipamAllocated: false,
      attach: { kind: 'namespace', target: crypto.randomUUID() },
      result: {},
      createdAt: now,
    });
  }
  for (let i = 0; i < mix.inFlight; i++) {
    const owner = { containerId: `adding-${i}`, ifname: 'eth0' };
    const id = crypto.randomUUID();
    await store.writeIntent({
      kind: 'intent',
      schema: 1,
      id: crypto.randomUUID(),
      ...owner,
      cniNetwork: 'cbr0',
      planned: [{ kind: 'endpoint', name: endpointName(owner), id }],
      pid: process.pid,
      pidStartTime: startTime,
      createdAt: now,
      deadline: now + 3_600_000,
    });
    await hcn.createEndpoint(bridge.ID, { Name: endpointName(owner) }, id);
  }
  for (let i = 0; i < mix.tombstones; i++) {
    await store.tombstone({ containerId: `deleted-${i}`, ifname: 'eth0' }, 'DEL could not delete', {
      cniNetwork: 'cbr0',
      ipamPending: true,
    });
  }
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-audit-'));
  const sim = await startSimulator({ logLevel: 'warn' });
  process.env.HCN_SIM = sim.address;
  const hcn = Hcn.open();
  const results = [];
  try {
    for (const size of SIZES) {
      await sim.control.reset();
      const p0 = process.hrtime.bigint();
      const stateDir = path.join(tmp, `state-${size.networks}`);
      const foreignEndpoints = Math.round(size.endpoints * 0.4);
      const mix = { live: Math.round(size.endpoints * 0.5), inFlight: 0, tombstones: Math.round(size.endpoints * 0.1) };
      mix.inFlight = size.endpoints - foreignEndpoints - mix.live;
      await populateForeign(hcn, size, foreignEndpoints);
      const conf = (audit) =>
        JSON.stringify({
          cniVersion: '1.0.0',
          name: 'cbr0',
          type: 'hcn-cni',
          createNetwork: true,
          subnet: '10.244.0.0/16',
          stateDir,
          audit,
        });
      const rt = new PluginRuntime({ pid: process.pid });
      const rtHcn = new PluginRuntime({ pid: process.pid, listing: 'hcn' });
      const one = async (audit, audits, runtime = rt, counts = {}) => {
        const ns = crypto.randomUUID();
        await hcn.createNamespace({}, ns);
        const env = {
          CNI_COMMAND: 'ADD',
          CNI_CONTAINERID: `bench-${crypto.randomBytes(4).toString('hex')}`,
          CNI_IFNAME: 'eth0',
          CNI_NETNS: ns,
          CNI_PATH: '/usr/lib/cni',
        };
        const t0 = process.hrtime.bigint();
        const r = await runCni({ env, stdin: conf(audit), runtime, createLogger: () => recorder(audits, counts) });
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (r.exitCode !== 0) throw new Error(`ADD failed: ${r.stdout}`);
        await runCni({
          env: { ...env, CNI_COMMAND: 'DEL' },
          stdin: conf(audit),
          runtime,
          createLogger: () => recorder([]),
        });
        return ms;
      };
      // Warm-up (the first ADD creates the bridge network and loads everything); then ours, in that network.
      for (let i = 0; i < 3; i++) await one(true, []);
      const bridge = (await hcn.listNetworks({ Name: 'cbr0' }))[0];
      await populateOurs(hcn, new StateStore(stateDir, { os: hostOs() }), bridge, mix);
      process.stderr.write(
        `populated ${size.label} in ${(Number(process.hrtime.bigint() - p0) / 1e6).toFixed(0)} ms\n`,
      );
      const counts = {};
      await one(true, [], rt, counts);
      // Everything of ours is judged as populated (the timed pod itself is created after the audit).
      const want = {
        foreign: size.networks + 1 + foreignEndpoints,
        live: mix.live,
        'in-flight': mix.inFlight,
        protected: 0,
        orphan: 0,
      };
      if (JSON.stringify(counts) !== JSON.stringify(want))
        throw new Error(`audit verdicts ${JSON.stringify(counts)}, expected ${JSON.stringify(want)}`);
      const on = [];
      const off = [];
      const audits = [];
      const hcnAudits = [];
      for (let i = 0; i < RUNS; i++) {
        on.push(await one(true, audits));
        off.push(await one(false, []));
        // The same audit listing through HCN (enumerate + open/query/close each) instead of one v1 GET per kind.
        if (size.networks + size.endpoints <= 1000 || i < 3) await one(true, hcnAudits, rtHcn);
      }
      const objects = (await sim.control.stats()).counts;
      results.push({
        size: size.label,
        networks: objects.networks,
        endpoints: objects.endpoints,
        mix: { foreign: want.foreign, ...mix },
        addOn: median(on),
        addOff: median(off),
        audit: median(audits),
        auditHcn: median(hcnAudits),
      });
    }
  } finally {
    await sim.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(
    `ADD latency (median of ${RUNS}) with the audit on and off; zero-latency simulator; ${os.cpus().length} CPUs, node ${process.version}`,
  );
  const rows = [
    [
      'objects in HNS',
      'networks',
      'endpoints',
      'foreign / live / in-flight / tombstones',
      'ADD, audit on ms',
      'ADD, audit off ms',
      'audit ms',
      'audit µs / object',
      'audit via HCN listing ms',
    ],
  ];
  for (const r of results) {
    const n = r.networks + r.endpoints;
    rows.push([
      r.size,
      String(r.networks),
      String(r.endpoints),
      `${r.mix.foreign} / ${r.mix.live} / ${r.mix.inFlight} / ${r.mix.tombstones}`,
      r.addOn.toFixed(1),
      r.addOff.toFixed(1),
      r.audit.toFixed(1),
      n ? ((r.audit * 1000) / n).toFixed(1) : '-',
      r.auditHcn.toFixed(1),
    ]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const r of rows) console.log(r.map((v, c) => v.padEnd(widths[c])).join('  '));
  console.log(`BENCH_JSON ${JSON.stringify({ bench: 'audit', runs: RUNS, results })}`);
}

runIfMain(module, 'audit', main);
