/**
 * ADD, as a pipeline over a plan that no step changes (add-plan.ts); each step returns what it decided, and the next
 * takes it as an argument:
 *
 *   prepare                 the API chosen (first: a `container:<id>` ADD needs only that), the HNS version asked
 *                           once, the policies translated                                         add-plan.ts
 *   repeat                  a repeated ADD of a live attachment returns the same result (nothing new allocated, the
 *                           attach re-verified)
 *   audit-or-own-leftovers  the whole node when that is due (audit-due.ts), else this attachment's own names in HNS
 *                           (own-objects.ts): what a killed earlier attempt left
 *   claim                   the intent, before anything is allocated or created                  claim.ts
 *   addresses               IPAM, a chained prevResult, or the record being re-created            addresses.ts
 *   place                   the mode supplies the network (bridge.ts: the shared one; delegated-nic.ts: its own on
 *                           the pod's NIC), and the endpoint the intent planned is created in it  endpoint.ts
 *   attach                  the record's file written, the endpoint attached where the netns says endpoint.ts
 *   commit                  the record replaces the intent                                        claim.ts
 *
 * `container:<id>` shares the sandbox's endpoint instead (addShared). A failure undoes what this invocation created,
 * except when HNS stopped answering (timeout or RPC failure): then the intent stays, and whatever HNS completes later
 * is removed by the next audit or by the DEL the runtime sends after a failed ADD.
 */
import { CniCode, CniError } from '../../cni/cni-error';
import type { CniResult, VerbContext } from '../../cni/types';
import type { NetworkInfo } from '../../hns/api';
import { hcnCause, isUnreachable } from '../../hns/hcn-error';
import { ownerKey, type AttachmentRecord, type IntentRecord, type Owner } from '../../state/records';
import type { StateStore } from '../../state/store';
import { prepare, type AddPlan } from '../add-plan';
import { allocate, type Addressing } from '../addresses';
import type { ApiChoice } from '../api-version';
import { ensureAttached } from '../attach';
import { wholeNodeAuditDue } from '../audit-due';
import { planBridge, placeInBridge } from '../modes/bridge';
import { commit, writeIntent } from '../claim';
import { placeOnNic, planDelegated } from '../modes/delegated-nic';
import { attachEndpoint, attachmentRecord, type Placed } from '../endpoint';
import { parseNetns } from '../netns';
import { clearOwnLeftovers } from '../own-objects';
import { releasePendingIpam } from '../pending-ipam';
import type { PluginRuntime } from '../runtime';
import { step, toCniError } from '../to-cni-error';

export async function add(ctx: VerbContext, rt: PluginRuntime): Promise<CniResult> {
  const { conf, attachment, log } = ctx;
  const target = parseNetns(attachment.netns);
  const store = rt.store(conf, log);
  const choice = await step('choosing the HNS API', () => rt.api(conf));
  log.debug({ api: choice.version, reason: choice.reason }, 'HNS API chosen by the host');
  if (target.kind === 'shared') return addShared(ctx, rt, store, choice, target.sandboxId);

  const plan = await prepare(ctx, rt, store, choice, target);
  const existing = store.getAttachment(plan.owner);
  const same = existing && (await repeat(plan, existing));
  if (same) return same;
  const listed = await auditOrOwnLeftovers(plan);
  return claimAndCreate(plan, existing, listed);
}

/**
 * The whole node's audit only when it is due (audit-due.ts); every ADD audits its own names (own-objects.ts). Returns
 * the networks the whole-node audit listed, so the bridge network is found without asking HNS again.
 */
async function auditOrOwnLeftovers(a: AddPlan): Promise<readonly NetworkInfo[] | undefined> {
  const { conf, rt, store, log } = a;
  if (!conf.audit) return undefined;
  if (wholeNodeAuditDue(conf, rt, store)) {
    const report = await step('auditing HNS for leaked objects', () => rt.audit(conf, a.api, store, log));
    // IPs that DELs had to keep while HNS refused to delete their endpoints: free them now the audit removed those.
    await releasePendingIpam(store, a.ctx.ipam, conf.name, report, log);
    return report.networks;
  }
  await clearOwnLeftovers(a);
  return undefined;
}

/** Claim → addresses → place → attach → commit; a failure is undone, or left to the audit when HNS stopped answering. */
async function claimAndCreate(
  a: AddPlan,
  existing: AttachmentRecord | undefined,
  listed: readonly NetworkInfo[] | undefined,
): Promise<CniResult> {
  const { store, log } = a;
  let intentId: string | undefined;
  try {
    const intent = await claim(a, existing);
    intentId = intent.id;
    const addr = await allocate(a, existing);
    const placed = await place(a, addr, intent, existing, listed);
    const record = attachmentRecord(a, addr, placed);
    const prepared = await attachEndpoint(a, placed.ep, record);
    await commit(a, record, placed.intent, prepared);
    log.info(
      { endpoint: record.endpoint.id, network: record.network.name, api: a.choice.version, attach: record.attach.kind },
      'attachment created',
    );
    return record.result as unknown as CniResult;
  } catch (e) {
    if (isUnreachable(hcnCause(e))) {
      // HNS may still complete what we asked: keep the intent (its pid dies with us) and let the audit or the DEL
      // finish; touching HNS again now would only time out too. IPAM is released by the runtime's DEL.
      log.warn({ err: (e as Error).message }, 'HNS did not answer; leaving the intent for the audit');
    } else {
      await a.undo.run(log);
    }
    throw toCniError(e, 'ADD');
  } finally {
    if (intentId !== undefined) store.attemptEnded(intentId);
  }
}

/**
 * The claim comes first, before anything is allocated or created: a process killed at any later point leaves an
 * intent that names the owner, what it planned, and when it stops counting.
 */
async function claim(a: AddPlan, existing: AttachmentRecord | undefined): Promise<IntentRecord> {
  const planned = a.conf.mode === 'delegatedNic' ? planDelegated(a, existing) : planBridge(a);
  return step('writing the intent', () => writeIntent(a, planned.planned, planned.mac));
}

/** The mode supplies the network and nothing else: the endpoint in it is created the same way (endpoint.ts). */
function place(
  a: AddPlan,
  addr: Addressing,
  intent: IntentRecord,
  existing: AttachmentRecord | undefined,
  listed: readonly NetworkInfo[] | undefined,
): Promise<Placed> {
  return a.conf.mode === 'delegatedNic'
    ? placeOnNic(a, addr, intent, existing)
    : placeInBridge(a, addr, intent, listed);
}

/** A repeated ADD: the same result if the endpoint is still there (re-attached if needed), else undefined. */
async function repeat(a: AddPlan, rec: AttachmentRecord): Promise<CniResult | undefined> {
  const netns = a.ctx.attachment.netns;
  if (rec.netns !== netns || rec.mode === 'shared') {
    throw new CniError(
      CniCode.INVALID_ENV,
      `attachment ${ownerKey(rec)} exists with CNI_NETNS ${JSON.stringify(rec.netns)}, not ${JSON.stringify(netns)}; DEL it first`,
    );
  }
  const ep = await step('looking up the recorded endpoint', () => a.api.getEndpoint(rec.endpoint.id));
  if (!ep) {
    a.log.warn(
      { endpoint: rec.endpoint.id },
      'the recorded endpoint is gone from HNS (HNS restart?); re-creating it with the recorded addresses',
    );
    return undefined;
  }
  await step('re-verifying the attach', () => ensureAttached(a.api, ep, rec.attach));
  a.log.info({ endpoint: ep.id }, 'repeated ADD: attachment exists and is attached; same result');
  return rec.result as unknown as CniResult;
}

/** `container:<sandbox>`: a workload container shares the sandbox's endpoint: no endpoint, no IP, the same result. */
async function addShared(
  ctx: VerbContext,
  rt: PluginRuntime,
  store: StateStore,
  choice: ApiChoice,
  sandboxId: string,
): Promise<CniResult> {
  const { conf, log } = ctx;
  const owner: Owner = { containerId: ctx.attachment.containerId, ifname: ctx.attachment.ifname };
  const sandboxOwner = { containerId: sandboxId, ifname: owner.ifname };
  const sandbox = store.getAttachment(sandboxOwner);
  if (!sandbox || sandbox.mode === 'shared') {
    throw new CniError(
      CniCode.SANDBOX_NOT_FOUND,
      `CNI_NETNS container:${sandboxId}: the sandbox has no attachment on ${owner.ifname}; ADD the sandbox first`,
    );
  }
  const ep = await step('looking up the sandbox endpoint', () => choice.api.getEndpoint(sandbox.endpoint.id));
  if (!ep) {
    throw new CniError(
      CniCode.SANDBOX_NOT_FOUND,
      `CNI_NETNS container:${sandboxId}: the sandbox's endpoint ${sandbox.endpoint.id} is gone from HNS`,
    );
  }
  const record: AttachmentRecord = {
    kind: 'attachment',
    schema: 1,
    containerId: owner.containerId,
    ifname: owner.ifname,
    netns: ctx.attachment.netns,
    cniNetwork: conf.name,
    mode: 'shared',
    apiVersion: sandbox.apiVersion,
    network: { ...sandbox.network, owned: false },
    endpoint: { ...sandbox.endpoint, owned: false },
    sharedWith: sandboxOwner,
    ipamAllocated: false,
    attach: { kind: 'none', target: '' },
    result: sandbox.result,
    createdAt: rt.now(),
  };
  await step('recording the shared attachment', () => store.commitAttachment(record));
  log.info({ sandbox: sandboxId, endpoint: ep.id }, 'sharing the sandbox endpoint');
  return sandbox.result as unknown as CniResult;
}
