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
import { prepare } from '../add-plan';
import type { AddDeps, AddRun } from '../add-steps';
import { allocate } from '../addresses';
import type { ApiChoice } from '../api-version';
import { ensureAttached } from '../attach';
import { wholeNodeAuditDue } from '../audit-due';
import { commit, writeIntent } from '../claim';
import { attachEndpoint, attachmentRecord } from '../endpoint';
import { modeOf } from '../modes/choose';
import { parseNetns } from '../netns';
import { clearOwnLeftovers } from '../own-objects';
import { releasePendingIpam } from '../pending-ipam';
import { step, toCniError } from '../to-cni-error';

export async function add(ctx: VerbContext, deps: AddDeps): Promise<CniResult> {
  const { conf, attachment, log } = ctx;
  const target = parseNetns(attachment.netns);
  const store = deps.stores.store(conf, log);
  const choice = await step('choosing the HNS API', () => deps.hns.api(conf));
  log.debug({ api: choice.version, reason: choice.reason }, 'HNS API chosen by the host');
  if (target.kind === 'shared') return addShared(ctx, { deps, store, choice, sandboxId: target.sandboxId });

  const a = await prepare(ctx, { deps, store, mode: modeOf(conf) }, choice, target);
  const existing = store.getAttachment(a.plan.owner);
  const same = existing && (await repeat(a, existing));
  if (same) return same;
  const listed = await auditOrOwnLeftovers(a);
  return claimAndCreate(a, existing, listed);
}

/**
 * The whole node's audit only when it is due (audit-due.ts); every ADD audits its own names (own-objects.ts). Returns
 * the networks the whole-node audit listed, so the bridge network is found without asking HNS again.
 */
async function auditOrOwnLeftovers(a: AddRun): Promise<readonly NetworkInfo[] | undefined> {
  const { plan, deps, api, store, log } = a;
  const { conf } = plan;
  if (!conf.audit) return undefined;
  if (wholeNodeAuditDue(conf, deps, store)) {
    const report = await step('auditing HNS for leaked objects', () => deps.auditor.audit({ conf, api, store, log }));
    // IPs that DELs had to keep while HNS refused to delete their endpoints: free them now the audit removed those.
    await releasePendingIpam(store, { ipam: a.ipam, network: conf.name, log }, report);
    return report.networks;
  }
  await clearOwnLeftovers(a);
  return undefined;
}

/** Claim → addresses → place → attach → commit; a failure is undone, or left to the audit when HNS stopped answering. */
async function claimAndCreate(
  a: AddRun,
  existing: AttachmentRecord | undefined,
  listed: readonly NetworkInfo[] | undefined,
): Promise<CniResult> {
  const { store, log } = a;
  let intentId: string | undefined;
  try {
    const intent = await claim(a, existing);
    intentId = intent.id;
    const addr = await allocate(a, existing);
    const placed = await a.plan.mode.place(a, { intent, addr, existing, listed });
    const record = attachmentRecord(a, addr, placed);
    const prepared = await attachEndpoint(a, placed.ep, record);
    await commit(a, record, placed.intent, prepared);
    log.info(
      {
        endpoint: record.endpoint.id,
        network: record.network.name,
        api: a.plan.choice.version,
        attach: record.attach.kind,
      },
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
async function claim(a: AddRun, existing: AttachmentRecord | undefined): Promise<IntentRecord> {
  const planned = a.plan.mode.claimPlan(a, existing);
  return step('writing the intent', () => writeIntent(a, planned.planned, planned.mac));
}

/** A repeated ADD: the same result if the endpoint is still there (re-attached if needed), else undefined. */
async function repeat(a: AddRun, rec: AttachmentRecord): Promise<CniResult | undefined> {
  const netns = a.plan.attachment.netns;
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
  on: { deps: Pick<AddDeps, 'now'>; store: StateStore; choice: ApiChoice; sandboxId: string },
): Promise<CniResult> {
  const { conf, log } = ctx;
  const { store, choice, sandboxId } = on;
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
    createdAt: on.deps.now(),
  };
  await step('recording the shared attachment', () => store.commitAttachment(record));
  log.info({ sandbox: sandboxId, endpoint: ep.id }, 'sharing the sandbox endpoint');
  return sandbox.result as unknown as CniResult;
}
