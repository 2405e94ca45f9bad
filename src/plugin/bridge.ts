/**
 * Bridge mode (the default): every pod gets one endpoint in a shared network (L2Bridge, Overlay, NAT or L2Tunnel)
 * that the operator names. The network is found by name, or created when the configuration asks for it; it is not
 * an attachment's, so it is never deleted by DEL or the audit (its name is not one of ours).
 */
import { CniCode, CniError } from '../cni/errors';
import type { IpConfig } from '../cni/types';
import type { NetworkInfo } from '../hns/api';
import { isAlreadyExists } from '../hns/errors';
import { contains, firstHost, networkOf, splitCidr } from '../net/ipv4';
import type { AttachmentRecord } from '../state/records';
import { commit, type AddContext, type Addressing } from './add-context';
import type { IntentRecord } from '../state/records';
import { detach, ensureAttached } from './attach';
import { podDns, withPodIp } from './endpoint-config';
import { step } from './errors';
import { buildResult } from './result';

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

/** Creates the endpoint the intent planned (its first planned object) and commits the attachment. */
export async function addBridge(a: AddContext, addr: Addressing, intent: IntentRecord): Promise<AttachmentRecord> {
  const { conf, owner } = a;
  const network = await findOrCreateNetwork(a);
  const subnet = network.subnets[0];
  const gateway = addr.ips[0]?.gateway ?? subnet?.gateway ?? conf.gateway;
  const dns = podDns(conf, a.ctx.attachment.args, addr.dns);
  const { name, id } = intent.planned.find((p) => p.kind === 'endpoint')!;
  const ips = addr.ips.map((ip) => splitCidr(ip.address)!).map((s) => ({ address: s.ip, prefixLength: s.prefix }));
  const ep = await step(`creating endpoint ${name}`, () =>
    a.api.createEndpoint(
      network,
      {
        name,
        ips,
        ...(gateway ? { gateway } : {}),
        dns: { servers: dns.nameservers, search: dns.search, ...(dns.domain ? { domain: dns.domain } : {}) },
        policies: withPodIp(a.policies, conf, ips[0]?.address),
      },
      id,
    ),
  );
  a.undo.push('delete the endpoint', () => a.api.deleteEndpoint(ep.id));
  await step(`attaching endpoint ${name}`, () => ensureAttached(a.api, ep, a.attach, { fresh: true }));
  a.undo.push('detach the endpoint', () => detach(a.api, ep.id, a.attach));

  // Without IPAM, HNS chose the address: report it with the subnet's prefix.
  const resultIps: IpConfig[] = addr.ips.length
    ? addr.ips
    : ep.ips.map((ip) => {
        const prefix = ip.prefixLength ?? Number(subnet?.prefix.split('/')[1] ?? 32);
        const gw = ep.gateway ?? (subnet && contains(subnet.prefix, ip.address) ? subnet.gateway : undefined);
        return gw ? { address: `${ip.address}/${prefix}`, gateway: gw } : { address: `${ip.address}/${prefix}` };
      });
  const resultGw = resultIps[0]?.gateway ?? gateway;
  const routes = addr.routes.length ? addr.routes : resultGw ? [{ dst: '0.0.0.0/0', gw: resultGw }] : [];
  const result = buildResult({
    ifname: owner.ifname,
    netns: a.ctx.attachment.netns,
    mac: ep.mac,
    ips: resultIps,
    routes,
    dns,
    ...(conf.mtu !== undefined && a.choice.version === 2 ? { mtu: conf.mtu } : {}),
  });
  const record: AttachmentRecord = {
    kind: 'attachment',
    schema: 1,
    containerId: owner.containerId,
    ifname: owner.ifname,
    netns: a.ctx.attachment.netns,
    cniNetwork: conf.name,
    mode: 'bridge',
    apiVersion: a.choice.version,
    network: { id: network.id, name: network.name, owned: false },
    endpoint: { id: ep.id, name, owned: true },
    ipamAllocated: addr.ipamAllocated,
    attach: a.attach,
    result: result as unknown as Record<string, unknown>,
    createdAt: a.rt.now(),
  };
  await commit(a, record, intent);
  return record;
}
