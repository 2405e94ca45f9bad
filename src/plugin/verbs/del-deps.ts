import type { HnsApi } from '../../hns/api';
import type { Logger } from '../../log/logger';
import type { StateStore } from '../../state/store';

/**
 * What DEL's steps use — and GC's and the self-test's, which delete as DEL does (del.ts, del-migrated.ts): the HNS
 * facade, the state store, the log.
 */
export interface DelDeps {
  readonly api: HnsApi;
  readonly store: StateStore;
  readonly log: Logger;
}
