/**
 * The HNS work an ADD does for its own safety, whatever the size of the node: the whole node's audit runs in the
 * background (the resident service's node agent) or when it is due (the standalone executable: audit-due.ts), and
 * an ADD asks HNS only about what concerns it — by name, through HCN query filters (microsoft/hcsshim
 * hcn/hcnendpoint.go GetEndpointByName, hcn/hcnnetwork.go GetNetworkByName), never for everything:
 *  - its own deterministic names: an earlier attempt of this attachment, killed, left them (its intent is dead);
 *  - in delegated-NIC mode, the network that holds the NIC it needs (seed 000: a leaked network holds it for good);
 *  - the endpoints that hold an address HNS refused to give it (HCN_E_ADDR_INVALID_OR_RESERVED): a stale endpoint.
 * Each is judged by the audit's own rules (detect, and sweep's re-check just before each delete) against the state
 * read after HNS answered, so nothing live or in flight is touched.
 */
import { sameId, type EndpointInfo, type NetworkInfo } from '../hns/api';
import { endpointName } from '../orphans/ownership';
import type { SweepResult } from '../orphans/sweep';
import type { StateSnapshot } from '../state/store';
import type { AddRun } from './add-steps';
import { holdersOf } from './ip-holders';
import { step } from './to-cni-error';

/** Removes what earlier, dead attempts of this attachment left under its names. Runs before the intent is written. */
export async function clearOwnLeftovers(a: AddRun): Promise<void> {
  const endpoints = await step(`looking up HNS endpoints by this attachment's name`, () =>
    a.api.findEndpoints({ name: endpointName(a.plan.owner) }),
  );
  const networks: NetworkInfo[] = [];
  const ownNetwork = a.plan.mode.ownNetworkName(a.plan.owner);
  if (ownNetwork !== undefined) {
    const net = await step(`looking up the HNS network by this attachment's name`, () =>
      a.api.findNetworkByName(ownNetwork),
    );
    if (net) {
      networks.push(net);
      endpoints.push(...(await endpointsOn(a, net, endpoints)));
    }
  }
  if (endpoints.length + networks.length === 0) return;
  await auditThese(a, { networks, endpoints }, a.store.ownerSnapshot(a.plan.owner));
}

/**
 * Audits the network that holds the NIC (and the endpoints on it) against the whole state — its name carries
 * another owner's tag, and only the whole state says whose — except this ADD's own intent, which has created
 * nothing yet. True when the network is gone afterwards.
 */
export async function auditNicHolder(a: AddRun, holder: NetworkInfo, ownIntent?: string): Promise<boolean> {
  const endpoints = await endpointsOn(a, holder, []);
  const state = a.store.snapshot();
  const shown: StateSnapshot = ownIntent
    ? { ...state, intents: state.intents.filter((i) => i.id !== ownIntent) }
    : state;
  const swept = await auditThese(a, { networks: [holder], endpoints }, shown);
  return swept.deleted.some((j) => j.kind === 'network' && sameId(j.id, holder.id));
}

/**
 * HNS refused the addresses (another endpoint of the network holds one): audits the endpoints that hold them. True
 * when one of them was removed, so the create is worth one more try.
 */
export async function auditAddressHolders(a: AddRun, network: NetworkInfo, addresses: string[]): Promise<boolean> {
  const onNetwork = await step(`listing the endpoints of HNS network "${network.name}"`, () =>
    a.api.findEndpoints({ networkId: network.id }),
  );
  const holders = holdersOf(onNetwork, addresses);
  const endpoints = onNetwork.filter((e) => holders.some((h) => sameId(h.id, e.id)));
  if (endpoints.length === 0) return false;
  const swept = await auditThese(a, { networks: [], endpoints }, a.store.snapshot());
  return swept.deleted.length > 0;
}

async function endpointsOn(a: AddRun, net: NetworkInfo, known: EndpointInfo[]): Promise<EndpointInfo[]> {
  const on = await step(`listing the endpoints of HNS network "${net.name}"`, () =>
    a.api.findEndpoints({ networkId: net.id }),
  );
  return on.filter((e) => !known.some((k) => sameId(k.id, e.id)));
}

function auditThese(
  a: AddRun,
  shown: { networks: NetworkInfo[]; endpoints: EndpointInfo[] },
  state: StateSnapshot,
): Promise<SweepResult> {
  return step(`auditing this attachment's leftovers`, () =>
    a.deps.auditor.auditShown({ conf: a.plan.conf, api: a.api, store: a.store, log: a.log }, shown, state),
  );
}
