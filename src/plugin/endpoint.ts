/**
 * The second half of every ADD, whatever the mode: create the endpoint the intent planned in the chosen network,
 * attach it where the netns says, build the CNI result, and commit the attachment record in place of the intent.
 */
import { CniCode, CniError } from '../cni/errors';
import type { IpConfig } from '../cni/types';
import { sameId, type NetworkInfo, type SubnetInfo } from '../hns/api';
import { contains, splitCidr } from '../net/ipv4';
import type { AttachmentRecord, IntentRecord } from '../state/records';
import { commit, updateIntent, type AddContext, type Addressing } from './add-context';
import { detach, ensureAttached } from './attach';
import { podDns, withPodIp } from './endpoint-config';
import { step } from './errors';
import { buildResult } from './result';

export interface EndpointPlacement {
  network: NetworkInfo;
  /** Whether the network is this attachment's own (delegated NIC) or shared (bridge). */
  networkOwned: boolean;
  mode: 'bridge' | 'delegatedNic';
  /** The subnet addresses come from when HNS assigns them (no IPAM). */
  subnet: SubnetInfo | undefined;
  gateway: string | undefined;
  /** A fixed MAC (delegated NIC); else HNS picks one from its pool. */
  mac?: string;
}

export async function createAttachment(a: AddContext, addr: Addressing, intent: IntentRecord, where: EndpointPlacement): Promise<AttachmentRecord> {
  const { conf, owner } = a;
  const { network, gateway, mac, subnet } = where;
  const dns = podDns(conf, a.ctx.attachment.args, addr.dns);
  const { name, id } = intent.planned.find((p) => p.kind === 'endpoint')!;
  const ips = addr.ips.map((ip) => splitCidr(ip.address)!).map((s) => ({ address: s.ip, prefixLength: s.prefix }));
  const ep = await step(`creating endpoint ${name}`, () =>
    a.api.createEndpoint(
      network,
      {
        name,
        ips,
        ...(mac ? { mac } : {}),
        ...(gateway ? { gateway } : {}),
        dns: { servers: dns.nameservers, search: dns.search, ...(dns.domain ? { domain: dns.domain } : {}), ...(dns.options?.length ? { options: dns.options } : {}) },
        policies: withPodIp(a.policies, conf, ips[0]?.address),
      },
      id,
    ),
  );
  a.undo.push('delete the endpoint', () => a.api.deleteEndpoint(ep.id));
  const claim = await keepClaim(a, intent, 'endpoint', id, ep.id);
  if (conf.loopbackDSR && !ips[0]) {
    // HNS assigned the address: the loopback-DSR policy (OutBoundNAT to the pod's own IP) is added now that it is
    // known, as HCN can modify an endpoint's policies (microsoft/hcsshim hcn/hcnendpoint.go ApplyPolicy).
    const podIp = ep.ips[0]?.address;
    if (!podIp) throw new CniError(CniCode.HNS_FAILURE, `loopbackDSR: HNS created endpoint ${ep.id} without an address, so there is no pod IP to loop back to`);
    await step(`adding the loopback DSR policy for ${podIp}`, () => a.api.addEndpointPolicies(ep.id, withPodIp([], conf, podIp)));
  }
  await step(`attaching endpoint ${name}`, () => ensureAttached(a.api, ep, a.attach, { fresh: true }));
  a.undo.push('detach the endpoint', () => detach(a.api, ep.id, a.attach));

  // Without IPAM, HNS chose the address: report it with the subnet's prefix and gateway.
  const resultIps: IpConfig[] = addr.ips.length
    ? addr.ips
    : ep.ips.map((ip) => {
        const prefix = ip.prefixLength ?? Number(subnet?.prefix.split('/')[1] ?? 32);
        const gw = ep.gateway ?? (subnet && contains(subnet.prefix, ip.address) ? subnet.gateway ?? gateway : undefined);
        return gw ? { address: `${ip.address}/${prefix}`, gateway: gw } : { address: `${ip.address}/${prefix}` };
      });
  const defaultGw = resultIps[0]?.gateway ?? gateway;
  const result = buildResult({
    ifname: owner.ifname,
    netns: a.ctx.attachment.netns,
    mac: ep.mac ?? mac,
    ips: resultIps,
    routes: addr.routes.length ? addr.routes : defaultGw ? [{ dst: '0.0.0.0/0', gw: defaultGw }] : [],
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
    mode: where.mode,
    apiVersion: a.choice.version,
    network: { id: network.id, name: network.name, owned: where.networkOwned },
    endpoint: { id: ep.id, name, owned: true },
    ...(mac ? { mac } : {}),
    ipamAllocated: addr.ipamAllocated,
    attach: a.attach,
    result: result as unknown as Record<string, unknown>,
    createdAt: a.rt.now(),
  };
  await commit(a, record, claim);
  return record;
}

/**
 * The intent claims planned objects by the id it chose. Should HNS have assigned another id, the claim follows the
 * real one at once — else an audit could judge the new object unclaimed while this ADD is still working on it.
 */
export async function keepClaim(a: AddContext, intent: IntentRecord, kind: 'network' | 'endpoint', planned: string | undefined, actual: string): Promise<IntentRecord> {
  if (!planned || sameId(planned, actual)) return intent;
  a.log.warn({ kind, planned, actual }, 'HNS did not keep the id chosen for the object; the intent now claims the id HNS gave it');
  return updateIntent(a, intent, intent.planned.map((p) => (p.kind === kind && p.id && sameId(p.id, planned) ? { ...p, id: actual } : p)), intent.mac);
}
