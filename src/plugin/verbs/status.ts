/**
 * STATUS (spec 1.1): 0 when HNS answers and the state is healthy. 50 when the plugin cannot serve ADD: HNS does
 * not answer, the configured API is not on this host, or the configuration has IPv6 addresses that the API or HNS
 * in use cannot carry (every ADD would fail with 2 or 107). 51 when it can, but existing pods may have limited
 * connectivity: a recorded pod's endpoint is missing from HNS (HNS restarted and dropped it) or not attached as
 * recorded (pod-health.ts), or a record is quarantined
 * (unreadable, so that pod can neither be checked nor cleaned up). containerd turns a failing STATUS into
 * NetworkReady=false, so only real degradation reports non-zero. As ADD and DEL: `prepare` says whether ADD can be
 * served (the API chosen, the addresses it must carry), then the pods are judged; it changes nothing.
 */
import { CniCode, CniError } from '../../cni/cni-error';
import type { ConfContext } from '../../cni/types';
import type { HnsApi } from '../../hns/api';
import { ownerKey } from '../../state/records';
import type { StateSnapshot } from '../../state/store';
import { requireIpv6Asking, staticIpv6 } from '../families';
import { judgePods, type PodVerdict } from '../pod-health';
import { toCniError } from '../to-cni-error';
import type { HostHns } from '../host-hns';
import type { StateStores } from '../state-stores';

/** What STATUS uses: HNS and the state store; it changes nothing. */
export type StatusDeps = { readonly hns: HostHns; readonly stores: StateStores };

export async function status(ctx: ConfContext, deps: StatusDeps): Promise<void> {
  const { conf, log } = ctx;
  const api = await prepare(ctx, deps);
  const state = deps.stores.store(conf, log).snapshot();
  const problems = await problemsOf(api, state);
  if (problems.length > 0) {
    throw new CniError(
      CniCode.PLUGIN_NOT_AVAILABLE_LIMITED_CONNECTIVITY,
      `${problems.length} existing attachment(s) may have limited connectivity`,
      problems.join('\n'),
    );
  }
  if (ctx.ipam.configured) await ctx.ipam.status();
  log.debug({ attachments: state.attachments.length }, 'STATUS ok');
}

/** Whether ADD can be served: the API it will use chosen and answering, the configured IPv6 carried; else 50. */
async function prepare(ctx: ConfContext, deps: StatusDeps): Promise<HnsApi> {
  const { conf } = ctx;
  try {
    const choice = await deps.hns.api(conf);
    const { api } = choice;
    const v6 = staticIpv6(conf);
    if (v6) await requireIpv6Asking(choice, api.hcn, `"${v6[0]}" ${JSON.stringify(v6[1])}`);
    // Asked through the API that ADD will use: with HCN chosen, HcnEnumerateEndpoints (ids only). The v2 listing may
    // go through HNSCall, which answers on a host whose HCN does not work, and STATUS must not say 0 there.
    await api.endpointIds();
    return api;
  } catch (e) {
    throw notAvailable(e);
  }
}

/** What limits existing pods: an endpoint missing or not attached as recorded, a record quarantined. */
async function problemsOf(api: HnsApi, state: StateSnapshot): Promise<string[]> {
  const owned = state.attachments.filter((r) => r.mode !== 'shared');
  let verdicts: PodVerdict[] = [];
  try {
    // Each pod judged by what it needs (pod-health.ts): its endpoint there and attached as recorded.
    if (owned.length > 0) verdicts = await judgePods(api, owned, await api.listEndpoints());
  } catch (e) {
    throw notAvailable(e);
  }
  return [
    ...verdicts.filter((v) => v.problem).map((v) => `attachment ${ownerKey(v.record)}: ${v.detail}`),
    ...state.quarantined.map(
      (q) =>
        `unreadable ${q.kind} record${q.owner ? ` of ${ownerKey(q.owner)}` : ''} quarantined as ${q.file}: ${q.reason}`,
    ),
  ];
}

function notAvailable(e: unknown): CniError {
  const err = toCniError(e, 'asking HNS');
  return new CniError(CniCode.PLUGIN_NOT_AVAILABLE, `hcn-cni cannot serve ADD: ${err.message}`, err.details);
}
