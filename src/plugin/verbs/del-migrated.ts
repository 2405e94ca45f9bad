/**
 * DEL of a pod that has no record of ours — on a migrated node, usually a pod the previous plugin created: its
 * endpoint under that plugin's naming scheme is removed (peer-endpoints.ts, rule 2), and the pod's IPAM allocation
 * is kept while any HNS endpoint still holds one of its addresses (ip-holders.ts, rule 1).
 */
import type { VerbContext } from '../../cni/types';
import type { EndpointInfo, HnsApi } from '../../hns/api';
import type { Owner } from '../../state/records';
import type { DelDeps } from './del-deps';
import { addressesOf, heldAddresses, holdersOf, keepForHolders } from '../ip-holders';
import { azureNicNetworkName } from '../../orphans/peer-networks';
import { runtimeMac } from '../modes/delegated-nic';
import { removePeerEndpoints } from '../peer-endpoints';
import { step } from '../to-cni-error';

/**
 * Returns whether the IPAM allocation must be kept (then the tombstone says so and names the holders).
 * `listed`: a listing made after the DEL's own deletes, when it deleted nothing (so it is still HNS's state).
 */
export async function delMigrated(
  d: DelDeps,
  ctx: VerbContext,
  owner: Owner,
  listed?: EndpointInfo[],
): Promise<{ keepIp: boolean }> {
  const { api, store } = d;
  const { conf, attachment } = ctx;
  const endpoints = listed ?? (await step('listing HNS endpoints', () => api.listEndpoints()));
  const nicNetwork = await azureNicNetwork(api, ctx);
  const peers = await step("removing the previous plugin's endpoint", () =>
    removePeerEndpoints(
      d,
      conf.adopt,
      { pod: owner, netns: attachment.netns, network: conf.name },
      {
        listed: endpoints,
        azureNicNetworkId: nicNetwork,
      },
    ),
  );
  if (!ctx.ipam.configured) return { keepIp: false };
  // The pod's own endpoints' addresses (not those of another pod's endpoint that only shares a name with it).
  const found = [...peers.removed, ...peers.kept.filter((k) => !k.elsewhere)].map((p) => p.endpoint);
  // And what an earlier DEL of the pod found held (a repeated DEL gets no prevResult from libcni).
  const earlier = store.getTombstone(owner)?.heldBy?.map((h) => h.address) ?? [];
  const addresses = [
    ...new Set([...addressesOf(conf.prevResult), ...found.flatMap((e) => addressesOf(e)), ...earlier]),
  ];
  // After a removal HNS must be asked again; otherwise the listing above is still what HNS holds.
  const holders = peers.removed.length > 0 ? await heldAddresses(api, addresses) : holdersOf(endpoints, addresses);
  if (holders.length === 0) return { keepIp: false };
  await keepForHolders(d, owner, holders, conf.name);
  return { keepIp: true };
}

/**
 * In delegatedNic mode with the Azure opt-in: the id of Azure's network for the request's NIC (azure-<mac>), on
 * which Azure's endpoint of the pod's delegated NIC is (peer-endpoints.ts). Only asked when it can matter.
 */
async function azureNicNetwork(api: HnsApi, ctx: VerbContext): Promise<string | undefined> {
  if (ctx.conf.mode !== 'delegatedNic' || !ctx.conf.adopt.includes('azure')) return undefined;
  let mac: string | undefined;
  try {
    mac = runtimeMac({ plan: ctx });
  } catch {
    return undefined;
  }
  if (!mac) return undefined;
  const name = azureNicNetworkName(mac);
  return (await step(`looking up HNS network "${name}"`, () => api.findNetworkByName(name)))?.id;
}
