/**
 * What the service shows of itself, as one part: the counts every HCN call, verb, audit and repair goes to
 * (events.ts), the one HNS-health tracker (hns-health.ts), the request logs that go back to their shims
 * (request-log.ts), the Prometheus metrics when `metrics` is given (metrics.ts) and the status (status.ts). Made
 * first: the plugin's dependencies report to its events as soon as they exist. Started before the socket — a metrics
 * address that cannot be bound refuses the start — once what its gauges and status read has been made.
 */
import type { Logger } from '../../log/logger';
import type { StateStores } from '../../plugin/state-stores';
import type { NodeAgent } from '../agent/node-agent';
import type { RequestBook } from '../transport/request-book';
import { ServiceEvents } from './events';
import { HnsHealth } from './hns-health';
import { serviceMetrics, type ServiceMetrics } from './metrics';
import { RequestLogs } from './request-log';
import { serviceStatus, type ServiceStatus } from './status';

export interface ObservabilityOptions {
  address: string;
  platform: NodeJS.Platform;
  /** This process (the status shows it). */
  pid: number;
  /**
   * The Kubernetes pod the service runs in (the DaemonSet's HCN_CNI_POD_UID): in its status, so that the pod's
   * readiness probe tells whether the service answering at the address is its own or a newer pod's that took it over
   * (probes.ts).
   */
  pod?: string;
  /** Where the audit's state lives by default: the metrics count its attachments. */
  defaults?: { stateDir?: string };
  /**
   * Serve Prometheus metrics at http://HOST:PORT/metrics (prometheus.ts); port 0 lets the system choose (the status and
   * the log say which). Off when undefined: then neither prom-client nor node:http is loaded. Which hosts are
   * acceptable (loopback unless the operator says otherwise) is the CLI's decision (src/cli/serve.ts).
   */
  metrics?: { host: string; port: number };
  /** The runtime's CNI configuration directory the agent serves networks from (AgentOptions): the status names it. */
  confDir?: string;
}

/** What the metrics' gauges and the status read, made by the other parts before this one starts. */
export interface Observed {
  stores: StateStores;
  book: RequestBook;
  agent: NodeAgent;
  /** How the service ends (hand-over/service-end.ts). */
  end: {
    /** Abandoned HCN calls at which the service retires (abandoned-bound.ts): the status shows it. */
    maxAbandoned: number;
    /** The address of the service this one takes over: its metrics port is bound after it lets go (metrics.ts). */
    takeOverFrom: string | undefined;
  };
}

export class Observability {
  readonly events = new ServiceEvents();
  /** The service's one HNS-health tracker, told of every HCN call before the counts are (events.ts). */
  readonly health = new HnsHealth();
  readonly logs: RequestLogs;
  private running: { observed: Observed; started: number; metrics: ServiceMetrics } | undefined;

  constructor(
    private readonly options: ObservabilityOptions,
    private readonly log: Logger,
  ) {
    this.events.onHcnCall((c) => this.health.observe(c.hresult));
    this.events.countHcnCalls();
    this.logs = new RequestLogs({ pid: options.pid, service: true });
  }

  /** Binds the metrics (throws, refusing the start, when their address cannot be bound). */
  async start(observed: Observed): Promise<void> {
    const started = Date.now();
    const parts = { ...this.options, ...observed, log: this.log };
    const metrics = await serviceMetrics(parts, this.events, observed.end.takeOverFrom);
    this.running = { observed, started, metrics };
  }

  /** The service listens: metrics whose port the old service held are bound once it lets go (metrics.ts). */
  listening(): void {
    this.running?.metrics.listening();
  }

  /** Closes the metrics. Idempotent: a hand-over closes them at once, the end of the drain again (shutdown.ts). */
  readonly stop = (): Promise<void> => this.running?.metrics.close() ?? Promise.resolve();

  /** What `hcn-cni service` shows (status.ts); asked only once the service listens, after start(). */
  readonly status = (): ServiceStatus => {
    if (!this.running) throw new Error('service: status asked before the service started');
    const { observed, started, metrics } = this.running;
    return serviceStatus({
      ...this.options,
      ...observed,
      maxAbandoned: observed.end.maxAbandoned,
      started,
      logs: this.logs,
      tally: this.events.tally,
      metricsUrl: metrics.url,
    });
  };
}
