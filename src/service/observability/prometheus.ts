/**
 * Prometheus metrics of the resident service, over HTTP (GET /metrics, the text exposition format), with prom-client
 * (github.com/siimon/prom-client). Off unless the operator gives `hcn-cni serve --metrics HOST:PORT`; metrics.ts
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
import type { AuditObservation } from '../../plugin/observer';
import { REPAIR_OUTCOMES } from '../../plugin/verbs/repair';
import type { MetricsSink } from './tally';

/** Read at every scrape. */
export interface MetricsGauges {
  requests(): { queued: number; running: number };
  abandonedCalls(): number;
  attachments(): Array<{ stateDir: string; count: number }>;
  pendingConnections(): number;
  /** Each served network's pods by health, as the node agent last checked them (node-agent.ts). */
  podHealth(): Array<{ stateDir: string; network: string; counts: Record<string, number> }>;
  /** The node agent's doctor: its last findings by kind and severity (node-doctor.ts). */
  findings(): Array<{ kind: string; severity: string; count: number }>;
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

type Sink = Omit<MetricsSink, never>;

/** Verbs by result code, and how long they ran. */
function verbMetrics(registry: Registry): Pick<Sink, 'verb'> {
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
  return {
    verb(verb, code, seconds) {
      verbs.inc({ verb, code });
      verbSeconds.observe({ verb }, seconds);
    },
  };
}

/** HCN calls by operation, and their errors by HRESULT. */
function callMetrics(registry: Registry): Pick<Sink, 'hcnCall'> {
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
  return {
    hcnCall(op, seconds, hresult) {
      callSeconds.observe({ op }, seconds);
      if (hresult) callErrors.inc({ op, hresult });
    },
  };
}

/** Name and help of the audits' counters without labels. */
const AUDIT_COUNTERS = {
  audits: ['hcn_cni_audits_total', 'Audits of HNS for leaked objects (each ADD and GC runs one)'],
  removeFailures: [
    'hcn_cni_audit_remove_failures_total',
    'Leaked objects an audit failed to delete (the next audit tries again)',
  ],
  housekeepingFailures: [
    'hcn_cni_housekeeping_failures_total',
    'State-directory housekeeping the audits could not do (an old tombstone or a set-aside file that could not be removed): noted, retried by the next audit, failing nothing',
  ],
} as const;

function plainCounter(registry: Registry, [name, help]: readonly [string, string]): Counter {
  return new Counter({ name, help, registers: [registry] });
}

/** Audits, their verdicts, the objects they removed, and what they failed to remove or tidy. */
function auditMetrics(registry: Registry): Pick<Sink, 'audit'> {
  const audits = plainCounter(registry, AUDIT_COUNTERS.audits);
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
  const removeFailures = plainCounter(registry, AUDIT_COUNTERS.removeFailures);
  const housekeepingFailures = plainCounter(registry, AUDIT_COUNTERS.housekeepingFailures);
  for (const kind of ['network', 'endpoint']) removed.inc({ kind }, 0);
  return {
    audit(o: AuditObservation) {
      audits.inc();
      for (const [verdict, n] of Object.entries(o.verdicts)) verdicts.inc({ verdict }, n);
      for (const kind of o.removed) removed.inc({ kind });
      if (o.failed > 0) removeFailures.inc(o.failed);
      if (o.housekeepingFailed > 0) housekeepingFailures.inc(o.housekeepingFailed);
    },
  };
}

/** Pods the repair after an HNS restart handled, by outcome (every outcome shown from the start, at 0). */
function repairMetrics(registry: Registry): Pick<Sink, 'repair'> {
  const repairs = new Counter({
    name: 'hcn_cni_repairs_total',
    help: `Pods the repair after an HNS restart handled (repair: true), by outcome (${REPAIR_OUTCOMES.join(', ')})`,
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of REPAIR_OUTCOMES) repairs.inc({ outcome }, 0);
  return {
    repair(outcome) {
      repairs.inc({ outcome });
    },
  };
}

/** A gauge without labels, read at each scrape. */
function plainGauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** A gauge whose series are all set again at each scrape (those gone since are dropped). */
function labelledGauge(
  registry: Registry,
  def: { name: string; help: string; labelNames: string[] },
  read: () => Array<[Record<string, string>, number]>,
): void {
  new Gauge({
    ...def,
    registers: [registry],
    collect() {
      this.reset();
      for (const [labels, value] of read()) this.set(labels, value);
    },
  });
}

/** The service's own load: abandoned HCN calls, requests queued and running, connections still being read. */
function serviceGauges(registry: Registry, g: MetricsGauges): void {
  plainGauge(
    registry,
    'hcn_cni_hns_calls_abandoned',
    'HCN calls past their timeout and still unanswered by HNS (the service retires at its bound)',
    () => g.abandonedCalls(),
  );
  labelledGauge(
    registry,
    {
      name: 'hcn_cni_requests',
      help: 'CNI requests in the service: queued (behind the same pod) or running',
      labelNames: ['state'],
    },
    () => {
      const r = g.requests();
      return [
        [{ state: 'queued' }, r.queued],
        [{ state: 'running' }, r.running],
      ];
    },
  );
  plainGauge(
    registry,
    'hcn_cni_pending_connections',
    'Connections whose request has not been read completely yet',
    () => g.pendingConnections(),
  );
}

/** What the node agent saw of the node at its last look: pods by health, the doctor's findings, attachment records. */
function nodeGauges(registry: Registry, g: MetricsGauges): void {
  labelledGauge(
    registry,
    {
      name: 'hcn_cni_pods',
      help: "Recorded pods by CNI network and health at the node agent's last check: healthy, endpoint-missing, not-attached (endpoint there but not attached as recorded), hns-failed",
      labelNames: ['state_dir', 'network', 'health'],
    },
    () =>
      g
        .podHealth()
        .flatMap((n) =>
          Object.entries(n.counts).map(([health, count]): [Record<string, string>, number] => [
            { state_dir: n.stateDir, network: n.network, health },
            count,
          ]),
        ),
  );
  labelledGauge(
    registry,
    {
      name: 'hcn_cni_node_findings',
      help: "What the node agent's doctor found at its last look (hcn-cni doctor's checks), by kind and severity (info, warning, error); every pair, 0 where none",
      labelNames: ['kind', 'severity'],
    },
    () => g.findings().map((f): [Record<string, string>, number] => [{ kind: f.kind, severity: f.severity }, f.count]),
  );
  labelledGauge(
    registry,
    {
      name: 'hcn_cni_attachments',
      help: 'Attachment records (pods attached by hcn-cni) per state directory the service has used',
      labelNames: ['state_dir'],
    },
    () => g.attachments().map((a): [Record<string, string>, number] => [{ state_dir: a.stateDir }, a.count]),
  );
}

/** GET (or HEAD) /metrics: the registry's text; anything else 404 or 405. */
function metricsHandler(registry: Registry, onError?: (message: string) => void): http.RequestListener {
  return (req, res) => {
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
        onError?.((e as Error)?.message ?? String(e));
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('collecting the metrics failed\n');
      },
    );
  };
}

/** Listens on host:port (refused if it cannot be bound) and returns where. */
async function listenMetrics(
  server: http.Server,
  host: string,
  port: number,
  onError?: (message: string) => void,
): Promise<AddressInfo> {
  // A scraper needs one connection; a few more are fine, hundreds are not (the service's own work comes first).
  server.maxConnections = 16;
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (e) => onError?.(e.message));
  return server.address() as AddressInfo;
}

export async function startMetrics(options: {
  host: string;
  port: number;
  gauges: MetricsGauges;
  onError?: (message: string) => void;
}): Promise<MetricsServer> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'hcn_cni_' });
  const sink: Sink = {
    ...verbMetrics(registry),
    ...callMetrics(registry),
    ...auditMetrics(registry),
    ...repairMetrics(registry),
  };
  serviceGauges(registry, options.gauges);
  nodeGauges(registry, options.gauges);
  const server = http.createServer(metricsHandler(registry, options.onError));
  const bound = await listenMetrics(server, options.host, options.port, options.onError);
  const hostText = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return {
    host: bound.address,
    port: bound.port,
    url: `http://${hostText}:${bound.port}/metrics`,
    ...sink,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
