/**
 * The resident service behind the shim (`hcn-cni serve`): it runs the same plugin code as the standalone executable
 * (runCni), in this one process, for many attachments at once.
 *
 * - A request is accepted (HCNA) as soon as it is read and checked; from then on it is the service's: a shim that
 *   dies does not cancel it, the verb runs to its end and commits, so the runtime's DEL that follows finds a record.
 * - Requests for one attachment (CNI_CONTAINERID + CNI_IFNAME) run one after another in arrival order
 *   (KeyedQueue); other attachments, GC and STATUS run concurrently, as separate standalone processes would — the
 *   state store's locks and the audit's intents are what make that safe, exactly as between processes.
 * - What is kept between requests is only what is a property of the host (src/plugin/deps.ts: the addon, the HNS
 *   API choice, the OS helpers, the shared networks found by name, re-read once a create says one is gone), HCN
 *   handles (src/hns/held-handles.ts: dropped when HNS disconnects and at a hand-over), the latest configuration per
 *   state directory (for the background work) and open log files. Configuration is parsed
 *   per request; the state and HNS's endpoints are read fresh by every verb, so the audit never judges from a cache.
 * - The whole node's audit runs in the background (node-agent.ts), on an interval and right after HNS answers again
 *   following a failure; an ADD does only its own safety work (src/plugin/own-objects.ts), so its cost does not
 *   grow with the node.
 * - Intents carry this process's pid and start time: if the service dies mid-verb, its intents are dead intents and
 *   the audit treats them as it treats those of a killed standalone process.
 * - The peer check runs before a byte is read: on Linux (pauseOnConnect) the socket is 0600 in a 0700 directory and
 *   the peer's uid (SO_PEERCRED) must be the service's own; on Windows the addon's pipe server checks the client's
 *   token against allowSids before it hands the connection over at all (listeners.ts).
 * - An HCN call past its timeout holds only its own native thread, never one a later call needs; at a bound on
 *   such abandoned calls the service stops accepting and exits once its requests are done (abandoned-bound.ts).
 * - A new service started on the same address takes it over without a gap (hand-over.ts): this one stops
 *   accepting once the new one's socket is at the address, finishes what it accepted, and its caller exits 0.
 * - It counts what it does (verbs by result code, HCN calls and errors, audits, repairs: tally.ts) for its status, and, only
 *   when `metrics` is given, serves the same as Prometheus metrics over HTTP (prometheus.ts, loaded only then).
 */
import { defaultClaimsDir } from '../cni/defaults';
import type { NativeHcn } from '../hns/native-types';
import { loadNative, type LoadOptions } from '../hns/native';
import { createLogger, type Logger } from '../log/logger';
import { pluginDeps, type PluginDeps } from '../plugin/deps';
import type { PodRepair } from '../plugin/verbs/repair';
import { Agent, type AgentOptions } from './agent/agent-wiring';
import { ServiceEnd, type HandOverOptions } from './hand-over/service-end';
import { Observability, type ObservabilityOptions } from './observability/observability';
import type { ServiceEvents } from './observability/events';
import type { ServiceStatus } from './observability/status';
import { ServedConfigs } from './served-configs';
import { Transport, type TransportOptions } from './transport/transport';

export type { InFlight } from './transport/request-book';
export type { ServiceStatus } from './observability/status';

/** What the service as a whole needs: the addon, this process, the plugin's dependencies and its own log. */
export interface CoreOptions {
  platform: NodeJS.Platform;
  /** This process (intents record it). */
  pid: number;
  load?: LoadOptions;
  native?: NativeHcn;
  /** The node-wide register of live claims (src/state/claims.ts); default: the platform's (defaultClaimsDir). */
  claimsDir?: string;
  /** The service's own log (start, refusals, failures); request logs go back to their shim. */
  log?: Logger;
}

/** The service's options: each part's own, side by side in one object (the CLI's flags, a test's overrides). */
export type ServiceOptions = CoreOptions & TransportOptions & AgentOptions & ObservabilityOptions & HandOverOptions;

export interface Service {
  readonly address: string;
  status(): ServiceStatus;
  /** Stops accepting and resolves when every accepted request has finished. */
  close(): Promise<void>;
  /**
   * Settles, with the reason, once the service retired by itself (the abandoned-call bound): it stopped accepting
   * and every accepted request has finished. The caller ends the process (EXIT_RETIRED).
   */
  readonly retired: Promise<string>;
  /**
   * Settles, with what happened, once a new service took the address over (hand-over.ts) and every request this one
   * accepted has finished. The caller ends the process (0).
   */
  readonly handedOver: Promise<string>;
  /** Repairs pods after an HNS restart now (configurations served with `repair: true`), and says what it did. */
  repair(): Promise<PodRepair[]>;
}

/**
 * The service as a list of parts, each made from what the ones before it made, then started in that order: the
 * metrics before the socket (an address that cannot be bound refuses the start), the socket last of what serves a
 * request, the background work once the service listens, the ending and its hand-over desk given the listener. The
 * ending stops them the other way round (shutdown.ts): the socket first, the background work, the requests drained,
 * the metrics last — first on a hand-over, whose new service needs their port.
 */
export async function startService(options: ServiceOptions): Promise<Service> {
  const log = options.log ?? createLogger({ level: 'info' });
  // The addon, loaded now, not on the first verb: the peer check needs it, and the first pod should not pay for it.
  const native = options.native ?? loadNative(options.load ?? {}).native;
  // The counts, the HNS-health tracker, the request logs, the metrics and the status (observability/).
  const observability = new Observability(options, log);
  // The plugin's dependencies, made once for every verb, each HCN call and audit told to the counts (deps.ts).
  const deps = serviceDeps(options, native, observability.events);
  // The configurations served, for the background work (served-configs.ts).
  const served = new ServedConfigs();
  // The ending: closed, retired at the abandoned-call bound, or handed over to a new service (hand-over/).
  const end = new ServiceEnd(options, log);
  // The queue per attachment, the book of requests, the intake and the listening socket or pipe (transport/).
  const transport = new Transport(options, { native, log, deps, served, observability, handOver: end });
  // The node agent, the repair trigger, HNS's notifications and the network asked for at the start (agent/).
  const agent = new Agent(options, { native, log, deps, served, queue: transport.queue, observability });

  // The metrics bound, before the socket: an address that cannot be bound refuses the start.
  await observability.start({ stores: deps.stores, book: transport.book, agent: agent.node, end });
  // The socket or pipe bound (or taken over): from now on connections arrive; a refusal lets the metrics go.
  await transport.start().catch(async (e: unknown) => {
    await observability.stop();
    throw e;
  });
  // The metrics whose port the service taken over held, bound once it lets go.
  observability.listening();
  // The agent's passes, HNS's notifications, the network asked for at the start.
  agent.start();
  // The abandoned-call bound watched, the hand-over desk opened on the listener; the ending stops the parts.
  const ending = end.start({ port: transport.handOverPort, transport, agent, observability, held: { native, deps } });
  return {
    address: options.address,
    status: observability.status,
    repair: () => agent.repair.run(),
    close: ending.close,
    retired: ending.retired,
    handedOver: ending.handedOver,
  };
}

/**
 * The plugin's dependencies as the service keeps them: this process's pid in its intents, the whole node's audit left
 * to the node agent (an ADD does only its own safety work), HCN handles and the address book kept between verbs, and
 * every HCN call and audit reported to the service's events.
 */
function serviceDeps(options: CoreOptions, native: NativeHcn, events: ServiceEvents): PluginDeps {
  const claimsDir = options.claimsDir ?? defaultClaimsDir(options.platform);
  return pluginDeps({
    pid: options.pid,
    native,
    ...(claimsDir ? { claimsDir } : {}),
    backgroundAudit: true,
    fewestCalls: true,
    observer: events.observer,
  });
}
