/**
 * What the steps of a DEL pass each other (verbs/del.ts and the del-*.ts beside it): the plan (plain data, made once
 * by `prepare`: verbs/del-plan.ts), the run it is carried out with (the capabilities), and the mode's part in a DEL.
 * Types only, as add-steps.ts is for ADD: every step's module imports them from here.
 */
import type { AttachmentArgs, IpamClient, NetConf } from '../cni/types';
import type { HnsApi } from '../hns/api';
import type { Logger } from '../log/logger';
import type { AttachmentRecord, Owner } from '../state/records';
import type { StateStore } from '../state/store';
import type { AddressBook } from './address-book';
import type { HostHns } from './host-hns';
import type { StateStores } from './state-stores';

/** What DEL uses of the plugin's dependencies: HNS, the state store, and the holders this process knows. */
export type DelVerbDeps = {
  readonly hns: HostHns;
  readonly stores: StateStores;
  readonly addressBook: AddressBook | undefined;
};

/**
 * What DEL's steps use — and GC's and the self-test's, which delete as DEL does (verbs/del-recorded.ts,
 * verbs/del-unrecorded.ts, verbs/del-migrated.ts): the HNS facade, the state store, the log.
 */
export interface DelDeps {
  readonly api: HnsApi;
  readonly store: StateStore;
  readonly log: Logger;
}

/** The plan of a DEL: who, on which network, and what the state says of it — read once, never changed. */
export interface DelPlan {
  readonly conf: NetConf;
  readonly attachment: Readonly<AttachmentArgs>;
  readonly owner: Owner;
  /** The committed record, or undefined: the ADD never committed (killed, timed out, or never ran). */
  readonly record: AttachmentRecord | undefined;
  /** The record's mode (what was created), else the configuration's; chosen once (modes/choose.ts). */
  readonly mode: DelMode;
}

/** What a DEL's steps run with: the plan, and the capabilities it is carried out through. */
export interface DelRun {
  readonly plan: DelPlan;
  /** The HNS API chosen; undefined when the host has none (then nothing of ours can have been created through it). */
  readonly api: HnsApi | undefined;
  readonly store: StateStore;
  readonly ipam: IpamClient;
  readonly log: Logger;
  /** Who holds which address, as this process knows it (the resident service only: address-book.ts). */
  readonly addressBook: AddressBook | undefined;
}

/** A DEL that has an HNS API to delete through. */
export type DelRunWithApi = DelRun & { readonly api: HnsApi };

/**
 * What the two modes do differently in a DEL (modes/bridge.ts, modes/delegated-nic.ts), chosen once: delegated-NIC
 * mode made a network of the pod's own, which goes with it; bridge mode's network is every pod's and stays.
 */
export interface DelMode {
  /** After the endpoint is gone: the attachment's own network deleted unless held; returns whether it went. */
  removeOwnNetwork(d: Pick<DelDeps, 'api' | 'log'>, rec: AttachmentRecord): Promise<boolean>;
  /**
   * The id of the previous plugin's network for this request's NIC (Azure's azure-<mac>, delegated NIC only), on
   * which that plugin's endpoint of the pod is (peer-endpoints.ts); undefined where it cannot matter.
   */
  previousNicNetwork(api: HnsApi, plan: Pick<DelPlan, 'conf' | 'attachment'>): Promise<string | undefined>;
}
