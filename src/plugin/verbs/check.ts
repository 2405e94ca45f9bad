/**
 * CHECK verifies in HNS, not just in state (Azure CNI reads its state file; win-bridge and sdnbridge do nothing):
 * the endpoint exists, is attached where the netns says, and matches prevResult's IPs and MAC.
 */
import { CniCode, CniError } from '../../cni/cni-error';
import type { VerbContext } from '../../cni/types';
import { canonicalIp } from '../../net/addr';
import { ownerKey } from '../../state/records';
import { isAttached } from '../attach';
import { step } from '../to-cni-error';
import { cniMac } from '../result';
import type { PluginDeps } from '../deps';

/** What CHECK uses: HNS and the state store; it changes nothing. */
export type CheckDeps = Pick<PluginDeps, 'hns' | 'stores'>;

export async function check(ctx: VerbContext, deps: CheckDeps): Promise<void> {
  const { conf, attachment, log } = ctx;
  const owner = { containerId: attachment.containerId, ifname: attachment.ifname };
  const store = deps.stores.store(conf, log);
  const rec = store.getAttachment(owner);
  if (!rec) throw new CniError(CniCode.UNKNOWN_CONTAINER, `no attachment for ${ownerKey(owner)}`);
  const fail = (msg: string) => new CniError(CniCode.CHECK_FAILED, `CHECK ${ownerKey(owner)}: ${msg}`);
  if (rec.netns !== attachment.netns)
    throw fail(`attached to netns ${JSON.stringify(rec.netns)}, not ${JSON.stringify(attachment.netns)}`);
  const { api } = await step('choosing the HNS API', () => deps.hns.api(conf));
  const ep = await step('looking up the endpoint', () => api.getEndpoint(rec.endpoint.id));
  if (!ep) throw fail(`endpoint ${rec.endpoint.id} (${rec.endpoint.name}) is missing from HNS`);
  if (rec.mode === 'shared') {
    const sandbox = rec.sharedWith && store.getAttachment(rec.sharedWith);
    if (!sandbox) throw fail(`the sandbox attachment it shares is gone`);
  } else if (!(await step('checking the attach', () => isAttached(api, ep, rec.attach)))) {
    throw fail(`endpoint ${ep.id} is not attached to ${rec.attach.kind} ${rec.attach.target}`);
  }
  // Every address, of either family, must be on the endpoint: the recorded ones and prevResult's. Compared in one
  // text form, since HNS and IPAM may spell an IPv6 address differently.
  const have = new Set(ep.ips.map((ip) => canonicalIp(ip.address)));
  const recorded = ((rec.result as { ips?: Array<{ address?: unknown }> }).ips ?? [])
    .map((ip) => ip.address)
    .filter((x): x is string => typeof x === 'string');
  for (const [source, list] of [
    ['the recorded', recorded],
    ['prevResult', conf.prevResult?.ips.map((ip) => ip.address) ?? []],
  ] as const) {
    for (const cidr of list) {
      const addr = canonicalIp(cidr.split('/')[0]!);
      if (!have.has(addr))
        throw fail(`${source} IP ${addr} is not on endpoint ${ep.id} (it has ${[...have].join(', ') || 'none'})`);
    }
  }
  const prev = conf.prevResult;
  if (prev) {
    const iface = prev.interfaces.find((i) => i.name === attachment.ifname) ?? prev.interfaces[0];
    if (iface?.mac && ep.mac && iface.mac.toLowerCase() !== cniMac(ep.mac)) {
      throw fail(`prevResult MAC ${iface.mac} differs from the endpoint's ${cniMac(ep.mac)}`);
    }
  }
  if (ctx.ipam.configured && rec.ipamAllocated) await ctx.ipam.check();
  log.info({ endpoint: ep.id }, 'CHECK passed');
}
