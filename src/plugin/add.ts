/**
 * ADD: repeated ADD of a live attachment returns the same result (nothing new allocated, the attach re-verified);
 * `container:<id>` shares the sandbox's endpoint; otherwise audit this attachment's own names in HNS (the whole
 * node only when that is due: audit-due.ts), get addresses, and create the attachment in the configured mode. A failure undoes what this invocation created, except when HNS stopped
 * answering (timeout or RPC failure): then the intent stays, and whatever HNS completes later is removed by the
 * next audit or by the DEL the runtime sends after a failed ADD.
 */
import { CniCode, CniError } from '../cni/cni-error';
import type { CniResult, VerbContext } from '../cni/types';
import { hcnCause, isUnreachable } from '../hns/hcn-error';
import { endpointName } from '../orphans/ownership';
import { ownerKey, type AttachmentRecord, type Owner, type PlannedObject } from '../state/records';
import { allocate, plannedId, type AddContext } from './add-context';
import { writeIntent } from './claim';
import { recordedAttach, ensureAttached } from './attach';
import { addBridge } from './bridge';
import { addDelegatedNic, planDelegated } from './delegated-nic';
import { endpointPolicies, networkPolicies, nicNetworkFlags } from './endpoint-config';
import { requireIpv6, staticIpv6 } from './families';
import { step, toCniError } from './to-cni-error';
import { parseNetns, type AttachTarget } from './netns';
import { releasePendingIpam } from './pending-ipam';
import { wholeNodeAuditDue } from './audit-due';
import { clearOwnLeftovers } from './own-objects';
import type { PluginRuntime } from './runtime';
import type { ApiChoice } from './api-version';
import type { StateStore } from '../state/store';
import { Undo } from './undo';

export async function add(ctx: VerbContext, rt: PluginRuntime): Promise<CniResult> {
  const { conf, attachment, log } = ctx;
  const owner: Owner = { containerId: attachment.containerId, ifname: attachment.ifname };
  const target = parseNetns(attachment.netns);
  const store = rt.store(conf, log);
  const choice = await step('choosing the HNS API', () => rt.api(conf));
  log.debug({ api: choice.version, reason: choice.reason }, 'HNS API chosen by the host');

  if (target.kind === 'shared') return addShared(ctx, rt, owner, target.sandboxId);
  const a = await prepare(ctx, rt, store, choice, owner, target);
  const existing = store.getAttachment(owner);
  if (existing) {
    const same = await repeat(a, existing);
    if (same) return same;
  }
  await auditOrOwnLeftovers(a);
  return claimAndCreate(a, existing);
}

/** Everything an ADD decides before it touches state or HNS: the API's limits checked, the policies translated. */
async function prepare(
  ctx: VerbContext,
  rt: PluginRuntime,
  store: StateStore,
  choice: ApiChoice,
  owner: Owner,
  target: Exclude<AttachTarget, { kind: 'shared' }>,
): Promise<AddContext> {
  const { conf, log } = ctx;
  // IPv6 in the configuration on an API or host that cannot carry it: refused before anything is written or created.
  const v6 = staticIpv6(conf);
  if (v6) await requireIpv6(choice, choice.api.hcn, `"${v6[0]}" ${JSON.stringify(v6[1])}`);

  const hnsVersion = choice.hnsVersion ?? (await step('asking HNS for its version', () => choice.api.hnsVersion()));
  let policies;
  let netPolicies;
  let nicFlags: number | undefined;
  try {
    policies = endpointPolicies(conf, choice.version, log, hnsVersion);
    netPolicies = networkPolicies(conf);
    if (conf.mode === 'delegatedNic') nicFlags = nicNetworkFlags(conf, choice.version, hnsVersion);
  } catch (e) {
    throw toCniError(e, 'translating policies');
  }
  return {
    ctx,
    conf,
    rt,
    log,
    store,
    choice,
    api: choice.api,
    owner,
    attach: recordedAttach(target, owner.containerId),
    policies,
    networkPolicies: netPolicies,
    ...(nicFlags !== undefined ? { nicFlags } : {}),
    undo: new Undo(),
  };
}

/** The whole node's audit only when it is due (audit-due.ts); every ADD audits its own names (own-objects.ts). */
async function auditOrOwnLeftovers(a: AddContext): Promise<void> {
  const { conf, rt, store, log } = a;
  if (!conf.audit) return;
  if (wholeNodeAuditDue(conf, rt, store)) {
    const report = await step('auditing HNS for leaked objects', () => rt.audit(conf, a.api, store, log));
    a.listedNetworks = report.networks;
    // IPs that DELs had to keep while HNS refused to delete their endpoints: free them now the audit removed those.
    await releasePendingIpam(store, a.ctx.ipam, conf.name, report, log);
  } else {
    await clearOwnLeftovers(a);
  }
}

/** Claim (the intent) → addresses → the mode's attachment, committed; a failure is undone or left to the audit. */
async function claimAndCreate(a: AddContext, existing: AttachmentRecord | undefined): Promise<CniResult> {
  const { conf, store, log } = a;
  let intentId: string | undefined;
  try {
    // The intent comes first, before anything is allocated or created: a process killed at any later point leaves
    // a claim that names the owner, what it planned, and when it stops counting.
    const plan = conf.mode === 'delegatedNic' ? planDelegated(a, existing) : planBridge(a);
    const intent = await step('writing the intent', () => writeIntent(a, plan.planned, plan.mac));
    intentId = intent.id;
    const addr = await allocate(a, existing);
    const record =
      conf.mode === 'delegatedNic'
        ? await addDelegatedNic(a, addr, intent, existing)
        : await addBridge(a, addr, intent);
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

function planBridge(a: AddContext): { planned: PlannedObject[]; mac?: string } {
  const id = plannedId(a);
  return { planned: [{ kind: 'endpoint', name: endpointName(a.owner), ...(id ? { id } : {}) }] };
}

/** A repeated ADD: the same result if the endpoint is still there (re-attached if needed), else undefined. */
async function repeat(a: AddContext, rec: AttachmentRecord): Promise<CniResult | undefined> {
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
async function addShared(ctx: VerbContext, rt: PluginRuntime, owner: Owner, sandboxId: string): Promise<CniResult> {
  const { conf, log } = ctx;
  const store = rt.store(conf, log);
  const sandboxOwner = { containerId: sandboxId, ifname: owner.ifname };
  const sandbox = store.getAttachment(sandboxOwner);
  if (!sandbox || sandbox.mode === 'shared') {
    throw new CniError(
      CniCode.SANDBOX_NOT_FOUND,
      `CNI_NETNS container:${sandboxId}: the sandbox has no attachment on ${owner.ifname}; ADD the sandbox first`,
    );
  }
  const choice = await step('choosing the HNS API', () => rt.api(conf));
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
