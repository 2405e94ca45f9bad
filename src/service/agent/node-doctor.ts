/**
 * The doctor (src/doctor) as the node agent runs it, at each visit of a state directory (before its audit): the same gather and
 * checks as `hcn-cni doctor`, minus the service's own status (it is this process). What a single look cannot know,
 * it remembers: since when each endpoint has been attached to nothing (so a peer's endpoint stuck unattached becomes
 * a warning once it is older than the grace period). The findings are exported as hcn_cni_node_findings.
 */
import type { NetConf } from '../../cni/types';
import { abandonedCount } from '../../hns/abandoned-calls';
import { doctor, graceMs } from '../../doctor/doctor';
import { countFindings, type Finding } from '../../doctor/finding';
import type { HnsView } from '../../doctor/snapshot';
import type { Logger } from '../../log/logger';
import type { AdaptersSeen } from '../../state/adapters-seen';
import type { HostHns } from '../../plugin/host-hns';
import type { StateStores } from '../../plugin/state-stores';

export interface NodeDoctorOptions {
  deps: { readonly hns: HostHns; readonly stores: StateStores };
  platform: string;
  now?: () => number;
}

/**
 * What the state directory notes of each bound network's adapter after a look: a network keeps its first entry (so a
 * changed id stays a finding until the network is re-created, with another id); a network seen for the first time
 * gets the id its adapter has now; a network gone is forgotten. Only where the host shows adapter ids.
 */
export function adaptersSeenNow(hns: HnsView, seen: AdaptersSeen, at: number): AdaptersSeen {
  const next: AdaptersSeen = {};
  for (const n of hns.networks) {
    const id = n.id.toLowerCase();
    const now = n.adapterName
      ? hns.adapters?.find((a) => a.name.toLowerCase() === n.adapterName!.toLowerCase())
      : undefined;
    if (seen[id]) next[id] = seen[id];
    else if (now?.interfaceGuid) next[id] = { adapterName: now.name, interfaceGuid: now.interfaceGuid, since: at };
  }
  return next;
}

export class NodeDoctor {
  /** The last findings of each state directory's visit. */
  private readonly byDir = new Map<string, Finding[]>();
  /** Endpoint id (lower case) → when it was first seen attached to nothing; only those still so. */
  private unattached = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly options: NodeDoctorOptions) {
    this.now = options.now ?? Date.now;
  }

  async run(conf: NetConf, log: Logger): Promise<Finding[]> {
    // HNS is not answering some call (abandoned past its timeout): a look would add every one of its reads to what
    // HNS owes; the last findings stand until it answers again (the visit's audit meets the same HNS).
    if (abandonedCount() > 0) return this.byDir.get(conf.stateDir) ?? [];
    const { hns, stores } = this.options.deps;
    const store = stores.store(conf, log);
    const { findings, snapshot } = await doctor({
      hns: () => hns.api(conf),
      state: {
        dir: conf.stateDir,
        snapshot: () => store.snapshot(),
        housekeeping: () => store.housekeeping(),
        adaptersSeen: () => store.adaptersSeen(),
      },
      processStartTime: (pid) => hns.os().processStartTime(pid),
      clock: { now: this.now },
      host: { platform: this.options.platform, plugin: 'the running service', confSource: `network ${conf.name}` },
      graceMs: graceMs(conf.hnsTimeoutSeconds),
      unattachedSince: (ids, now) => this.remember(ids, now),
    });
    this.byDir.set(conf.stateDir, findings);
    const seen = snapshot.state?.adaptersSeen;
    if (snapshot.hns && seen) {
      const next = adaptersSeenNow(snapshot.hns, seen, snapshot.at);
      if (JSON.stringify(next) !== JSON.stringify(seen)) store.noteAdaptersSeen(next);
    }
    return findings;
  }

  private remember(ids: readonly string[], now: number): Record<string, number> {
    const next = new Map(ids.map((id) => [id.toLowerCase(), this.unattached.get(id.toLowerCase()) ?? now]));
    this.unattached = next;
    return Object.fromEntries(next);
  }

  /** Since when each endpoint seen attached to nothing has been so (ms since epoch), for `hcn-cni doctor`. */
  unattachedSince(): Record<string, number> {
    return Object.fromEntries(this.unattached);
  }

  /**
   * Findings by kind and severity over every directory, each once: what HNS shows for the whole node (a duplicate
   * address, a vanished adapter) is found from every directory's visit alike.
   */
  counts(): ReturnType<typeof countFindings> {
    const seen = new Map<string, Finding>();
    for (const list of this.byDir.values()) for (const f of list) seen.set(`${f.kind}\0${f.subject}\0${f.why}`, f);
    return countFindings([...seen.values()]);
  }
}
