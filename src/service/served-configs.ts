/**
 * The service's record of the configurations it serves: the latest configuration (and IPAM client) per CNI network
 * of each state directory, brought by a verb (src/plugin/handlers.ts tells of each) or read from the runtime's
 * configuration directory (agent/conf-dir.ts). Background work covers every one of them: several conflists may share
 * one state directory, and each network's records are audited, repaired and have their kept IPs released with its own
 * configuration and through its own IPAM. The standalone executable has none: it serves one verb.
 */
import type { IpamClient, NetConf } from '../cni/types';

/** A configuration served for background work, with the IPAM client its kept IPs are released through. */
export type Served = { conf: NetConf; ipam: IpamClient };

/** Served configurations are kept per CNI network of each state directory. */
const servedKey = (conf: Pick<NetConf, 'stateDir' | 'name'>): string => `${conf.stateDir}\0${conf.name}`;

/** Configurations (network and state directory) remembered for background work, at most. */
const MAX_SERVED = 64;

export class ServedConfigs {
  private readonly byKey = new Map<string, Served>();
  /** The runtime's configuration directory as last read, by the same key (fromDir): each one's text. */
  private readonly dirTexts = new Map<string, string>();

  /** A verb ran with this configuration: it is the latest for its network and state directory. */
  readonly served = (s: Served): void => this.serve(servedKey(s.conf), s);

  /**
   * The runtime's configuration directory as just read (agent/conf-dir.ts), the truth for the networks it names.
   * One it names for the first time is served unless a verb brought it already: the runtime read that same file, and
   * the verb's carries the runtime's own CNI_PATH for its IPAM. One whose text changed since the last read (the
   * operator edited it) replaces what is served, whoever brought it — a verb's was read before the edit. One it no
   * longer names (removed) is no longer served, whoever brought it: no audit, health check or repair for it until a
   * verb of it comes again (the runtime still using it, from another directory or its own copy).
   */
  fromDir(read: readonly Served[]): void {
    const now = new Map(read.map((s) => [servedKey(s.conf), s] as const));
    for (const key of this.dirTexts.keys()) {
      if (now.has(key)) continue;
      this.dirTexts.delete(key);
      this.byKey.delete(key);
    }
    for (const [key, s] of now) {
      const text = JSON.stringify(s.conf);
      const before = this.dirTexts.get(key);
      this.dirTexts.set(key, text);
      if (before === text || (before === undefined && this.byKey.has(key))) continue;
      this.serve(key, s);
    }
  }

  /** The latest configuration served per network and state directory, oldest first. */
  confs(): NetConf[] {
    return [...this.byKey.values()].map((s) => s.conf);
  }

  /** The latest configuration and IPAM client served per network and state directory, oldest first. */
  contexts(): readonly Served[] {
    return [...this.byKey.values()];
  }

  private serve(key: string, { conf, ipam }: Served): void {
    if (this.byKey.has(key) || this.byKey.size < MAX_SERVED) {
      this.byKey.delete(key);
      this.byKey.set(key, { conf, ipam });
    }
  }
}
