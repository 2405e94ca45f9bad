/**
 * CHECK verifies in HNS, not just in state (Azure CNI reads its state file; win-bridge and sdnbridge do nothing):
 * the endpoint exists, is attached where the netns says, and matches prevResult's IPs and MAC. As ADD and DEL: a plan
 * made once (the owner, its record, which must be attached to this CNI_NETNS), then named steps; it changes nothing.
 */
import { CniCode, CniError } from '../../cni/cni-error';
import type { AttachmentArgs, IpamClient, NetConf, VerbContext } from '../../cni/types';
import type { EndpointInfo, HnsApi } from '../../hns/api';
import type { Logger } from '../../log/logger';
import { canonicalIp } from '../../net/addr';
import { ownerKey, type AttachmentRecord, type Owner } from '../../state/records';
import type { StateStore } from '../../state/store';
import { isAttached } from '../attach';
import { step } from '../to-cni-error';
import { cniMac } from '../result';
import type { HostHns } from '../host-hns';
import type { StateStores } from '../state-stores';

/** What CHECK uses: HNS and the state store; it changes nothing. */
export type CheckDeps = { readonly hns: HostHns; readonly stores: StateStores };

/** The plan of a CHECK (plain data): who, with which configuration, and the record it checks HNS against. */
interface CheckPlan {
  readonly conf: NetConf;
  readonly attachment: Readonly<AttachmentArgs>;
  readonly owner: Owner;
  readonly record: AttachmentRecord;
}

/** What a CHECK's steps run with: the plan, the HNS API chosen, the state store, IPAM, the log. */
interface CheckRun {
  readonly plan: CheckPlan;
  readonly api: HnsApi;
  readonly store: StateStore;
  readonly ipam: IpamClient;
  readonly log: Logger;
}

export async function check(ctx: VerbContext, deps: CheckDeps): Promise<void> {
  const run = await prepare(ctx, deps);
  const ep = await endpointAsRecorded(run);
  addressesOn(run.plan, ep);
  macOfPrevResult(run.plan, ep);
  if (run.ipam.configured && run.plan.record.ipamAllocated) await run.ipam.check();
  run.log.info({ endpoint: ep.id }, 'CHECK passed');
}

/** The record, attached to this CNI_NETNS (checked before HNS is asked anything), and the HNS API chosen. */
async function prepare(ctx: VerbContext, deps: CheckDeps): Promise<CheckRun> {
  const { conf, attachment, log } = ctx;
  const owner = { containerId: attachment.containerId, ifname: attachment.ifname };
  const store = deps.stores.store(conf, log);
  const record = store.getAttachment(owner);
  if (!record) throw new CniError(CniCode.UNKNOWN_CONTAINER, `no attachment for ${ownerKey(owner)}`);
  if (record.netns !== attachment.netns)
    throw failed(owner, `attached to netns ${JSON.stringify(record.netns)}, not ${JSON.stringify(attachment.netns)}`);
  const { api } = await step('choosing the HNS API', () => deps.hns.api(conf));
  return { plan: { conf, attachment, owner, record }, api, store, ipam: ctx.ipam, log };
}

function failed(owner: Owner, msg: string): CniError {
  return new CniError(CniCode.CHECK_FAILED, `CHECK ${ownerKey(owner)}: ${msg}`);
}

/** The endpoint is in HNS and attached as recorded (a shared attachment: its sandbox's record is still there). */
async function endpointAsRecorded(run: CheckRun): Promise<EndpointInfo> {
  const { api, store } = run;
  const { owner, record: rec } = run.plan;
  const ep = await step('looking up the endpoint', () => api.getEndpoint(rec.endpoint.id));
  if (!ep) throw failed(owner, `endpoint ${rec.endpoint.id} (${rec.endpoint.name}) is missing from HNS`);
  if (rec.mode === 'shared') {
    const sandbox = rec.sharedWith && store.getAttachment(rec.sharedWith);
    if (!sandbox) throw failed(owner, `the sandbox attachment it shares is gone`);
  } else if (!(await step('checking the attach', () => isAttached(api, ep, rec.attach)))) {
    throw failed(owner, `endpoint ${ep.id} is not attached to ${rec.attach.kind} ${rec.attach.target}`);
  }
  return ep;
}

/**
 * Every address, of either family, must be on the endpoint: the recorded ones and prevResult's. Compared in one
 * text form, since HNS and IPAM may spell an IPv6 address differently.
 */
function addressesOn(plan: CheckPlan, ep: EndpointInfo): void {
  const have = new Set(ep.ips.map((ip) => canonicalIp(ip.address)));
  const recorded = ((plan.record.result as { ips?: Array<{ address?: unknown }> }).ips ?? [])
    .map((ip) => ip.address)
    .filter((x): x is string => typeof x === 'string');
  for (const [source, list] of [
    ['the recorded', recorded],
    ['prevResult', plan.conf.prevResult?.ips.map((ip) => ip.address) ?? []],
  ] as const) {
    for (const cidr of list) {
      const addr = canonicalIp(cidr.split('/')[0]!);
      if (!have.has(addr))
        throw failed(
          plan.owner,
          `${source} IP ${addr} is not on endpoint ${ep.id} (it has ${[...have].join(', ') || 'none'})`,
        );
    }
  }
}

/** prevResult's MAC for this interface, when it says one, is the endpoint's. */
function macOfPrevResult(plan: CheckPlan, ep: EndpointInfo): void {
  const prev = plan.conf.prevResult;
  if (!prev) return;
  const iface = prev.interfaces.find((i) => i.name === plan.attachment.ifname) ?? prev.interfaces[0];
  if (iface?.mac && ep.mac && iface.mac.toLowerCase() !== cniMac(ep.mac)) {
    throw failed(plan.owner, `prevResult MAC ${iface.mac} differs from the endpoint's ${cniMac(ep.mac)}`);
  }
}
