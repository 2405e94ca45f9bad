/**
 * DEL of a pod that has no record of ours — on a migrated node, usually a pod the previous plugin created: its
 * endpoint under that plugin's naming scheme is removed (peer-endpoints.ts, rule 2), and the pod's IPAM allocation
 * is kept while any HNS endpoint still holds one of its addresses (ip-holders.ts, rule 1).
 */
import type { EndpointInfo } from '../../hns/api';
import type { DelRunWithApi } from '../del-steps';
import { addressesOf, heldAddresses, holdersOf, keepForHolders } from '../ip-holders';
import { removePeerEndpoints } from '../peer-endpoints';
import { step } from '../to-cni-error';

/**
 * Returns whether the IPAM allocation must be kept (then the tombstone says so and names the holders).
 * `listed`: a listing made after the DEL's own deletes, when it deleted nothing (so it is still HNS's state).
 */
export async function delMigrated(d: DelRunWithApi, listed?: EndpointInfo[]): Promise<{ keepIp: boolean }> {
  const { api, store, plan } = d;
  const { conf, attachment, owner } = plan;
  const endpoints = listed ?? (await step('listing HNS endpoints', () => api.listEndpoints()));
  // In delegatedNic mode with the Azure opt-in, Azure's endpoint of the pod's delegated NIC is on Azure's network for
  // that NIC (modes/delegated-nic.ts).
  const nicNetwork = await plan.mode.previousNicNetwork(api, plan);
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
  if (!d.ipam.configured) return { keepIp: false };
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
