/**
 * Bridge mode (the default): every pod gets one endpoint in a shared network (L2Bridge, Overlay, NAT or L2Tunnel)
 * that the operator names. The network is found by name, or created when the configuration asks for it; it is not
 * an attachment's, so it is never deleted by DEL or the audit (its name is not one of ours).
 */
import { CniCode, CniError } from '../cni/cni-error';
import type { NetworkInfo } from '../hns/api';
import { isAlreadyExists } from '../hns/hcn-error';
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
  return createAttachment(a, addr, intent, { network, networkOwned: false, mode: 'bridge', subnet, gateway });
}
