/**
 * The service's Prometheus metrics, when `metrics` is given: prometheus.ts loaded only then (with prom-client and
 * node:http), its gauges read from the service's parts at each scrape. Started before the socket: a metrics address
 * that cannot be bound refuses the start, before any shim is served — except when the port is held by the service
 * this one is taking over (hand-over.ts): that one lets go of its port when the address is taken, so the new one binds
 * it after the hand-over (metricsAfterHandOver), and neither waits for the other to be gone.
 */
import { defaultStateDir } from '../../cni/defaults';
import { abandonedCount } from '../../hns/abandoned-calls';
import type { Logger } from '../../log/logger';
import type { StateStores } from '../../plugin/state-stores';
import { countRecordFiles } from '../../state/store';
import { answers } from '../transport/listeners';
import type { MetricsServer } from './prometheus';
import type { NodeAgent } from '../agent/node-agent';
import type { RequestBook } from '../transport/request-book';
import type { MetricsSink } from './tally';

interface MetricsParts {
  metrics?: { host: string; port: number };
  platform: NodeJS.Platform;
  defaults?: { stateDir?: string };
  stores: StateStores;
  book: RequestBook;
  agent: NodeAgent;
  log: Logger;
}

/** The metrics over the service's life, as the service uses them. */
export interface ServiceMetrics {
  /** Where they are served; undefined while not bound (off, or waiting for the old service's port). */
  readonly url: string | undefined;
  /** Idempotent: a hand-over closes them at once (the new service binds their port), the end of the drain again. */
  close(): Promise<void>;
  /** Once the service listens: when the old service held the port, binds it after the hand-over. */
  listening(): void;
}

/**
 * The metrics as the service runs them: started before its socket (startServiceMetrics), fed the service's counts
 * (`events`) from the moment they are bound, and closed once.
 */
export async function serviceMetrics(
  o: MetricsParts,
  events: { addSink(sink: MetricsSink): void },
  takeOverFrom?: string,
): Promise<ServiceMetrics> {
  const first = await startServiceMetrics(o, takeOverFrom);
  let metrics = first === AFTER_HAND_OVER ? undefined : first;
  if (metrics) events.addSink(metrics);
  let closed: Promise<void> | undefined;
  return {
    get url() {
      return metrics?.url;
    },
    close: () => (closed ??= metrics?.close() ?? Promise.resolve()),
    listening: () => {
      if (first !== AFTER_HAND_OVER) return;
      void metricsAfterHandOver(o, () => closed !== undefined).then(async (late) => {
        if (!late) return;
        if (closed) return void (await late.close());
        metrics = late;
        events.addSink(late);
      });
    },
  };
}

/** Said instead of a server when the port is in use and a service of ours answers at `takeOverFrom`. */
const AFTER_HAND_OVER = 'after-hand-over';

/**
 * The metrics, bound now; or AFTER_HAND_OVER when their port is in use while a service answers at `takeOverFrom`
 * (the service about to be taken over holds it). Any other failure to bind refuses the start, as before.
 */
async function startServiceMetrics(
  o: MetricsParts,
  takeOverFrom?: string,
): Promise<MetricsServer | undefined | typeof AFTER_HAND_OVER> {
  try {
    return await bindServiceMetrics(o);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE' && takeOverFrom && (await answers(takeOverFrom)))
      return AFTER_HAND_OVER;
    throw e;
  }
}

/** Between tries while the old service still holds the port: it closes it as soon as the address is taken. */
const RETRY_MS = 100;
/** How long the port may stay in use after a hand-over before the service gives up serving metrics (and says so). */
const GIVE_UP_MS = 30_000;

/**
 * After a hand-over: binds the metrics once the old service has let go of the port (it does when the address is
 * taken, shutdown.ts), trying again while it is in use. The service serves on meanwhile; metrics that cannot be bound
 * in the end are logged, not fatal (the shims are being served: refusing now would be the gap this avoids).
 * Undefined if `cancelled()` (the service closed) or it gave up.
 */
async function metricsAfterHandOver(o: MetricsParts, cancelled: () => boolean): Promise<MetricsServer | undefined> {
  const until = Date.now() + GIVE_UP_MS;
  for (;;) {
    if (cancelled()) return undefined;
    try {
      return await bindServiceMetrics(o);
    } catch (e) {
      const inUse = (e as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (!inUse || Date.now() > until) {
        o.log.error({ err: (e as Error).message }, 'service: metrics not served after the hand-over');
        return undefined;
      }
    }
    await new Promise((r) => setTimeout(r, RETRY_MS));
  }
}

async function bindServiceMetrics(o: MetricsParts): Promise<MetricsServer | undefined> {
  if (!o.metrics) return undefined;
  const { startMetrics } = await import('./prometheus');
  const defaultDir = o.defaults?.stateDir ?? defaultStateDir(o.platform);
  const metrics = await startMetrics({
    ...o.metrics,
    gauges: {
      requests: () => o.book.queuedAndRunning(),
      abandonedCalls: abandonedCount,
      // A directory that cannot be listed (permissions) is left out of the scrape rather than failing all of it.
      attachments: () =>
        [...new Set([defaultDir, ...o.stores.stateDirs])].flatMap((stateDir) => {
          try {
            return [{ stateDir, count: countRecordFiles(stateDir, 'attachment') }];
          } catch {
            return [];
          }
        }),
      pendingConnections: () => o.book.pendingConnections,
      podHealth: () => o.agent.status().health,
      findings: () => o.agent.findingCounts(),
    },
    onError: (message) => o.log.error({ err: message }, 'service: metrics'),
  });
  o.log.info({ metrics: metrics.url }, 'service: metrics at ' + metrics.url);
  return metrics;
}
