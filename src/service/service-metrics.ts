/**
 * The service's Prometheus metrics, when `metrics` is given: metrics.ts loaded only then (with prom-client and
 * node:http), its gauges read from the service's parts at each scrape. Started before the socket: a metrics address
 * that cannot be bound refuses the start, before any shim is served.
 */
import { defaultStateDir } from '../cni/defaults';
import { abandonedCount } from '../hns/abandoned-calls';
import type { Logger } from '../log/logger';
import type { PluginRuntime } from '../plugin/runtime';
import { countRecordFiles } from '../state/store';
import type { MetricsServer } from './metrics';
import type { NodeAgent } from './node-agent';
import type { RequestBook } from './requests';

export async function startServiceMetrics(o: {
  metrics?: { host: string; port: number };
  platform: NodeJS.Platform;
  defaults?: { stateDir?: string };
  runtime: PluginRuntime;
  book: RequestBook;
  agent: NodeAgent;
  log: Logger;
}): Promise<MetricsServer | undefined> {
  if (!o.metrics) return undefined;
  const { startMetrics } = await import('./metrics');
  const defaultDir = o.defaults?.stateDir ?? defaultStateDir(o.platform);
  const metrics = await startMetrics({
    ...o.metrics,
    gauges: {
      requests: () => o.book.queuedAndRunning(),
      abandonedCalls: abandonedCount,
      // A directory that cannot be listed (permissions) is left out of the scrape rather than failing all of it.
      attachments: () =>
        [...new Set([defaultDir, ...o.runtime.stateDirs])].flatMap((stateDir) => {
          try {
            return [{ stateDir, count: countRecordFiles(stateDir, 'attachment') }];
          } catch {
            return [];
          }
        }),
      pendingConnections: () => o.book.pendingConnections,
      podHealth: () => o.agent.status().health,
    },
    onError: (message) => o.log.error({ err: message }, 'service: metrics'),
  });
  o.log.info({ metrics: metrics.url }, 'service: metrics at ' + metrics.url);
  return metrics;
}
