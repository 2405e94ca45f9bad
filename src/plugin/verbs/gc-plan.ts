/**
 * The plan of a GC: the configuration, the owners cni.dev/valid-attachments lists, the state as read once, and whether
 * the previous plugin's endpoints are judged too — plain data made once by `prepare`, never changed afterwards. What
 * the steps (gc.ts) run with is the GcRun around it: the dependencies, the HNS API chosen, the state store, IPAM, the
 * log, and the report the steps fill.
 */
import type { Attachment, ConfContext, IpamClient, NetConf } from '../../cni/types';
import type { HnsApi } from '../../hns/api';
import type { Logger } from '../../log/logger';
import { ownerKey } from '../../state/records';
import type { StateSnapshot, StateStore } from '../../state/store';
import type { Auditor } from '../auditor';
import type { HostHns } from '../host-hns';
import type { StateStores } from '../state-stores';
import { step, toCniError } from '../to-cni-error';

/** What GC uses: HNS, the state store, the auditor, and the clock its liveness checks read. */
export type GcDeps = {
  readonly hns: HostHns;
  readonly stores: StateStores;
  readonly auditor: Auditor;
  readonly now: () => number;
};

export interface GcReport {
  removedAttachments: string[];
  deletedObjects: string[];
  errors: string[];
}

export interface GcPlan {
  readonly conf: NetConf;
  /** The attachments cni.dev/valid-attachments lists, and their owners' keys. */
  readonly validAttachments: readonly Attachment[];
  readonly valid: ReadonlySet<string>;
  /** The state as read once, after the API was chosen. */
  readonly state: StateSnapshot;
  /** Whether the previous plugin's endpoints are judged too (not by `hcn-cni uninstall`). */
  readonly peers: boolean;
}

/** What every step of one GC shares: the plan, the capabilities, and the report it fills. */
export interface GcRun {
  readonly plan: GcPlan;
  readonly deps: GcDeps;
  readonly api: HnsApi;
  readonly store: StateStore;
  readonly ipam: IpamClient;
  readonly log: Logger;
  readonly report: GcReport;
}

export async function prepare(ctx: ConfContext, deps: GcDeps, options: { peers?: boolean }): Promise<GcRun> {
  const { conf, log } = ctx;
  // parseNetConf gives every GC its list (an empty one for libcni's GC without arguments, which means none is
  // valid); a GC without one is a caller that skipped the parser, and guessing "none valid" would delete everything.
  if (!conf.validAttachments) throw new Error('GC without a parsed cni.dev/valid-attachments list');
  const valid = new Set(conf.validAttachments.map(ownerKey));
  const store = deps.stores.store(conf, log);
  const { api } = await step('choosing the HNS API', () => deps.hns.api(conf));
  const report: GcReport = { removedAttachments: [], deletedObjects: [], errors: [] };
  const state = store.snapshot();
  const validAttachments = conf.validAttachments;
  const plan: GcPlan = { conf, validAttachments, valid, state, peers: options.peers !== false };
  return { plan, deps, api, store, ipam: ctx.ipam, log, report };
}

/**
 * Whether a record or intent is of this network. Another conflist's attachments and intents (same stateDir): its
 * runtime's GC lists them, ours does not and must not judge them.
 */
export function ours(plan: GcPlan, r: { cniNetwork?: string }): boolean {
  return r.cniNetwork === undefined || r.cniNetwork === plan.conf.name;
}

/** Records an error and continues. */
export function note(run: GcRun, what: string, e: unknown): void {
  const err = toCniError(e, what);
  const msg = `${what}: ${err.message}`;
  run.report.errors.push(msg);
  // The details (HNS's answer, or the stack of an unexpected failure) go to the log, not the runtime's message.
  run.log.error({ gc: 'error', err: msg, ...(err.details ? { details: err.details } : {}) }, 'GC error; continuing');
}
