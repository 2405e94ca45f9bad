/**
 * Bridge mode (the default): every pod gets one endpoint in a shared network (L2Bridge, Overlay, NAT or L2Tunnel)
 * that the operator names. The network is found by name, or created when the configuration asks for it; it is not
 * an attachment's, so it is never deleted by DEL or the audit (its name is not one of ours).
 */
import { CniCode, CniError } from '../cni/cni-error';
import { managementIpOf, type NetworkInfo } from '../hns/api';
import { isAlreadyExists } from '../hns/hcn-error';
import { withOutboundNatExceptions } from '../hns/policies';
import type { TypedPolicy } from '../hns/schema';
import { parseIpv4 } from '../net/addr';
import { firstHost, networkOf } from '../net/ipv4';
import type { AttachmentRecord, IntentRecord } from '../state/records';
import type { AddContext, Addressing } from './add-context';
import { createAttachment } from './endpoint';
import { step } from './to-cni-error';

export async function findOrCreateNetwork(a: AddContext): Promise<NetworkInfo> {
  const { conf } = a;
  const found =
    a.listedNetworks?.find((n) => n.name === conf.networkName) ??
    (await step(`looking up HNS network "${conf.networkName}"`, () => a.api.findNetworkByName(conf.networkName)));
  if (found) {
    // The peers refuse a network of another type: win-overlay wants Overlay, win-bridge L2Bridge or L2Tunnel
    // (containernetworking/plugins plugins/main/windows/win-overlay, win-bridge: "is of unexpected type").
    const accepted = conf.networkTypeSet ? [conf.networkType] : ['L2Bridge', 'L2Tunnel'];
    if (!accepted.includes(found.type)) {
      throw new CniError(
        CniCode.INVALID_NETWORK_CONFIG,
        `invalid network configuration: HNS network "${found.name}" is of type ${found.type}, ` +
          (conf.networkTypeSet
            ? `not the configured "networkType" ${conf.networkType}`
            : 'and without "networkType" only L2Bridge or L2Tunnel networks are used (as win-bridge)') +
          `; set "networkType": "${found.type}" to attach to it`,
      );
    }
    return found;
  }
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
  const subnet = networkOf(conf.subnet!)!;
  const gateway = conf.gateway ?? firstHost(subnet);
  a.log.info({ network: conf.networkName, type: conf.networkType, subnet, adapter: conf.adapterName }, 'creating the bridge network');
  try {
    return await step(`creating HNS network "${conf.networkName}"`, () =>
      a.api.createNetwork({
        name: conf.networkName,
        type: conf.networkType,
        flags: 0,
        ...(conf.adapterName ? { adapterName: conf.adapterName } : {}),
        subnets: [{ prefix: subnet, ...(gateway ? { gateway } : {}) }],
        policies: a.networkPolicies,
      }),
    );
  } catch (e) {
    // Another pod's ADD created it a moment ago: use theirs.
    if (isAlreadyExists((e as { cause?: unknown }).cause)) {
      const again = await a.api.findNetworkByName(conf.networkName);
      if (again) return again;
    }
    throw e;
  }
}

/** Creates the endpoint the intent planned in the shared network and commits the attachment. */
export async function addBridge(a: AddContext, addr: Addressing, intent: IntentRecord): Promise<AttachmentRecord> {
  const network = await findOrCreateNetwork(a);
  const subnet = network.subnets[0];
  const gateway = addr.ips[0]?.gateway ?? subnet?.gateway ?? a.conf.gateway;
  const overlay = await overlaySettings(a, network, addr);
  a.policies = withOutboundNatExceptions([...a.policies, ...overlay.policies], a.conf.ipMasq && subnet ? [subnet.prefix] : []);
  return createAttachment(a, addr, intent, { network, networkOwned: false, mode: 'bridge', subnet, gateway, ...(overlay.mac ? { mac: overlay.mac } : {}) });
}

/**
 * What win-overlay adds on an Overlay network (containernetworking/plugins plugins/main/windows/win-overlay and
 * pkg/hns/netconf_windows.go ApplyDefaultPAPolicy): a ProviderAddress policy with the network's ManagementIP unless
 * one with that address is configured, and, when IPAM chose the IPv4 address, the MAC endpointMacPrefix + its four
 * bytes (0E-2A-0A-84-00-05 for 10.132.0.5), so the MAC of a pod is known from its IP across the cluster.
 */
async function overlaySettings(a: AddContext, network: NetworkInfo, addr: Addressing): Promise<{ policies: TypedPolicy[]; mac?: string }> {
  if (network.type !== 'Overlay') return { policies: [] };
  const policies: TypedPolicy[] = [];
  const pa = await step(`reading the ManagementIP of HNS network "${network.name}"`, () => managementIpOf(a.api, network));
  const havePa = a.policies.some((p) => p.Type === 'ProviderAddress' && p.Settings?.ProviderAddress === pa);
  if (pa && !havePa) policies.push({ Type: 'ProviderAddress', Settings: { ProviderAddress: pa } });
  const v4 = addr.ips.map((ip) => ip.address.split('/')[0]!).find((ip) => parseIpv4(ip) !== undefined);
  if (!addr.fromIpam || v4 === undefined) return { policies };
  const mac = `${a.conf.endpointMacPrefix}-${v4.split('.').map((b) => Number(b).toString(16).padStart(2, '0').toUpperCase()).join('-')}`;
  return { policies, mac };
}
