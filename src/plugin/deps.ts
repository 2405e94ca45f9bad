/**
 * What the plugin's verbs run over, made once per process: the host's HNS, the state stores, the auditor, the shared
 * networks found by name, the address book (resident service only), the clock and this process's id. Each verb names
 * the few of these it uses (its own `…Deps` type), as win-bridge's `cmdAdd(args, n)` and Antrea's CNIServer fields
 * name theirs; nothing here belongs to a request, and nothing is a record of what the service serves (that is the
 * service's own: src/service/served-configs.ts).
 */
import type { Listing } from '../hns/api';
import type { LoadOptions } from '../hns/native';
import type { NativeHcn } from '../hns/native-types';
import type { CrashHook } from '../state/atomic';
import type { AddDeps } from './add-steps';
import { AddressBook } from './address-book';
import { Auditor } from './auditor';
import { HostHns } from './host-hns';
import { KnownNetworks } from './modes/known-networks';
import type { RuntimeObserver } from './observer';
import { StateStores } from './state-stores';

/**
 * Every part, as ADD uses them all (it is the verb that creates: add-steps.ts AddDeps, where each part is described);
 * the other verbs each name the few they use.
 */
export type PluginDeps = AddDeps;

export interface DepsOptions {
  /** Where to find the addon and the HCN library. */
  load?: LoadOptions;
  /** An already loaded addon (tests, or a host that embeds the plugin). */
  native?: NativeHcn;
  now?: () => number;
  /** This process, as intents record it. */
  pid: number;
  /** Test builds only: called at every state write point (crash-point matrix). */
  crash?: CrashHook;
  /** How V2Api lists all objects (default auto: one v1 GET when HNSCall exists). */
  listing?: Listing;
  /** The node-wide register of live claims (src/state/claims.ts); none when undefined. */
  claimsDir?: string;
  /** Told of every HCN call and audit (the resident service's metrics); none in the standalone executable. */
  observer?: RuntimeObserver;
  /** See PluginDeps.backgroundAudit. Default false: the standalone executable. */
  backgroundAudit?: boolean;
  /**
   * The fewest HNS round trips per verb (the resident service), through the API the host chose: HCN handles kept
   * between verbs (src/hns/held-handles.ts), and a DEL that releases an address by what this process knows of its
   * holders (address-book.ts) instead of listing the node. Default false: the standalone executable, which runs
   * one verb and knows nothing between them.
   */
  fewestCalls?: boolean;
}

export function pluginDeps(o: DepsOptions): PluginDeps {
  const now = o.now ?? Date.now;
  const hns = new HostHns({
    ...(o.load ? { load: o.load } : {}),
    ...(o.native ? { native: o.native } : {}),
    ...(o.listing ? { listing: o.listing } : {}),
    ...(o.observer?.hcnCall ? { onHcnCall: o.observer.hcnCall } : {}),
    holdHandles: o.fewestCalls === true,
  });
  const os = () => hns.os();
  const addressBook = o.fewestCalls ? new AddressBook() : undefined;
  const observe = o.observer?.audit?.bind(o.observer);
  return {
    hns,
    stores: new StateStores({
      os,
      now,
      ...(o.crash ? { crash: o.crash } : {}),
      ...(o.claimsDir ? { claimsDir: o.claimsDir } : {}),
    }),
    auditor: new Auditor({ os, now, ...(observe ? { observe } : {}), ...(addressBook ? { addressBook } : {}) }),
    networks: new KnownNetworks(),
    addressBook,
    now,
    pid: o.pid,
    backgroundAudit: o.backgroundAudit === true,
  };
}
