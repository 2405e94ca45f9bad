/**
 * The service's Prometheus metrics (`hcn-cni serve --metrics HOST:PORT`), scraped over HTTP on
 * 127.0.0.1 and checked against what was run: verbs by CNI result code, verb and HNS-call latency histograms, HNS
 * errors by HRESULT, audit verdicts, repairs by outcome, abandoned calls, queued requests, attachment records. Off by default: then the
 * service has no TCP socket at all, and prom-client is reachable only through a dynamic import.
 */
import { execFile } from 'child_process';
import * as fs from 'fs';
import * as http from 'http';
import * as path from 'path';
import { promisify } from 'util';
import { parseMetricsAddress } from '../../src/cli/metrics-address';
import { Hcn, type HcnCallObservation } from '../../src/hns/hcn';
import { HcnError } from '../../src/hns/hcn-error';
import type { NativeCapabilities, NativeHcn } from '../../src/hns/native-types';
import { silentLogger } from '../../src/log/logger';
import { startService } from '../../src/service/service';
import { bridgeConf, CLI, ROOT, useHarness, type Harness } from '../helpers/cni-harness';
import { newNamespace, until } from '../plugin/support';
import {
  makeBin,
  SERVICE_CREATE_OP,
  startHungAdd,
  startServiceProcess,
  viaShim,
  type Bin,
  type RunningService,
} from './support';

let h: Harness;
useHarness(undefined, (x) => (h = x));
jest.setTimeout(90_000);

function get(url: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      })
      .on('error', reject);
  });
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format (version 0.0.4), as far as these metrics use it. */
function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!.replace(/\\"/g, '"').replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

function series(samples: Sample[], name: string, key: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples.filter((x) => x.name === name)) out[s.labels[key] ?? ''] = s.value;
  return out;
}

function one(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

/** TCP sockets in LISTEN state that this process holds (its fds matched against /proc/net/tcp{,6}). */
/**
 * The rows of the plain-text table whose header starts with `first`, after checking that every cell of every row
 * starts where its header's column does (a cell wider than the header's spacing would push the next one along).
 */
function tableRows(text: string, first: string): string[][] {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`${first} `));
  expect(at).toBeGreaterThanOrEqual(0);
  const header = lines[at]!;
  const starts = [...header.matchAll(/(?:^| {2})(\S)/g)].map((m) => m.index! + m[0].length - 1);
  const rows: string[][] = [];
  for (const line of lines.slice(at + 1)) {
    if (line === '') break;
    const cells = starts.map((s, i) => line.slice(s, starts[i + 1]).trim());
    // Each cell begins at its column, after a blank: nothing runs into it from the left.
    for (const s of starts.slice(1))
      expect({ line, at: s, before: line[s - 1], cell: line[s] }).toMatchObject({
        before: ' ',
        cell: expect.stringMatching(/\S/),
      });
    rows.push(cells);
  }
  return rows;
}

function listeningTcp(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const out: string[] = [];
  for (const table of ['tcp', 'tcp6']) {
    const rows = fs.readFileSync(`/proc/${pid}/net/${table}`, 'utf8').trim().split('\n').slice(1);
    for (const row of rows) {
      const f = row.trim().split(/\s+/);
      if (f[3] === '0A' && inodes.has(f[9]!)) out.push(`${table} ${f[1]}`);
    }
  }
  return out;
}

describe('service metrics over HTTP', () => {
  let bin: Bin;
  let service: RunningService;
  beforeEach(async () => {
    bin = makeBin(h);
    // No HNS probe: the only calls the node agent makes are its audits' (counted below).
    service = await startServiceProcess(h, undefined, ['--metrics', '127.0.0.1:0', '--hns-probe-seconds', '0']);
  });
  afterEach(async () => {
    await service.stop();
  });

  it('counts the verbs run by verb and code, times them and the HNS calls they made, and counts audit verdicts', async () => {
    const url = (await service.status()).metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    // The same address is in the service's log, for an operator who asked for port 0.
    expect(service.stderr()).toContain(url);

    const conf = bridgeConf();
    const ns1 = await newNamespace(h);
    const ns2 = await newNamespace(h);
    const add1 = await viaShim(h, bin, service.address, { verb: 'ADD', conf, containerId: 'm1', netns: ns1 });
    const add2 = await viaShim(h, bin, service.address, { verb: 'ADD', conf, containerId: 'm2', netns: ns2 });
    expect([add1.exitCode, add2.exitCode]).toEqual([0, 0]);
    const check = await viaShim(h, bin, service.address, {
      verb: 'CHECK',
      conf: { ...conf, prevResult: add1.json },
      containerId: 'm1',
      netns: ns1,
    });
    expect(check.exitCode).toBe(0);
    const del = await viaShim(h, bin, service.address, { verb: 'DEL', conf, containerId: 'm2', netns: ns2 });
    expect(del.exitCode).toBe(0);
    const bad = await viaShim(h, bin, service.address, {
      verb: 'ADD',
      conf: bridgeConf({ subnet: 24 }),
      containerId: 'm3',
      netns: ns2,
    });
    expect({ exit: bad.exitCode, code: bad.json?.code }).toEqual({ exit: 1, code: 7 });
    expect(bin.standaloneRuns()).toBe(0);
    // The node agent audits the directory it has served once (the next is due after auditIntervalSeconds, 60 s).
    await until(async () => ((await service.status()).agent.audits >= 1 ? true : undefined), 20_000, 'an audit');

    const scrape = await get(url);
    expect(scrape.status).toBe(200);
    expect(scrape.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = parse(scrape.body);

    // Verbs by verb and code: exactly what was run.
    const verbs = m
      .filter((s) => s.name === 'hcn_cni_verbs_total')
      .map((s) => `${s.labels.verb} ${s.labels.code} ${s.value}`)
      .sort();
    expect(verbs).toEqual(['ADD 0 2', 'ADD 7 1', 'CHECK 0 1', 'DEL 0 1']);
    // The verb histogram: one observation per request, per verb, and +Inf holds them all.
    expect(series(m, 'hcn_cni_verb_duration_seconds_count', 'verb')).toEqual({ ADD: 3, CHECK: 1, DEL: 1 });
    expect(one(m, 'hcn_cni_verb_duration_seconds_bucket', { verb: 'ADD', le: '+Inf' })).toBe(3);
    expect(one(m, 'hcn_cni_verb_duration_seconds_sum', { verb: 'ADD' })).toBeGreaterThan(0);

    // HNS calls: every op the verbs used shows up in the simulator's call log, made by the service process, and
    // the counts per op are at least the facade-level calls the simulator saw first (a detailed listing is one
    // facade call, HcnEnumerate* plus an open/query/close per object in the simulator's log).
    const calls = series(m, 'hcn_cni_hns_call_duration_seconds_count', 'op');
    const simOps = new Map<string, number>();
    for (const c of await h.sim.control.calls())
      if (c.pid === service.child.pid) simOps.set(c.op, (simOps.get(c.op) ?? 0) + 1);
    expect(Object.keys(calls).length).toBeGreaterThan(0);
    for (const [op, n] of Object.entries(calls)) {
      expect({ op, inSimLog: simOps.has(op) }).toEqual({ op, inSimLog: true });
      if (/^Hcn(Create|Delete|Modify)/.test(op)) expect({ op, n }).toEqual({ op, n: simOps.get(op) });
    }
    // Two bridge ADDs: one network create (the second finds it), two endpoint creates; one DEL: one endpoint delete.
    expect(calls.HcnCreateNetwork).toBe(1);
    expect(calls[SERVICE_CREATE_OP]).toBe(2);
    expect(calls.HcnDeleteEndpoint).toBe(1);
    for (const op of Object.keys(calls))
      expect(one(m, 'hcn_cni_hns_call_duration_seconds_bucket', { op, le: '+Inf' })).toBe(calls[op]);
    // Nothing failed in HNS.
    expect(m.filter((s) => s.name === 'hcn_cni_hns_errors_total')).toEqual([]);

    // Audits: the node agent's one; no ADD audited the whole node (each looked up only its own name, which found
    // nothing: no verdict). Which objects that audit judged depends on when it ran among the verbs; none is an orphan.
    expect(one(m, 'hcn_cni_audits_total')).toBe(1);
    const verdicts = series(m, 'hcn_cni_audit_verdicts_total', 'verdict');
    expect([verdicts.orphan, verdicts['in-flight'], verdicts.protected]).toEqual([0, 0, 0]);
    expect(series(m, 'hcn_cni_audit_objects_removed_total', 'kind')).toEqual({ network: 0, endpoint: 0 });

    // Gauges, at rest: no abandoned call, nothing queued or running, one attachment record left (m1).
    expect(one(m, 'hcn_cni_hns_calls_abandoned')).toBe(0);
    expect(series(m, 'hcn_cni_requests', 'state')).toEqual({ queued: 0, running: 0 });
    expect(one(m, 'hcn_cni_attachments', { state_dir: h.stateDir })).toBe(1);
    // prom-client's process metrics, under the same prefix.
    expect(one(m, 'hcn_cni_process_resident_memory_bytes')).toBeGreaterThan(0);

    // `hcn-cni service` carries the same counts.
    const status = await service.status();
    expect(status.tally.verbs.map((v) => `${v.verb} ${v.code} ${v.count}`).sort()).toEqual(verbs);
    expect(Object.fromEntries(status.tally.hnsCalls.map((c) => [c.op, c.count]))).toEqual(calls);
    expect(status.tally.audits).toBe(1);
    expect(status.agent.audits).toBe(1);
    expect(status.tally.verdicts).toEqual(verdicts);

    // …and prints them: the metrics address, the audit line, a row per verb and code, a row per HNS call.
    const { stdout: text } = await promisify(execFile)(process.execPath, [
      CLI,
      'service',
      '--service',
      service.address,
    ]);
    expect(text).toContain(`metrics: ${url}\n`);
    const v = (k: string) => `${k} ${verdicts[k] ?? 0}`;
    expect(text).toContain(
      `audits: 1; verdicts: ${['foreign', 'live', 'in-flight', 'protected', 'orphan'].map(v).join(', ')}; removed: 0 networks, 0 endpoints (0 failed)`,
    );
    const verbRows = tableRows(text, 'verb');
    expect(verbRows).toContainEqual(['ADD', '7', '1', expect.stringMatching(/^\d+\.\dms$/)]);
    expect(verbRows).toContainEqual(['ADD', '0', '2', expect.stringMatching(/^\d+\.\dms$/)]);
    // One row per HNS call, in its columns even for an HNSCall route longer than any HCN function's name.
    const callRows = tableRows(text, 'HNS call');
    expect(callRows).toContainEqual([SERVICE_CREATE_OP, '2', '0', expect.stringMatching(/^\d+\.\dms$/)]);
    expect(callRows.map((r) => r[0]).sort()).toEqual(Object.keys(calls).sort());
    // The audit's bulk listing is an HNSCall route (v1 answers in one call what HCN asks per object).
    expect(callRows.map((r) => r[0])).toContain('HNSCall GET /endpoints');

    // Only GET (and HEAD) /metrics.
    expect((await get(url.replace('/metrics', '/other'))).status).toBe(404);
  });

  it('counts HNS errors by op and HRESULT, and a leak the audit removes by kind', async () => {
    const url = (await service.status()).metricsUrl!;
    // The node agent audits this directory every second (the latest configuration served says so).
    const conf = bridgeConf({ auditIntervalSeconds: 1 });
    const ns = await newNamespace(h);
    // An endpoint create HNS refuses: the ADD fails, and the error is counted with its HRESULT.
    await h.sim.control.failCall(SERVICE_CREATE_OP, 0x80070005);
    const failed = await viaShim(h, bin, service.address, { verb: 'ADD', conf, containerId: 'e1', netns: ns });
    expect({ exit: failed.exitCode, code: failed.json?.code }).toEqual({ exit: 1, code: 100 });
    // A leak of our own making: an ADD's endpoint left in HNS, detached, with its record gone (what a lost record
    // leaves); the node agent's next audit finds it ours and claimed by nobody, and removes it.
    const leak = await viaShim(h, bin, service.address, { verb: 'ADD', conf, containerId: 'e2', netns: ns });
    expect(leak.exitCode).toBe(0);
    const record = path.join(h.stateDir, 'attachments', 'e2@eth0.json');
    const endpointId = (JSON.parse(fs.readFileSync(record, 'utf8')) as { endpoint: { id: string } }).endpoint.id;
    await h.deps.hns.hcn({ hnsTimeoutSeconds: 10 }).removeNamespaceEndpoint(ns, endpointId);
    fs.rmSync(record);
    await until(
      async () => ((await service.status()).tally.removed.endpoint >= 1 ? true : undefined),
      20_000,
      'the agent to remove the leak',
    );
    const ns3 = await newNamespace(h);
    const next = await viaShim(h, bin, service.address, { verb: 'ADD', conf, containerId: 'e3', netns: ns3 });
    expect(next.exitCode).toBe(0);

    // A v1 call HNS refuses in its envelope ({Success: false, ErrorCode}): the agent's listings — its doctor's look,
    // its audit's, then its health check's, in that order at each visit (node-agent.ts visit).
    await h.sim.control.failCall('HNSCall GET /endpoints', 0x8007000e, { count: 2 });
    // Each refused read is tallied; the first failure of an audit's or a health check's listing ends its visit. Both
    // are met, whichever listings meet them: set while a visit is under way (a second each), the fault meets the rest
    // of that visit first, and its end ("audit failed") can come before the second failure does.
    await until(
      async () => {
        const refused = (await service.status()).tally.hnsErrors.find((e) => e.op === 'HNSCall GET /endpoints');
        return (refused?.count ?? 0) >= 2 && service.stderr().includes('node agent: audit failed') ? true : undefined;
      },
      20_000,
      "the agent's listings to meet both failures, and a visit to end on one",
    );

    const m = parse((await get(url)).body);
    expect(one(m, 'hcn_cni_hns_errors_total', { op: SERVICE_CREATE_OP, hresult: '0x80070005' })).toBe(1);
    expect(one(m, 'hcn_cni_hns_errors_total', { op: 'HNSCall GET /endpoints', hresult: '0x8007000E' })).toBe(2);
    expect(one(m, 'hcn_cni_audit_objects_removed_total', { kind: 'endpoint' })).toBe(1);
    expect(series(m, 'hcn_cni_audit_verdicts_total', 'verdict').orphan).toBeGreaterThanOrEqual(1);
    const status = await service.status();
    expect(status.tally.hnsErrors).toEqual([
      { op: 'HNSCall GET /endpoints', hresult: '0x8007000E', count: 2 },
      { op: SERVICE_CREATE_OP, hresult: '0x80070005', count: 1 },
    ]);
    expect(status.tally.removed.endpoint).toBe(1);
    // The refused create is CNI code 100 (an HNS error), the successes 0.
    expect(status.tally.verbs.map((v) => `${v.verb} ${v.code} ${v.count}`)).toEqual(['ADD 0 2', 'ADD 100 1']);
  });

  it('counts the pods repaired after an HNS restart by outcome, as the status does', async () => {
    const url = (await service.status()).metricsUrl!;
    // Before any repair the counter has its outcomes at 0 (a rate over them needs the series to exist).
    expect(series(parse((await get(url)).body), 'hcn_cni_repairs_total', 'outcome').repaired).toBe(0);
    // The node agent audits (then repairs) this directory every second; no call sees the restart (downMs 0).
    const conf = bridgeConf({ repair: true, auditIntervalSeconds: 1 });
    const ns = await newNamespace(h);
    expect((await viaShim(h, bin, service.address, { verb: 'ADD', conf, containerId: 'r1', netns: ns })).exitCode).toBe(
      0,
    );
    await h.sim.control.restart({ downMs: 0 });
    await until(
      async () => ((await service.status()).tally.repairs.repaired === 1 ? true : undefined),
      20_000,
      'the repair',
    );
    const repairs = series(parse((await get(url)).body), 'hcn_cni_repairs_total', 'outcome');
    expect(repairs.repaired).toBe(1);
    // Every other outcome is there, at 0; and the status's counts are the same.
    expect(Object.keys(repairs).sort()).toEqual(
      [
        'attached-elsewhere',
        'container-gone',
        'deleted-meanwhile',
        'hns-failed',
        'hns-refused',
        'hns-unreachable',
        'namespace-gone',
        'network-gone',
        'no-recorded-spec',
        'repaired',
      ].sort(),
    );
    const status = await service.status();
    expect(Object.fromEntries(Object.entries(repairs).filter(([, n]) => n > 0))).toEqual(status.tally.repairs);
    // `hcn-cni service` prints them.
    const { stdout: text } = await promisify(execFile)(process.execPath, [
      CLI,
      'service',
      '--service',
      service.address,
    ]);
    expect(text).toContain('\nrepairs: repaired 1\n');
  });

  it('shows a request running and one queued behind it (same pod)', async () => {
    const url = (await service.status()).metricsUrl!;
    const ns = await newNamespace(h);
    const hung = await startHungAdd(h, bin, service.address, 'q1', ns);
    // A DEL of the same pod waits behind the hung ADD.
    const queued = viaShim(h, bin, service.address, { verb: 'DEL', conf: bridgeConf(), containerId: 'q1', netns: ns });
    await until(
      async () => ((await service.status()).inFlight.length === 2 ? true : undefined),
      20_000,
      'the DEL to queue',
    );
    const m = parse((await get(url)).body);
    expect(series(m, 'hcn_cni_requests', 'state')).toEqual({ queued: 1, running: 1 });
    await h.sim.control.release();
    await hung.done;
    await queued;
    const after = parse((await get(url)).body);
    expect(series(after, 'hcn_cni_requests', 'state')).toEqual({ queued: 0, running: 0 });
  });
});

describe('abandoned HCN calls', () => {
  it('the gauge counts calls past their timeout until HNS answers them', async () => {
    const bin = makeBin(h);
    const service = await startServiceProcess(h, undefined, ['--metrics', '127.0.0.1:0']);
    try {
      const url = (await service.status()).metricsUrl!;
      await h.sim.control.hang(SERVICE_CREATE_OP);
      const ns = await newNamespace(h);
      const add = await viaShim(h, bin, service.address, {
        verb: 'ADD',
        conf: bridgeConf({ hnsTimeoutSeconds: 1 }),
        containerId: 'a1',
        netns: ns,
      });
      expect(add.exitCode).toBe(1);
      const m = parse((await get(url)).body);
      expect(one(m, 'hcn_cni_hns_calls_abandoned')).toBe(1);
      expect(one(m, 'hcn_cni_hns_errors_total', { op: SERVICE_CREATE_OP, hresult: '0x800705B4' })).toBe(1);
      await h.sim.control.release();
      await until(
        async () => ((await service.status()).abandoned.count === 0 ? true : undefined),
        20_000,
        'the abandoned call to end',
      );
      expect(one(parse((await get(url)).body), 'hcn_cni_hns_calls_abandoned')).toBe(0);
    } finally {
      await service.stop();
    }
  });
});

describe('metrics are off by default', () => {
  it('a service started without --metrics listens on no TCP port and reports no metrics address', async () => {
    const service = await startServiceProcess(h);
    try {
      const status = await service.status();
      expect(status.metricsUrl).toBeUndefined();
      expect(listeningTcp(service.child.pid!)).toEqual([]);
      // The counts are kept all the same (`hcn-cni service` shows them).
      expect(status.tally).toMatchObject({ verbs: [], audits: 0 });
    } finally {
      await service.stop();
    }
  });

  it('with --metrics, the service holds exactly that listening socket', async () => {
    const service = await startServiceProcess(h, undefined, ['--metrics', '127.0.0.1:0']);
    try {
      const port = Number(/:(\d+)\/metrics$/.exec((await service.status()).metricsUrl!)![1]);
      const hex = port.toString(16).toUpperCase().padStart(4, '0');
      expect(listeningTcp(service.child.pid!)).toEqual([`tcp 0100007F:${hex}`]);
    } finally {
      await service.stop();
    }
  });

  it('prom-client is loaded only through a dynamic import of src/service/observability/prometheus.ts', () => {
    const src = path.join(ROOT, 'src');
    const files = (dir: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
        const p = path.join(dir, d.name);
        return d.isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
      });
    const importers: string[] = [];
    const staticMetrics: string[] = [];
    for (const f of files(src)) {
      const text = fs.readFileSync(f, 'utf8');
      if (/from\s+['"]prom-client['"]|require\(\s*['"]prom-client['"]/.test(text))
        importers.push(path.relative(src, f));
      if (/^import\s+(?!type\b)[^;]*from\s+['"](?:\.\.?\/)+(?:[\w-]+\/)*prometheus['"]/m.test(text))
        staticMetrics.push(path.relative(src, f));
    }
    expect(importers).toEqual([path.join('service', 'observability', 'prometheus.ts')]);
    expect(staticMetrics).toEqual([]);
    expect(fs.readFileSync(path.join(src, 'service', 'observability', 'metrics.ts'), 'utf8')).toMatch(
      /await import\('\.\/prometheus'\)/,
    );
  });

  it('the metrics address: loopback accepted, any other host only with --metrics-allow-remote', () => {
    expect(parseMetricsAddress('127.0.0.1:9464', false)).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(parseMetricsAddress('localhost:0', false)).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseMetricsAddress('[::1]:9464', false)).toEqual({ host: '::1', port: 9464 });
    expect(parseMetricsAddress('10.0.0.4:9464', false)).toMatch(/not a loopback address.*--metrics-allow-remote/);
    expect(parseMetricsAddress('0.0.0.0:9464', false)).toMatch(/not a loopback address/);
    expect(parseMetricsAddress('10.0.0.4:9464', true)).toEqual({ host: '10.0.0.4', port: 9464 });
    for (const bad of ['9464', '127.0.0.1', '127.0.0.1:65536', 'example.com:9464', '[10.0.0.1]:80', '::1:9464'])
      expect(parseMetricsAddress(bad, true)).toEqual(expect.any(String));
  });

  it('hcn-cni serve refuses a non-loopback metrics address (--metrics or HCN_CNI_METRICS) before it starts', async () => {
    const { serve } = await import('../../src/cli/serve');
    let err = '';
    const code = await serve(['--listen', path.join(h.tmp, 'x.sock'), '--metrics', '0.0.0.0:9464'], {
      env: {},
      load: {},
      err: (s) => (err += s),
    });
    expect({ code, err }).toEqual({ code: 2, err: expect.stringMatching(/not a loopback address/) });
    expect(fs.existsSync(path.join(h.tmp, 'x.sock'))).toBe(false);
    // HCN_CNI_METRICS is the same setting.
    let fromEnv = '';
    const envCode = await serve(['--listen', path.join(h.tmp, 'x.sock')], {
      env: { HCN_CNI_METRICS: '10.1.2.3:9464' },
      load: {},
      err: (s) => (fromEnv += s),
    });
    expect({ envCode, fromEnv }).toEqual({
      envCode: 2,
      fromEnv: expect.stringMatching(/10\.1\.2\.3 is not a loopback/),
    });
  });

  it('a metrics port already taken refuses the start, and leaves no socket behind', async () => {
    const blocker = http.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    const address = path.join(h.tmp, 'run', 'taken.sock');
    try {
      await expect(
        startService({
          address,
          platform: 'linux',
          pid: process.pid,
          allowUid: process.getuid!(),
          log: silentLogger,
          metrics: { host: '127.0.0.1', port },
        }),
      ).rejects.toThrow(/EADDRINUSE/);
      expect(fs.existsSync(address)).toBe(false);
    } finally {
      blocker.close();
    }
  });
});

describe('the observer seam in the HCN facade', () => {
  it('sees every call with its op, duration and HRESULT, also through a facade of another timeout', async () => {
    const seen: HcnCallObservation[] = [];
    const native = {
      deleteNetwork: () => Promise.resolve(),
      deleteEndpoint: () => Promise.reject(new HcnError('HcnDeleteEndpoint', 0x803b0002, null)),
    } as unknown as NativeHcn;
    const hcn = new Hcn(native, {} as NativeCapabilities, { timeoutMs: 1000, observer: (c) => seen.push(c) });
    await hcn.withTimeout(5000).deleteNetwork('n');
    await expect(hcn.deleteEndpoint('e')).rejects.toThrow(/HcnDeleteEndpoint/);
    expect(seen).toEqual([
      { op: 'HcnDeleteNetwork', durationMs: expect.any(Number) },
      { op: 'HcnDeleteEndpoint', durationMs: expect.any(Number), hresult: 0x803b0002 },
    ]);
  });
});
