/**
 * Bridge mode (the default): every pod gets one endpoint in a shared network (L2Bridge, Overlay, NAT or L2Tunnel)
 * that the operator names. The network is found by name, or created when the configuration asks for it; it is not
 * an attachment's, so it is never deleted by DEL or the audit (its name is not one of ours).
 */
import { CniCode, CniError } from '../cni/cni-error';
import type { NetworkInfo } from '../hns/api';
import { isAlreadyExists } from '../hns/hcn-error';
import { familyOf, firstHost, networkOf } from '../net/ipv4';
import type { AttachmentRecord, IntentRecord } from '../state/records';
import type { AddContext, Addressing } from './add-context';
import { createAttachment } from './endpoint';
import { requireIpv6 } from './families';
import { step } from './to-cni-error';

export async function findOrCreateNetwork(a: AddContext): Promise<NetworkInfo> {
  const { conf } = a;
  const found =
    a.listedNetworks?.find((n) => n.name === conf.networkName) ??
    (await step(`looking up HNS network "${conf.networkName}"`, () => a.api.findNetworkByName(conf.networkName)));
  if (found) {
    if (found.type !== conf.networkType) {
      a.log.warn({ network: found.name, type: found.type, configured: conf.networkType }, 'the HNS network has another type than configured; using it');
    }
    return found;
  }
  if (!conf.createNetwork) {
    throw new CniError(
      CniCode.NETWORK_NOT_FOUND,
      `HNS network "${conf.networkName}" does not exist; create it, or set "createNetwork": true with a "subnet"`,
    );
  }
  // Both families' subnets when the configuration is dual-stack: one network, two subnets (HCN v2 Ipams).
  const subnets = (conf.subnets ?? [])
    .filter((s) => s.prefix)
    .map((s) => {
      const prefix = networkOf(s.prefix!)!;
      const gateway = s.gateway ?? firstHost(prefix);
      return gateway ? { prefix, gateway } : { prefix };
    });
  a.log.info({ network: conf.networkName, type: conf.networkType, subnets: subnets.map((s) => s.prefix), adapter: conf.adapterName }, 'creating the bridge network');
  try {
    return await step(`creating HNS network "${conf.networkName}"`, () =>
      a.api.createNetwork({
        name: conf.networkName,
        type: conf.networkType,
        flags: 0,
        ...(conf.adapterName ? { adapterName: conf.adapterName } : {}),
        subnets,
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
  // One subnet per family (the first of each, as sdnbridge reads an endpoint's first address of each family).
  const subnets = ([4, 6] as const).flatMap((f) => network.subnets.filter((s) => familyOf(s.prefix) === f).slice(0, 1));
  const v6 = subnets.find((s) => familyOf(s.prefix) === 6);
  // HNS assigns the addresses: an IPv6 subnet means an IPv6 address, which HNS v1 or an old HNS cannot give.
  if (addr.ips.length === 0 && v6) await requireIpv6(a.choice, a.api.hcn, `the subnet ${v6.prefix} of HNS network "${network.name}"`);
  const families = addr.ips.length ? addr.ips.map((ip) => familyOf(ip.address)) : subnets.map((s) => familyOf(s.prefix));
  const gateways = ([4, 6] as const)
    .filter((f) => families.includes(f))
    .map((f) => addr.ips.find((ip) => familyOf(ip.address) === f)?.gateway ?? subnets.find((s) => familyOf(s.prefix) === f)?.gateway ?? a.conf.subnets?.find((s) => s.family === f)?.gateway)
    .filter((g): g is string => g !== undefined);
  return createAttachment(a, addr, intent, { network, networkOwned: false, mode: 'bridge', subnets, gateways });
}
