/**
 * Bridge mode (the default): every pod gets one endpoint in a shared network (L2Bridge, Overlay, NAT or L2Tunnel)
 * that the operator names. The network is found by name, or created when the configuration asks for it; it is not
 * an attachment's, so it is never deleted by DEL or the audit (its name is not one of ours).
 */
import { CniCode, CniError } from '../../cni/cni-error';
import { managementIpOf, type NetworkInfo } from '../../hns/api';
import { hasCode, hcnCause, isAlreadyExists } from '../../hns/hcn-error';
import { HR } from '../../hns/hresults';
import { withOutboundNatExceptions } from '../../hns/policies';
import type { TypedPolicy } from '../../hns/schema';
import { parseIpv4 } from '../../net/addr';
import { familyOf, firstHost, networkOf } from '../../net/ipv4';
import { endpointName } from '../../orphans/ownership';
import type { IntentRecord, PlannedObject } from '../../state/records';
import { plannedId } from '../add-plan';
import type { AddMode, AddPlan, AddRun, Claimed } from '../add-steps';
import type { DelMode } from '../del-steps';
import type { RepairMode } from '../repair-steps';
import type { Addressing, EndpointPlacement, Placed } from '../add-steps';
import { placeEndpoint, refusable, refusedCreate } from '../endpoint';
import { addressesOf } from '../ip-holders';
import { auditAddressHolders } from '../own-objects';
import { requireIpv6 } from '../families';
import { step } from '../to-cni-error';

/** What a bridge-mode ADD plans before it allocates anything: its endpoint in the shared network. */
export function planBridge(a: AddRun): { planned: PlannedObject[]; mac?: string } {
  const id = plannedId(a.plan.choice);
  return { planned: [{ kind: 'endpoint', name: endpointName(a.plan.owner), ...(id ? { id } : {}) }] };
}

/** The HNS network types a bridge-mode pod can attach to (NetConf networkType). */
const BRIDGE_NETWORK_TYPES: readonly string[] = ['L2Bridge', 'Overlay', 'NAT', 'L2Tunnel'];

/** What finding or creating the shared network needs (an ADD, or the service's network at start). */
export interface NetworkContext {
  readonly plan: Pick<AddPlan, 'conf' | 'choice' | 'networkPolicies'>;
  readonly deps: Pick<AddRun['deps'], 'networks'>;
  readonly api: AddRun['api'];
  readonly log: AddRun['log'];
}

/**
 * The shared network: from the audit's listing (`listed`, when this ADD audited the node), else remembered by this
 * process (a resident service serves many ADDs: it is re-read once a create says it is gone), else asked of HNS by
 * name.
 */
export async function findOrCreateNetwork(a: NetworkContext, listed?: readonly NetworkInfo[]): Promise<NetworkInfo> {
  const { conf } = a.plan;
  const version = a.plan.choice.version;
  const found =
    listed?.find((n) => n.name === conf.networkName) ??
    a.deps.networks.known(version, conf.networkName) ??
    (await step(`looking up HNS network "${conf.networkName}"`, () => a.api.findNetworkByName(conf.networkName)));
  if (!found) return createBridgeNetwork(a);
  acceptNetworkType(conf, found);
  a.deps.networks.remember(version, found);
  return found;
}

/**
 * An explicit networkType must match, as the peers refuse a network of another type (win-overlay wants Overlay,
 * win-bridge L2Bridge or L2Tunnel: containernetworking/plugins plugins/main/windows/win-overlay, win-bridge: "is
 * of unexpected type"). Without one, the existing network's type is used, if it is a bridge-mode type: a
 * win-overlay or sdnoverlay configuration migrated by changing only "type" attaches to its Overlay network.
 */
function acceptNetworkType(conf: AddPlan['conf'], found: NetworkInfo): void {
  const accepted: readonly string[] = conf.networkTypeSet ? [conf.networkType] : BRIDGE_NETWORK_TYPES;
  if (!accepted.includes(found.type)) {
    throw new CniError(
      CniCode.INVALID_NETWORK_CONFIG,
      `invalid network configuration: HNS network "${found.name}" is of type ${found.type}, ` +
        (conf.networkTypeSet
          ? `not the configured "networkType" ${conf.networkType}; set "networkType": "${found.type}" to attach to it`
          : `which bridge mode cannot attach to (${BRIDGE_NETWORK_TYPES.join(', ')})`),
    );
  }
}

/** The configuration allows creating the missing network, and says of which type. */
function mayCreateNetwork(conf: AddPlan['conf']): void {
  if (!conf.createNetwork) {
    throw new CniError(
      CniCode.NETWORK_NOT_FOUND,
      `HNS network "${conf.networkName}" does not exist; create it, or set "createNetwork": true with a "subnet"`,
    );
  }
  if (conf.createNetworkFromMaster && !conf.networkTypeSet) {
    // sdnbridge took the type of the network it creates from its own "type" (sdnbridge/L2Bridge, sdnoverlay/Overlay,
    // nat/NAT, l2tunnel/L2Tunnel: microsoft/windows-container-networking cni/cni.go), which the migration replaced.
    throw new CniError(
      CniCode.INVALID_NETWORK_CONFIG,
      `invalid network configuration: HNS network "${conf.networkName}" does not exist and "master" asks to create it, but its type is not known: ` +
        'sdnbridge took it from "type"; set "networkType" to "L2Bridge", "Overlay", "NAT" or "L2Tunnel" (what the old type meant)',
    );
  }
}

/** Creates the shared network the configuration describes; another pod's ADD creating it first is fine. */
async function createBridgeNetwork(a: NetworkContext): Promise<NetworkInfo> {
  const { conf } = a.plan;
  mayCreateNetwork(conf);
  // Both families' subnets when the configuration is dual-stack: one network, two subnets (HCN v2 Ipams).
  const subnets = (conf.subnets ?? [])
    .filter((s) => s.prefix)
    .map((s) => {
      const prefix = networkOf(s.prefix!)!;
      const gateway = s.gateway ?? firstHost(prefix);
      return gateway ? { prefix, gateway } : { prefix };
    });
  a.log.info(
    {
      network: conf.networkName,
      type: conf.networkType,
      subnets: subnets.map((s) => s.prefix),
      adapter: conf.adapterName,
    },
    'creating the bridge network',
  );
  try {
    const created = await step(`creating HNS network "${conf.networkName}"`, () =>
      a.api.createNetwork({
        name: conf.networkName,
        type: conf.networkType,
        flags: 0,
        ...(conf.adapterName ? { adapterName: conf.adapterName } : {}),
        subnets,
        policies: [...a.plan.networkPolicies],
      }),
    );
    a.deps.networks.remember(a.plan.choice.version, created);
    return created;
  } catch (e) {
    // Another pod's ADD created it a moment ago: use theirs.
    if (isAlreadyExists(hcnCause(e))) {
      const again = await a.api.findNetworkByName(conf.networkName);
      if (again) return again;
    }
    throw e;
  }
}

/**
 * The place step of bridge mode: the endpoint the intent planned, created in the shared network (found in `listed`,
 * what the audit just listed, when there is one). A create HNS refuses (a RefusedCreate) is tried once more when the
 * refusal has a cause this ADD can remove: the network is gone (this process remembered it: ask HNS again), or an
 * address is held by a stale endpoint (audit those that hold it: own-objects.ts).
 */
export async function placeInBridge(
  a: AddRun,
  addr: Addressing,
  intent: IntentRecord,
  listed: readonly NetworkInfo[] | undefined,
): Promise<Placed> {
  for (let attempt = 1; ; attempt++) {
    const network = await findOrCreateNetwork(a, listed);
    try {
      return await placeEndpoint(a, addr, intent, await bridgePlacement(a, addr, network));
    } catch (e) {
      const refused = refusedCreate(e);
      if (attempt > 1 || refused === undefined) throw e;
      if (hasCode(refused, HR.NETWORK_NOT_FOUND)) {
        a.log.warn({ network: network.name, id: network.id }, 'the HNS network is gone; looking it up again');
        a.deps.networks.remember(a.plan.choice.version, undefined, network.name);
        listed = undefined;
        continue;
      }
      const addresses = addressesOf(addr);
      if (
        hasCode(refused, HR.ADDR_INVALID_OR_RESERVED) &&
        a.plan.conf.audit &&
        (await auditAddressHolders(a, network, addresses))
      ) {
        a.log.warn({ addresses }, 'a stale endpoint held the address; removed it, creating again');
        continue;
      }
      throw e;
    }
  }
}

/** Where in the shared network: its subnets and gateways, and the endpoint policies it adds to the plan's. */
async function bridgePlacement(a: AddRun, addr: Addressing, network: NetworkInfo): Promise<EndpointPlacement> {
  // One subnet per family (the first of each, as sdnbridge reads an endpoint's first address of each family).
  const subnets = ([4, 6] as const).flatMap((f) => network.subnets.filter((s) => familyOf(s.prefix) === f).slice(0, 1));
  const v6 = subnets.find((s) => familyOf(s.prefix) === 6);
  // HNS assigns the addresses: an IPv6 subnet means an IPv6 address, which HNS v1 or an old HNS cannot give.
  if (addr.ips.length === 0 && v6)
    requireIpv6(a.plan.choice, `the subnet ${v6.prefix} of HNS network "${network.name}"`);
  const families = addr.ips.length
    ? addr.ips.map((ip) => familyOf(ip.address))
    : subnets.map((s) => familyOf(s.prefix));
  const gateways = ([4, 6] as const)
    .filter((f) => families.includes(f))
    .map(
      (f) =>
        addr.ips.find((ip) => familyOf(ip.address) === f)?.gateway ??
        subnets.find((s) => familyOf(s.prefix) === f)?.gateway ??
        a.plan.conf.subnets?.find((s) => s.family === f)?.gateway,
    )
    .filter((g): g is string => g !== undefined);
  const overlay = await overlaySettings(a, network, addr);
  // win-overlay's ipMasq: its network's (IPv4) subnet is not source-NATed.
  const masq = a.plan.conf.ipMasq ? subnets.filter((s) => familyOf(s.prefix) === 4).map((s) => s.prefix) : [];
  return {
    network,
    networkOwned: false,
    mode: 'bridge',
    subnets,
    gateways,
    ...(overlay.mac ? { mac: overlay.mac } : {}),
    policies: withOutboundNatExceptions([...a.plan.policies, ...overlay.policies], masq, 4),
  };
}

/**
 * What win-overlay adds on an Overlay network (containernetworking/plugins plugins/main/windows/win-overlay and
 * pkg/hns/netconf_windows.go ApplyDefaultPAPolicy): a ProviderAddress policy with the network's ManagementIP unless
 * one with that address is configured, and, when IPAM chose the IPv4 address, the MAC endpointMacPrefix + its four
 * bytes (0E-2A-0A-84-00-05 for 10.132.0.5), so the MAC of a pod is known from its IP across the cluster.
 */
async function overlaySettings(
  a: AddRun,
  network: NetworkInfo,
  addr: Addressing,
): Promise<{ policies: TypedPolicy[]; mac?: string }> {
  if (network.type !== 'Overlay') return { policies: [] };
  const policies: TypedPolicy[] = [];
  // Before the create: a network gone since this process found it is asked for again (placeInBridge).
  const pa = await refusable(`reading the ManagementIP of HNS network "${network.name}"`, () =>
    managementIpOf(a.api, network),
  );
  const havePa = a.plan.policies.some((p) => p.Type === 'ProviderAddress' && p.Settings?.ProviderAddress === pa);
  if (pa && !havePa) policies.push({ Type: 'ProviderAddress', Settings: { ProviderAddress: pa } });
  const v4 = addr.ips.map((ip) => ip.address.split('/')[0]!).find((ip) => parseIpv4(ip) !== undefined);
  if (!addr.fromIpam || v4 === undefined) return { policies };
  const mac = `${a.plan.conf.endpointMacPrefix}-${v4
    .split('.')
    .map((b) => Number(b).toString(16).padStart(2, '0').toUpperCase())
    .join('-')}`;
  return { policies, mac };
}

/**
 * Bridge mode: every pod's endpoint in one shared network (found, or created when the configuration says so). It
 * creates no network of a pod's own, so it has no network flags and no own network name, and a DEL leaves the
 * network (it is every pod's), and a repair does not create it when HNS no longer has it (it is the operator's, or every
 * pod's); "iov" is refused, as it applies to the pod's own NIC network only.
 */
export const bridgeMode: AddMode & DelMode & RepairMode = {
  name: 'bridge',
  check(conf) {
    if (conf.iov) {
      throw new CniError(
        CniCode.INVALID_NETWORK_CONFIG,
        'invalid network configuration: "iov" applies to mode "delegatedNic" only',
      );
    }
  },
  networkFlags: () => undefined,
  noSharedNetwork: undefined,
  ownNetworkName: () => undefined,
  claimPlan: (a) => planBridge(a),
  place: (a, got: Claimed) => placeInBridge(a, got.addr, got.intent, got.listed),
  removeOwnNetwork: () => Promise.resolve(false),
  previousNicNetwork: () => Promise.resolve(undefined),
  networkNotRecreated: (rec) => `HNS network "${rec.network.name}" (${rec.network.id}) is gone`,
};
