#!/usr/bin/env node
// @ts-check
/**
 * The leak audit's cost inside ADD, as HNS fills up: ADD latency (bridge mode, zero-latency simulator, in process)
 * with the audit on and off, and the audit's own duration, with 0, 20 networks + 250 endpoints, 1 000 and 5 000
 * objects in HNS. The objects are a realistic mix: foreign networks and endpoints (other software's), and ours
 * (committed attachments). Goal: the audit's share grows linearly and stays ≤ 20 ms at 20 + 250.
 * The last column is the same audit listing through HCN (listNetworksDetailed / listEndpointsDetailed: enumerate,
 * then open/query/close each object) instead of one v1 GET per kind — the reason V2Api lists through v1 when it can.
 * Numbers from one run; nothing is asserted. Output: a table, then `BENCH_JSON {...}`.
 */
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');
const { startSimulator } = require(path.join(DIST, 'sim'));
const { runCni } = require(path.join(DIST, 'run'));
const { PluginRuntime } = require(path.join(DIST, 'plugin', 'runtime'));
const { Hcn } = require(path.join(DIST, 'hns', 'hcn'));

const RUNS = Number(process.env.BENCH_RUNS || 15);
const SIZES = [
  { label: '0', networks: 0, endpoints: 0 },
  { label: '20 + 250', networks: 20, endpoints: 250 },
  { label: '1 000', networks: 80, endpoints: 920 },
  { label: '5 000', networks: 400, endpoints: 4600 },
];

/** @param {number[]} xs */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Records the audit's own "audit done" line. */
function recorder(out) {
  const log = {
    trace() {},
    debug() {},
    info(obj) {
      if (obj && obj.audit === 'summary') out.push(obj.durationMs);
    },
    warn() {},
    error() {},
    child() {
      return log;
    },
  };
  return log;
}

/** Fills HNS with foreign networks (each with endpoints) until the size is reached. */
async function populate(hcn, size) {
  const per = size.networks ? Math.floor(size.endpoints / size.networks) : 0;
  let left = size.endpoints;
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

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-audit-'));
  const sim = await startSimulator({ logLevel: 'warn' });
  process.env.HCN_SIM = sim.address;
  const hcn = Hcn.open();
  const results = [];
  try {
    for (const size of SIZES) {
      await sim.control.reset();
      const p0 = Date.now();
      await populate(hcn, size);
      process.stderr.write(`populated ${size.label} in ${Date.now() - p0} ms\n`);
      const stateDir = path.join(tmp, `state-${size.networks}`);
      const conf = (audit) => JSON.stringify({ cniVersion: '1.0.0', name: 'cbr0', type: 'hcn-cni', createNetwork: true, subnet: '10.244.0.0/16', stateDir, audit });
      const rt = new PluginRuntime({ pid: process.pid });
      const rtHcn = new PluginRuntime({ pid: process.pid, listing: 'hcn' });
      const one = async (audit, audits, runtime = rt) => {
        const ns = crypto.randomUUID();
        await hcn.createNamespace({}, ns);
        const env = { CNI_COMMAND: 'ADD', CNI_CONTAINERID: `bench-${crypto.randomBytes(4).toString('hex')}`, CNI_IFNAME: 'eth0', CNI_NETNS: ns, CNI_PATH: '/usr/lib/cni' };
        const t0 = process.hrtime.bigint();
        const r = await runCni({ env, stdin: conf(audit), runtime, createLogger: () => recorder(audits) });
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (r.exitCode !== 0) throw new Error(`ADD failed: ${r.stdout}`);
        await runCni({ env: { ...env, CNI_COMMAND: 'DEL' }, stdin: conf(audit), runtime, createLogger: () => recorder([]) });
        return ms;
      };
      // Warm-up (first ADD creates the bridge network and loads everything).
      for (let i = 0; i < 3; i++) await one(true, []);
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
      results.push({ size: size.label, networks: objects.networks, endpoints: objects.endpoints, addOn: median(on), addOff: median(off), audit: median(audits), auditHcn: median(hcnAudits) });
    }
  } finally {
    await sim.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`ADD latency (median of ${RUNS}) with the audit on and off; zero-latency simulator; ${os.cpus().length} CPUs, node ${process.version}`);
  const rows = [['objects in HNS', 'networks', 'endpoints', 'ADD, audit on ms', 'ADD, audit off ms', 'audit ms', 'audit µs / object', 'audit via HCN listing ms']];
  for (const r of results) {
    const n = r.networks + r.endpoints;
    rows.push([r.size, String(r.networks), String(r.endpoints), r.addOn.toFixed(1), r.addOff.toFixed(1), r.audit.toFixed(1), n ? ((r.audit * 1000) / n).toFixed(1) : '-', r.auditHcn.toFixed(1)]);
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const r of rows) console.log(r.map((v, c) => v.padEnd(widths[c])).join('  '));
  console.log(`BENCH_JSON ${JSON.stringify({ bench: 'audit', runs: RUNS, results })}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
