/**
 * The state store of each state directory a verb names, opened with this process's clock, OS helpers, crash hook
 * and node-wide claims register; and the directories used so far (a resident service counts their records for its
 * metrics: src/service/observability/metrics.ts).
 */
import type { NetConf } from '../cni/types';
import type { HostOs } from '../hns/host-os';
import type { Logger } from '../log/logger';
import type { CrashHook } from '../state/atomic';
import { ClaimRegistry } from '../state/claims';
import { StateStore } from '../state/store';

export interface StateStoresOptions {
  /** The OS helpers (process start times for intents), asked when a store is opened. */
  os: () => HostOs;
  now: () => number;
  /** Test builds only: called at every state write point (crash-point matrix). */
  crash?: CrashHook;
  /** The node-wide register of live claims (src/state/claims.ts); none when undefined. */
  claimsDir?: string;
}

/** State directories remembered for stateDirs, at most. */
const MAX_STATE_DIRS = 16;

export class StateStores {
  private readonly dirs = new Set<string>();

  constructor(private readonly options: StateStoresOptions) {}

  store(conf: Pick<NetConf, 'stateDir'>, log: Logger): StateStore {
    // Bounded: a scrape reads each of them (src/service/observability/tally.ts); real nodes have one or two.
    if (this.dirs.size < MAX_STATE_DIRS) this.dirs.add(conf.stateDir);
    const { crash, claimsDir } = this.options;
    return new StateStore(conf.stateDir, {
      os: this.options.os(),
      now: this.options.now,
      log,
      ...(crash ? { crash } : {}),
      ...(claimsDir ? { registry: new ClaimRegistry(claimsDir) } : {}),
    });
  }

  get claimsDir(): string | undefined {
    return this.options.claimsDir;
  }

  /** The state directories the verbs of this process have used. */
  get stateDirs(): readonly string[] {
    return [...this.dirs];
  }
}
