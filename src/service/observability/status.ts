/** What `hcn-cni service` (the STATUS request) shows of the resident service. */
import { abandonedStatus, type AbandonedStatus } from '../hand-over/abandoned-bound';
import type { NodeAgent, NodeAgentStatus } from '../agent/node-agent';
import { PROTOCOL_VERSION } from '../transport/protocol';
import type { InFlight, RequestBook } from '../transport/request-book';
import type { RequestLogs } from './request-log';
import type { Tally, TallySnapshot } from './tally';

export interface ServiceStatus {
  pid: number;
  /** The Kubernetes pod the service runs in, when it was told (ObservabilityOptions.pod). */
  pod?: string;
  protocol: number;
  address: string;
  startedAt: string;
  uptimeMs: number;
  served: number;
  refused: number;
  failed: number;
  /** Queued requests not run because their shim was gone before they started (nothing was done for them). */
  notRun: number;
  /** Connections closed before their request was complete: too slow (requestTimeoutMs) or too many pending. */
  timedOut: number;
  tooMany: number;
  /** Connections whose request is not complete yet. */
  pendingConnections: number;
  /** Request log files open (bounded; see log-files.ts). */
  logFilesOpen: number;
  inFlight: InFlight[];
  /** HCN calls past their timeout and still running, and the bound at which the service retires. */
  abandoned: AbandonedStatus;
  /** What the service counted (the same counts its metrics carry). */
  tally: TallySnapshot;
  /** The node agent's background audits (node-agent.ts). */
  agent: NodeAgentStatus;
  /** Where its Prometheus metrics are served; absent when they are off. */
  metricsUrl?: string;
  /**
   * The runtime's CNI configuration directory it serves networks from before their verbs arrive (`serve --conf-dir`,
   * agent/conf-dir.ts); absent when none was given (a network is then served once a verb of its own arrived).
   */
  confDir?: string;
}

export interface StatusParts {
  pid: number;
  pod?: string | undefined;
  address: string;
  started: number;
  maxAbandoned: number;
  book: RequestBook;
  logs: RequestLogs;
  tally: Tally;
  agent: NodeAgent;
  metricsUrl: string | undefined;
  confDir?: string | undefined;
}

export function serviceStatus(p: StatusParts): ServiceStatus {
  return {
    pid: p.pid,
    ...(p.pod !== undefined ? { pod: p.pod } : {}),
    protocol: PROTOCOL_VERSION,
    address: p.address,
    startedAt: new Date(p.started).toISOString(),
    uptimeMs: Date.now() - p.started,
    ...p.book.counts,
    pendingConnections: p.book.pendingConnections,
    logFilesOpen: p.logs.files.openCount,
    inFlight: p.book.inFlight(),
    abandoned: abandonedStatus(p.maxAbandoned),
    tally: p.tally.snapshot(),
    agent: p.agent.status(),
    ...(p.metricsUrl !== undefined ? { metricsUrl: p.metricsUrl } : {}),
    ...(p.confDir !== undefined ? { confDir: p.confDir } : {}),
  };
}
