/**
 * The plan of an ADD: everything it decides before it touches state or HNS, gathered once by `prepare` and never
 * changed afterwards. Each later step (add.ts) takes the plan and what the steps before it returned, and returns what
 * it decided itself; only the rollback log (`undo`) grows as HNS objects are created.
 */
import type { NetConf, VerbContext } from '../cni/types';
import type { HnsApi } from '../hns/api';
import type { TypedPolicy } from '../hns/schema';
import type { Logger } from '../log/logger';
import { newGuid } from '../net/guid';
import type { Owner } from '../state/records';
import type { StateStore } from '../state/store';
import type { ApiChoice } from './api-version';
import { recordedAttach, type RecordedAttach } from './attach';
import { endpointPolicies, networkPolicies, nicNetworkFlags } from './endpoint-config';
import { requireIpv6, staticIpv6 } from './families';
import type { AttachTarget } from './netns';
import type { PluginRuntime } from './runtime';
import { step, toCniError } from './to-cni-error';
import { Undo } from './undo';

export interface AddPlan {
  readonly ctx: VerbContext;
  readonly conf: NetConf;
  readonly rt: PluginRuntime;
  readonly log: Logger;
  readonly store: StateStore;
  /** The API chosen for the host, with the HNS version asked once (undefined only where HNS has no HNSCall). */
  readonly choice: Readonly<ApiChoice>;
  readonly api: HnsApi;
  readonly owner: Owner;
  readonly attach: RecordedAttach;
  /** Endpoint policies, already validated for the API in use (without the pod-IP dependent ones). */
  readonly policies: readonly TypedPolicy[];
  /** Network policies (AdditionalArgs NetworkPolicy), for networks this ADD creates. */
  readonly networkPolicies: readonly TypedPolicy[];
  /** Flags of a delegated-NIC network (nicNetworkFlags), decided before anything is created. */
  readonly nicFlags?: number;
  /** What this ADD created so far, undone if it fails. */
  readonly undo: Undo;
}

/** The API's limits checked, the HNS version asked (once: every later check reads it here), the policies translated. */
export async function prepare(
  ctx: VerbContext,
  rt: PluginRuntime,
  store: StateStore,
  choice: ApiChoice,
  target: Exclude<AttachTarget, { kind: 'shared' }>,
): Promise<AddPlan> {
  const { conf, log } = ctx;
  const owner: Owner = { containerId: ctx.attachment.containerId, ifname: ctx.attachment.ifname };
  const host = await withHnsVersion(choice, staticIpv6(conf));
  let policies;
  let netPolicies;
  let nicFlags: number | undefined;
  try {
    policies = endpointPolicies(conf, host.version, log, host.hnsVersion);
    netPolicies = networkPolicies(conf);
    if (conf.mode === 'delegatedNic') nicFlags = nicNetworkFlags(conf, host.version, host.hnsVersion);
  } catch (e) {
    throw toCniError(e, 'translating policies');
  }
  return {
    ctx,
    conf,
    rt,
    log,
    store,
    choice: host,
    api: host.api,
    owner,
    attach: recordedAttach(target, owner.containerId),
    policies,
    networkPolicies: netPolicies,
    ...(nicFlags !== undefined ? { nicFlags } : {}),
    undo: new Undo(),
  };
}

/**
 * The choice with the HNS version (auto asked it already to choose). IPv6 in the configuration on an API or host that
 * cannot carry it is refused before anything is written or created — on HNS v1 before HNS is asked anything.
 */
async function withHnsVersion(choice: ApiChoice, v6: [string, string] | undefined): Promise<ApiChoice> {
  const what = v6 && `"${v6[0]}" ${JSON.stringify(v6[1])}`;
  if (what && choice.version === 1) requireIpv6(choice, what);
  const hnsVersion = choice.hnsVersion ?? (await step('asking HNS for its version', () => choice.api.hnsVersion()));
  const host = { ...choice, ...(hnsVersion ? { hnsVersion } : {}) };
  if (what) requireIpv6(host, what);
  return host;
}

/** An id chosen before the create, so a DEL racing the create can name it; only HCN (v2) honours it. */
export function plannedId(a: Pick<AddPlan, 'choice'>): string | undefined {
  return a.choice.version === 2 ? newGuid() : undefined;
}
