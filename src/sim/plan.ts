/**
 * A planned call: what the operation table (op-table.ts, with op-table-v1.ts and op-table-sdn.ts) makes of a request
 * at acceptance, and what the engine orders, disturbs and runs. Its own module, so the tables and the engine share it
 * without importing each other.
 */
import type { SimHost } from './control-types';
import type { ObjectKind } from './model';
import type { Store } from './store';

export interface RunContext {
  store: Store;
  host: SimHost;
}

export interface Plan {
  op: string;
  api: 'v1' | 'v2' | 'hcs' | 'sim';
  kind: 'read' | 'mutation';
  /** Object id the call names or creates. */
  id?: string;
  creates?: { kind: ObjectKind; id: string };
  deletes?: { kind: ObjectKind; id: string };
  /** HNSCall answers failures inside its envelope (hr stays S_OK); Hcn* calls answer with the HRESULT. */
  envelope: boolean;
  /** The call's effect against committed state; returns the `result` text. Throws SimError (Hcn* only). */
  run(ctx: RunContext): string | null;
}
