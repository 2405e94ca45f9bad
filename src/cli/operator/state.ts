/**
 * `hcn-cni state [--clear-quarantine]`: what the state directory holds. Reading it is what the plugin does, so an
 * unreadable record is moved to quarantine on the way and shown there, with the reason.
 */
import type { AttachmentRecord, IntentRecord, TombstoneRecord } from '../../state/records';
import { intentLiveness } from '../../state/liveness';
import { ownerKey } from '../../state/records';
import type { QuarantinedFile } from '../../state/store';
import type { OpsContext } from './context';
import { dash, list, plural, table, when } from './format';

function ipsOf(rec: AttachmentRecord): string[] {
  const ips = (rec.result as { ips?: unknown }).ips;
  if (!Array.isArray(ips)) return [];
  return ips.map((ip) => (ip as { address?: unknown })?.address).filter((a): a is string => typeof a === 'string');
}

/** What the state directory holds, read as the plugin reads it; its quarantine cleared if asked. */
function readState(ctx: OpsContext, now: number) {
  const deps = ctx.deps();
  const store = deps.stores.store(ctx.conf, ctx.log);
  const snap = store.snapshot();
  const tombs = new Map(snap.tombstones.map((t) => [ownerKey(t), t]));
  const intents = snap.intents.map((i) => ({
    intent: i,
    liveness: intentLiveness(i, tombs.get(ownerKey(i)), now, deps.hns.os().processStartTime),
  }));
  const cleared = ctx.args.clearQuarantine ? store.clearQuarantine() : undefined;
  // Housekeeping that failed (a file that could not be removed): retried by the audits, failing nothing meanwhile.
  const chores = store.housekeeping();
  return { snap, intents, cleared, chores };
}

type StateView = ReturnType<typeof readState>;

function noStateDir(ctx: OpsContext, dir: string): number {
  const msg = `the state directory ${dir} does not exist (nothing recorded yet, or the wrong --state-dir / --conf: ${ctx.loaded.source})`;
  if (ctx.args.json)
    ctx.json({
      stateDir: dir,
      exists: false,
      attachments: [],
      intents: [],
      tombstones: [],
      quarantined: [],
      note: msg,
    });
  else ctx.out(`${msg}\n`);
  return 0;
}

export async function runState(ctx: OpsContext): Promise<number> {
  const dir = ctx.conf.stateDir;
  const now = ctx.sys.now();
  if (!ctx.stateDirExists()) return noStateDir(ctx, dir);
  const view = readState(ctx, now);
  if (ctx.args.json) ctx.json(stateJson(dir, view));
  else printState(ctx, dir, view, now);
  return 0;
}

function stateJson(dir: string, { snap, intents, cleared, chores }: StateView): Record<string, unknown> {
  return {
    stateDir: dir,
    exists: true,
    attachments: snap.attachments.map((a) => attachmentJson(a)),
    intents: intents.map(({ intent, liveness }) => ({
      ...intentJson(intent),
      alive: liveness.live,
      why: liveness.reason,
    })),
    tombstones: snap.tombstones.map(tombstoneJson),
    quarantined: snap.quarantined.map(quarantinedJson),
    housekeeping: chores.map((c) => ({
      what: c.what,
      file: c.file,
      error: c.error,
      failures: c.failures,
      lastAt: new Date(c.lastAt).toISOString(),
    })),
    ...(cleared !== undefined ? { clearedQuarantine: cleared } : {}),
  };
}

function printState(ctx: OpsContext, dir: string, view: StateView, now: number): void {
  const { snap, intents, cleared, chores } = view;
  ctx.out(`state directory ${dir}\n`);
  section(ctx, 'attachments', snap.attachments.length, () => attachmentsTable(snap.attachments));
  section(ctx, 'intents', intents.length, () => intentsTable(intents, now));
  section(ctx, 'tombstones', snap.tombstones.length, () => tombstonesTable(snap.tombstones, now));
  section(ctx, 'quarantined', snap.quarantined.length, () => quarantinedTable(snap.quarantined));
  if (chores.length > 0)
    section(ctx, 'housekeeping overdue', chores.length, () =>
      table(
        ['WHAT', 'FILE', 'FAILURES', 'LAST', 'ERROR'],
        chores.map((c) => [c.what, c.file, String(c.failures), when(c.lastAt, now), c.error]),
      ),
    );
  if (cleared !== undefined) ctx.out(`\ncleared ${plural(cleared, 'quarantined file')}\n`);
  else if (snap.quarantined.length > 0) {
    ctx.out(
      `\nquarantined records protect their owner's HNS objects from the audit; once dealt with, remove them with: hcn-cni state --clear-quarantine\n`,
    );
  }
}

function attachmentsTable(attachments: readonly AttachmentRecord[]): string {
  return table(
    ['OWNER', 'MODE', 'API', 'ENDPOINT', 'NETWORK', 'IPS', 'NETNS', 'CREATED'],
    attachments.map((a) => [
      ownerKey(a),
      a.mode,
      `v${a.apiVersion}`,
      `${a.endpoint.id} (${a.endpoint.name}${a.endpoint.owned ? '' : ', borrowed'})`,
      `${a.network.id} (${a.network.name}${a.network.owned ? ', ours' : ''})`,
      list(ipsOf(a)),
      dash(a.netns),
      new Date(a.createdAt).toISOString(),
    ]),
  );
}

function intentsTable(intents: StateView['intents'], now: number): string {
  return table(
    ['OWNER', 'PID', 'ALIVE', 'WHY', 'DEADLINE', 'PLANNED'],
    intents.map(({ intent, liveness }) => [
      ownerKey(intent),
      String(intent.pid),
      liveness.live ? 'yes' : 'no',
      liveness.reason,
      when(intent.deadline, now),
      list(intent.planned.map((p) => `${p.kind} ${p.name}`)),
    ]),
  );
}

function tombstonesTable(tombstones: readonly TombstoneRecord[], now: number): string {
  return table(
    ['OWNER', 'CREATED', 'REASON', 'PLANNED', 'IP KEPT'],
    tombstones.map((t) => [
      ownerKey(t),
      when(t.createdAt, now),
      t.reason,
      list(t.planned.map((p) => `${p.kind} ${p.name}`)),
      ipKept(t),
    ]),
  );
}

function quarantinedTable(quarantined: readonly QuarantinedFile[]): string {
  return table(
    ['KIND', 'OWNER', 'FILE', 'AT', 'REASON'],
    quarantined.map((q) => [q.kind, q.owner ? ownerKey(q.owner) : '-', q.file, new Date(q.at).toISOString(), q.reason]),
  );
}

function section(ctx: OpsContext, title: string, n: number, body: () => string): void {
  ctx.out(`\n${title} (${n}):\n`);
  if (n > 0) ctx.out(body());
}

function attachmentJson(a: AttachmentRecord): Record<string, unknown> {
  return {
    owner: ownerKey(a),
    containerId: a.containerId,
    ifname: a.ifname,
    mode: a.mode,
    apiVersion: a.apiVersion,
    netns: a.netns,
    endpoint: a.endpoint,
    network: a.network,
    ...(a.mac ? { mac: a.mac } : {}),
    ...(a.sharedWith ? { sharedWith: ownerKey(a.sharedWith) } : {}),
    ips: ipsOf(a),
    attach: a.attach,
    ipamAllocated: a.ipamAllocated,
    createdAt: new Date(a.createdAt).toISOString(),
  };
}

function intentJson(i: IntentRecord): Record<string, unknown> {
  return {
    owner: ownerKey(i),
    containerId: i.containerId,
    ifname: i.ifname,
    id: i.id,
    pid: i.pid,
    pidStartTime: i.pidStartTime,
    ...(i.mac ? { mac: i.mac } : {}),
    planned: i.planned,
    createdAt: new Date(i.createdAt).toISOString(),
    deadline: new Date(i.deadline).toISOString(),
  };
}

function tombstoneJson(t: TombstoneRecord): Record<string, unknown> {
  return {
    owner: ownerKey(t),
    containerId: t.containerId,
    ifname: t.ifname,
    reason: t.reason,
    planned: t.planned,
    createdAt: new Date(t.createdAt).toISOString(),
    ipamPending: !!t.ipamPending,
    ...(t.heldBy?.length ? { heldBy: t.heldBy } : {}),
  };
}

/** Whether the tombstone keeps the attachment's IPAM allocation, and which endpoints hold the address. */
function ipKept(t: TombstoneRecord): string {
  if (!t.ipamPending) return '-';
  return t.heldBy?.length ? `held by ${t.heldBy.map((x) => `${x.name} (${x.address})`).join(', ')}` : 'yes';
}

function quarantinedJson(q: QuarantinedFile): Record<string, unknown> {
  return {
    kind: q.kind,
    owner: q.owner ? ownerKey(q.owner) : null,
    file: q.file,
    reason: q.reason,
    at: new Date(q.at).toISOString(),
  };
}
