/**
 * The plan of an ADD: everything it decides before it touches state or HNS, gathered once by `prepare` — plain data,
 * never changed afterwards. What the steps run with (the dependencies, the HNS facade, the state store, IPAM, the log
 * and the undo log that grows as objects are created) is the `AddRun` beside it; each step (add.ts) takes the run and
 * what the steps before it returned, and returns what it decided itself.
 */
import type { VerbContext } from '../cni/types';
import { newGuid } from '../net/guid';
import type { Owner } from '../state/records';
import type { AddMode, AddPlan, AddRun, HostApi } from './add-steps';
import type { ApiChoice } from './api-version';
import { recordedAttach } from './attach';
import { endpointPolicies, networkPolicies } from './endpoint-config';
import { requireIpv6, staticIpv6 } from './families';
import type { AttachTarget } from './netns';
import { step, toCniError } from './to-cni-error';
import { Undo } from './undo';

/** The API's limits checked, the HNS version asked (once: every later check reads it here), the policies translated. */
export async function prepare(
  ctx: VerbContext,
  on: Pick<AddRun, 'deps' | 'store'> & { mode: AddMode },
  choice: ApiChoice,
  target: Exclude<AttachTarget, { kind: 'shared' }>,
): Promise<AddRun> {
  const { conf, log } = ctx;
  const owner: Owner = { containerId: ctx.attachment.containerId, ifname: ctx.attachment.ifname };
  const { api, ...host } = await withHnsVersion(choice, staticIpv6(conf));
  const { mode } = on;
  let plan: AddPlan;
  try {
    mode.check(conf);
    const policies = endpointPolicies(conf, host.version, log, host.hnsVersion);
    const netPolicies = networkPolicies(conf);
    const nicFlags = mode.networkFlags(conf, host);
    plan = {
      conf,
      attachment: ctx.attachment,
      owner,
      choice: host,
      mode,
      attach: recordedAttach(target, owner.containerId),
      policies,
      networkPolicies: netPolicies,
      ...(nicFlags !== undefined ? { nicFlags } : {}),
    };
  } catch (e) {
    throw toCniError(e, 'translating policies');
  }
  return { plan, deps: on.deps, api, store: on.store, ipam: ctx.ipam, log, undo: new Undo() };
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
export function plannedId(choice: HostApi): string | undefined {
  return choice.version === 2 ? newGuid() : undefined;
}
