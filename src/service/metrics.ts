/**
 * Prometheus metrics of the resident service, over HTTP (GET /metrics, the text exposition format), with prom-client
 * (github.com/siimon/prom-client). Off unless the operator gives `hcn-cni serve --metrics HOST:PORT`; service.ts
 * loads this module, and with it prom-client and node:http, only then (a dynamic import), so neither the standalone
 * executable's start-up nor a service without metrics pays for them.
 *
 * Counters and histograms are fed by the same events as the service's tally (tally.ts), as they happen; gauges are
 * read when scraped (queued and running requests, abandoned HCN calls, attachment records: file names counted in
 * each state directory the service has used, see countRecordFiles). Names have the `hcn_cni_` prefix; the
 * process's own (CPU, memory, event loop, handles) are prom-client's defaults under the same prefix.
 */
import * as http from 'http';
import type { AddressInfo } from 'net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AuditObservation } from '../plugin/observer';
import { REPAIR_OUTCOMES } from '../plugin/repair';
import type { MetricsSink } from './tally';

/** Read at every scrape. */
export interface MetricsGauges {
  requests(): { queued: number; running: number };
  abandonedCalls(): number;
  attachments(): Array<{ stateDir: string; count: number }>;
  pendingConnections(): number;
  /** Each served network's pods by health, as the node agent last checked them (node-agent.ts). */
  podHealth(): Array<{ stateDir: string; network: string; counts: Record<string, number> }>;
}

export interface MetricsServer extends MetricsSink {
  /** Where it listens (the port the system chose when 0 was asked). */
  readonly host: string;
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/** Verbs take milliseconds to tens of seconds (an HCN call may wait up to hnsTimeoutSeconds, 30 s by default). */
const VERB_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export async function startMetrics(options: {
  host: string;
  port: number;
  gauges: MetricsGauges;
  onError?: (message: string) => void;
}): Promise<MetricsServer> {
  const registry = new Registry();
  const g = options.gauges;
  collectDefaultMetrics({ register: registry, prefix: 'hcn_cni_' });
  const verbs = new Counter({
    name: 'hcn_cni_verbs_total',
    help: 'CNI requests the service ran, by verb and CNI result code (0: success)',
    labelNames: ['verb', 'code'],
    registers: [registry],
  });
  const verbSeconds = new Histogram({
    name: 'hcn_cni_verb_duration_seconds',
    help: 'How long each CNI request ran in the service (from its start, after any wait behind the same pod), by verb',
    labelNames: ['verb'],
    buckets: VERB_BUCKETS,
    registers: [registry],
  });
  const callSeconds = new Histogram({
    name: 'hcn_cni_hns_call_duration_seconds',
    help: 'HCN/HNS calls by operation (HCN function or HNSCall route), until their answer or their timeout',
    labelNames: ['op'],
    buckets: CALL_BUCKETS,
    registers: [registry],
  });
  const callErrors = new Counter({
    name: 'hcn_cni_hns_errors_total',
    help: 'Failed HCN/HNS calls by operation and HRESULT (0x800705B4: given up on at the timeout)',
    labelNames: ['op', 'hresult'],
    registers: [registry],
  });
  const audits = new Counter({
    name: 'hcn_cni_audits_total',
    help: 'Audits of HNS for leaked objects (each ADD and GC runs one)',
    registers: [registry],
  });
  const verdicts = new Counter({
    name: 'hcn_cni_audit_verdicts_total',
    help: 'Objects the audits judged, by verdict (foreign, live, in-flight, protected, orphan)',
    labelNames: ['verdict'],
    registers: [registry],
  });
  const removed = new Counter({
    name: 'hcn_cni_audit_objects_removed_total',
    help: 'Leaked objects the audits deleted from HNS, by kind (network, endpoint)',
    labelNames: ['kind'],
    registers: [registry],
  });
  const removeFailures = new Counter({
    name: 'hcn_cni_audit_remove_failures_total',
    help: 'Leaked objects an audit failed to delete (the next audit tries again)',
    registers: [registry],
  });
  const housekeepingFailures = new Counter({
    name: 'hcn_cni_housekeeping_failures_total',
    help: 'State-directory housekeeping the audits could not do (an old tombstone or a set-aside file that could not be removed): noted, retried by the next audit, failing nothing',
    registers: [registry],
  });
  for (const kind of ['network', 'endpoint']) removed.inc({ kind }, 0);
  const repairs = new Counter({
    name: 'hcn_cni_repairs_total',
    help: 'Pods the repair after an HNS restart handled (repair: true), by outcome (repaired, namespace-gone, container-gone, network-gone, no-recorded-spec, deleted-meanwhile, hns-refused, hns-unreachable)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of REPAIR_OUTCOMES) repairs.inc({ outcome }, 0);
  new Gauge({
    name: 'hcn_cni_hns_calls_abandoned',
    help: 'HCN calls past their timeout and still unanswered by HNS (the service retires at its bound)',
    registers: [registry],
    collect() {
      this.set(g.abandonedCalls());
    },
  });
  new Gauge({
    name: 'hcn_cni_requests',
    help: 'CNI requests in the service: queued (behind the same pod) or running',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const r = g.requests();
      this.set({ state: 'queued' }, r.queued);
      this.set({ state: 'running' }, r.running);
    },
  });
  new Gauge({
    name: 'hcn_cni_pending_connections',
    help: 'Connections whose request has not been read completely yet',
    registers: [registry],
    collect() {
      this.set(g.pendingConnections());
    },
  });
  new Gauge({
    name: 'hcn_cni_pods',
    help: "Recorded pods by CNI network and health at the node agent's last check: healthy, endpoint-missing, not-attached (endpoint there but not attached as recorded), hns-failed",
    labelNames: ['state_dir', 'network', 'health'],
    registers: [registry],
    collect() {
      this.reset();
      for (const n of g.podHealth())
        for (const [health, count] of Object.entries(n.counts))
          this.set({ state_dir: n.stateDir, network: n.network, health }, count);
    },
  });
  new Gauge({
    name: 'hcn_cni_attachments',
    help: 'Attachment records (pods attached by hcn-cni) per state directory the service has used',
    labelNames: ['state_dir'],
    registers: [registry],
    collect() {
      this.reset();
      for (const a of g.attachments()) this.set({ state_dir: a.stateDir }, a.count);
    },
  });

  const server = http.createServer((req, res) => {
    const url = (req.url ?? '').split('?')[0];
    if (url !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found; the metrics are at /metrics\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end('GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (e: unknown) => {
        options.onError?.((e as Error)?.message ?? String(e));
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('collecting the metrics failed\n');
      },
    );
  });
  // A scraper needs one connection; a few more are fine, hundreds are not (the service's own work comes first).
  server.maxConnections = 16;
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host, port: options.port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (e) => options.onError?.(e.message));
  const bound = server.address() as AddressInfo;
  const hostText = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;

  return {
    host: bound.address,
    port: bound.port,
    url: `http://${hostText}:${bound.port}/metrics`,
    verb(verb, code, seconds) {
      verbs.inc({ verb, code });
      verbSeconds.observe({ verb }, seconds);
    },
    hcnCall(op, seconds, hresult) {
      callSeconds.observe({ op }, seconds);
      if (hresult) callErrors.inc({ op, hresult });
    },
    audit(o: AuditObservation) {
      audits.inc();
      for (const [verdict, n] of Object.entries(o.verdicts)) verdicts.inc({ verdict }, n);
      for (const kind of o.removed) removed.inc({ kind });
      if (o.failed > 0) removeFailures.inc(o.failed);
      if (o.housekeepingFailed > 0) housekeepingFailures.inc(o.housekeepingFailed);
    },
    repair(outcome) {
      repairs.inc({ outcome });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
