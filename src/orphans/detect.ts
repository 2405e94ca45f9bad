/**
 * detect(): the audit's judgement, a pure function of what HNS shows and what the state says. Every object gets a
 * verdict:
 *  - foreign:   not named by us (nat, ext, shared bridge networks, anything without a valid owner name). Never touched.
 *  - live:      ours, and the owner's committed attachment record names this very object (by id).
 *  - in-flight: ours, and a live intent of the owner claims it (by planned id, or by name when the create did not
 *               choose its id) — in this state directory, or registered node-wide by another one (claims.ts). A
 *               live intent is a running ADD; deleting under it would be the HNS race of seed 000.
 *  - protected: ours, but we must not judge it: its owner's record is quarantined (unreadable); an endpoint that is
 *               attached to a namespace or container — in use — while nothing says its pod is gone (no DEL tombstone,
 *               no dead intent naming it, no record naming another endpoint); or a network that still holds
 *               endpoints that are not orphans. An attached endpoint with no record is what a lost or foreign state
 *               directory looks like, never what a killed ADD leaves (it dies before attaching, or its intent says so).
 *  - orphan:    ours, and nothing claims it. Deleted by sweep().
 */
import type { EndpointInfo, NetworkInfo } from '../hns/api';
import { sameId } from '../hns/api';
import { fileKey } from '../state/file-names';
import type { Claim } from '../state/claims';
import {
  ownerKey,
  type AttachmentRecord,
  type IntentRecord,
  type Owner,
  type PlannedObject,
  type TombstoneRecord,
} from '../state/records';
import type { StateSnapshot } from '../state/store';
import { endpointsKeeping } from './network-holders';
import { namesOwner, ownerTags, parseOwnedName, type OwnedName } from './ownership';

export type Verdict = 'foreign' | 'live' | 'in-flight' | 'protected' | 'orphan';

export interface Judged {
  kind: 'network' | 'endpoint';
  id: string;
  name: string;
  verdict: Verdict;
  reason: string;
  /** The owning attachment, when its name or the state says who that is. */
  owner?: Owner;
  /** ownerTag() of the owner, for every object of ours (short names carry only the tag). */
  ownerTag?: string;
  /** Endpoints: their network; networks: the adapter they bind. */
  networkId?: string;
  adapterName?: string;
  namespaceId?: string;
  mac?: string;
  /** Not ours: a peer's object the operator let the audit remove (peer-networks.ts). */
  peer?: 'azure';
  /** Protected: what holds it, which decides what the operator can do about it (next-step.ts). */
  held?: Hold;
}

/**
 * What protects an object of ours: its owner's record is unreadable, or a newer version's; it is attached while
 * nothing says its pod is gone; it is a network still holding endpoints that are not orphans — another plugin's, or
 * ours (live or in flight).
 */
export type Hold = 'quarantined' | 'newer-record' | 'attached' | 'holds-foreign' | 'holds-ours';

export interface AuditInput {
  networks: NetworkInfo[];
  endpoints: EndpointInfo[];
  state: StateSnapshot;
  /** Liveness of each intent, by intent id (computed by the caller: it needs the OS). */
  intentLive: ReadonlyMap<string, { live: boolean; reason: string }>;
}

export interface AuditPlan {
  judged: Judged[];
  /** Orphan endpoints, to delete first (detaching from their namespace before). */
  endpoints: Judged[];
  /** Orphan networks, deleted after their endpoints. */
  networks: Judged[];
}

interface OwnerState {
  record?: AttachmentRecord;
  tombstone?: TombstoneRecord;
  intent?: IntentRecord;
  intentLive?: { live: boolean; reason: string };
  quarantined: boolean;
}

/** What the state says of each owner (record, intent and its liveness, tombstone, quarantine), and by tag. */
function judgeContext(input: AuditInput): JudgeContext {
  const owners = new Map<string, OwnerState>();
  // Names carry the owner's tag, not the owner: every owner the state knows, by tag.
  const byTag = new Map<string, Owner>();
  const get = (o: Owner): OwnerState => {
    const k = ownerKey(o);
    let s = owners.get(k);
    if (!s) {
      owners.set(k, (s = { quarantined: false }));
      for (const tag of ownerTags(o)) byTag.set(tag, { containerId: o.containerId, ifname: o.ifname });
    }
    return s;
  };
  // A name names its owner by tag, and the previous version's 48-bit tags can be made to collide: an object a
  // committed record names by id is that record's, whichever owner its name points to.
  const recordedBy = new Map<string, AttachmentRecord>();
  for (const r of input.state.attachments) {
    get(r).record = r;
    if (r.endpoint.owned) recordedBy.set(`endpoint:${r.endpoint.id.toLowerCase()}`, r);
    if (r.network.owned) recordedBy.set(`network:${r.network.id.toLowerCase()}`, r);
  }
  for (const i of input.state.intents) {
    const s = get(i);
    s.intent = i;
    s.intentLive = input.intentLive.get(i.id) ?? { live: false, reason: 'liveness unknown' };
  }
  for (const q of input.state.quarantined)
    for (const tag of q.owner ? ownerTags(q.owner) : [])
      if (!byTag.has(tag)) byTag.set(tag, { containerId: q.owner!.containerId, ifname: q.owner!.ifname });
  for (const t of input.state.tombstones) get(t).tombstone = t;
  const otherClaims = input.state.otherClaims ?? [];
  return { get, owners, byTag, recordedBy, otherClaims, ...quarantineClaims(input.state.quarantined) };
}

/** What the quarantined records protect: their file keys, which of them are a newer version's, and owners unknown. */
function quarantineClaims(
  quarantined: StateSnapshot['quarantined'],
): Pick<JudgeContext, 'quarantinedKeys' | 'newerKeys' | 'unknownQuarantine' | 'unknownNewerOnly'> {
  // By file key: a hashed file name (long or mixed-case ids) does not say its owner, but every owner has one key.
  // A newer version's record of any kind (its running ADD's intent, say) protects too: not this version's to judge.
  const protecting = quarantined.filter((q) => q.kind === 'attachment' || q.newer);
  const unknown = protecting.filter((q) => !q.owner);
  return {
    quarantinedKeys: new Set(protecting.map((q) => q.key)),
    newerKeys: new Set(protecting.filter((q) => q.newer).map((q) => q.key)),
    unknownQuarantine: unknown.length > 0,
    // Only newer versions' records among them: clearing the quarantine would not move those (quarantine.ts), so the
    // objects they protect are a newer version's to judge, and said so.
    unknownNewerOnly: unknown.length > 0 && unknown.every((q) => q.newer),
  };
}

function judgeEndpoints(ctx: JudgeContext, input: AuditInput): Judged[] {
  return input.endpoints.map((ep) => {
    const inUse = ep.namespaceId
      ? `namespace ${ep.namespaceId}`
      : ep.containers?.length
        ? `container ${ep.containers[0]}`
        : undefined;
    const j = judge(ctx, { kind: 'endpoint', id: ep.id, name: ep.name, ...(inUse ? { inUse } : {}) });
    j.networkId = ep.networkId;
    if (ep.namespaceId) j.namespaceId = ep.namespaceId;
    if (ep.mac) j.mac = ep.mac;
    return j;
  });
}

function judgeNetworks(ctx: JudgeContext, input: AuditInput, endpoints: readonly Judged[]): Judged[] {
  const endpointVerdicts = new Map(endpoints.map((j) => [j.id.toLowerCase(), j]));
  return input.networks.map((net) => {
    const j = judge(ctx, { kind: 'network', id: net.id, name: net.name });
    if (net.adapterName) j.adapterName = net.adapterName;
    if (j.verdict === 'orphan') {
      // Deleting a network cascades to its endpoints in HNS: only when every one of them is an orphan too.
      const keep = endpointsKeeping(
        net.id,
        input.endpoints,
        (e) => endpointVerdicts.get(e.id.toLowerCase())?.verdict === 'orphan',
      );
      if (keep.length > 0) {
        j.verdict = 'protected';
        const foreign = keep.some((e) => endpointVerdicts.get(e.id.toLowerCase())?.verdict === 'foreign');
        j.held = foreign ? 'holds-foreign' : 'holds-ours';
        j.reason = `it still holds ${keep.length} endpoint(s) that are not orphans (${keep.map((e) => e.name).join(', ')})`;
      }
    }
    return j;
  });
}

export function detect(input: AuditInput): AuditPlan {
  const ctx = judgeContext(input);
  const endpoints = judgeEndpoints(ctx, input);
  const judged = [...endpoints, ...judgeNetworks(ctx, input, endpoints)];
  return {
    judged,
    endpoints: judged.filter((j) => j.kind === 'endpoint' && j.verdict === 'orphan'),
    networks: judged.filter((j) => j.kind === 'network' && j.verdict === 'orphan'),
  };
}

interface JudgeContext {
  get: (o: Owner) => OwnerState;
  owners: Map<string, OwnerState>;
  byTag: ReadonlyMap<string, Owner>;
  recordedBy: ReadonlyMap<string, AttachmentRecord>;
  quarantinedKeys: ReadonlySet<string>;
  /** The keys among quarantinedKeys that are a newer version's records (the reason says so). */
  newerKeys: ReadonlySet<string>;
  otherClaims: readonly Claim[];
  unknownQuarantine: boolean;
  unknownNewerOnly: boolean;
}

/** One object as HNS listed it; `inUse`: what an endpoint is attached to (a namespace or container), if anything. */
interface Listed {
  kind: 'network' | 'endpoint';
  id: string;
  name: string;
  inUse?: string;
}

function judge(ctx: JudgeContext, o: Listed): Judged {
  const { kind, id, name, inUse } = o;
  const parsed = parseOwnedName(name);
  if (!parsed || parsed.kind !== kind) return { kind, id, name, verdict: 'foreign', reason: 'not named by hcn-cni' };
  const recorder = ctx.recordedBy.get(`${kind}:${id.toLowerCase()}`);
  const owner = recorder
    ? { containerId: recorder.containerId, ifname: recorder.ifname }
    : (parsed.owner ?? ctx.byTag.get(parsed.tag));
  const who = owner ? ownerKey(owner) : `the attachment with owner tag ${parsed.tag}`;
  const known = !!owner && ctx.owners.has(ownerKey(owner));
  const s: OwnerState = known ? ctx.get(owner) : { quarantined: false };
  // An unreadable record protects its owner's objects; one whose file name does not say its owner (hashed) cannot
  // be tied to a tag, so it protects every object of ours whose owner the state does not know.
  if (owner ? ctx.quarantinedKeys.has(fileKey(owner)) : ctx.unknownQuarantine) s.quarantined = true;
  // A delegated-NIC network's MAC: from a name of an earlier version, else from what the state says of its owner.
  const mac = parsed.mac ?? (kind === 'network' ? (s.record?.mac ?? s.intent?.mac) : undefined);
  const base = { kind, id, name, ownerTag: parsed.tag, ...(owner ? { owner } : {}), ...(mac ? { mac } : {}) };
  const rec = s.record;
  const recorded =
    rec &&
    (kind === 'endpoint'
      ? rec.endpoint.owned && sameId(rec.endpoint.id, id)
      : rec.network.owned && sameId(rec.network.id, id));
  if (recorded) return { ...base, verdict: 'live', reason: `attachment ${who} is committed with it` };
  const creating = inFlight(ctx, s, parsed, o);
  if (creating) return { ...base, verdict: 'in-flight', reason: creating };
  if (!rec && s.quarantined) {
    const newer = owner ? ctx.newerKeys.has(fileKey(owner)) : ctx.unknownNewerOnly;
    const reason = newer
      ? `a newer hcn-cni's record of ${who} is there; not this version's to judge`
      : `the attachment record of ${who} is quarantined; not judging`;
    return { ...base, verdict: 'protected', reason, held: newer ? 'newer-record' : 'quarantined' };
  }
  const held = inUse && !rec ? inUseProtection(s, o, inUse, who) : undefined;
  if (held) return { ...base, verdict: 'protected', reason: held, held: 'attached' };
  return { ...base, verdict: 'orphan', reason: orphanReason(s, kind, who) };
}

/**
 * Why a running ADD claims the object (its reason), or undefined: the owner's live intent plans it (by planned id, or
 * by name when the create did not choose its id), or another conflist's ADD (another state directory) registered
 * the claim node-wide before creating it.
 */
function inFlight(ctx: JudgeContext, s: OwnerState, parsed: OwnedName, o: Listed): string | undefined {
  const plans = (planned: readonly PlannedObject[]) =>
    planned.some((p) => p.kind === o.kind && (p.id ? sameId(p.id, o.id) : p.name === o.name));
  if (s.intent && s.intentLive?.live && plans(s.intent.planned))
    return `a running ADD (pid ${s.intent.pid}) is creating it`;
  const other = ctx.otherClaims.find((c) => namesOwner(parsed, c.intent) && plans(c.intent.planned));
  return other
    ? `a running ADD of another configuration (state ${other.stateDir}, pid ${other.intent.pid}) is creating it`
    : undefined;
}

/**
 * Why an attached object without a committed record is protected: nothing says its owner is gone (a dead intent that
 * planned it, or a DEL's tombstone that names it by id). Undefined when one does.
 */
function inUseProtection(
  s: OwnerState,
  { kind, id, name }: { kind: string; id: string; name: string },
  inUse: string,
  who: string,
): string | undefined {
  const deadIntentNamesIt =
    s.intent &&
    !s.intentLive?.live &&
    s.intent.planned.some((p) => p.kind === kind && (p.id ? sameId(p.id, id) : p.name === name));
  // A DEL names by id the attached endpoints it held (its CNI_NETNS, its own container) and could not delete; an
  // attached endpoint that merely carries the tombstoned owner's name may be another pod's
  // (plugin/verbs/del-sparing.ts).
  const tombstoneNamesIt = s.tombstone?.planned.some((p) => p.kind === kind && sameId(p.id, id));
  if (deadIntentNamesIt || tombstoneNamesIt) return undefined;
  return s.tombstone
    ? `attached to ${inUse}, so in use, and the DEL of ${who} did not hold it`
    : `attached to ${inUse}, so in use, and nothing in this state says ${who} is gone`;
}

function orphanReason(s: OwnerState, kind: string, who: string): string {
  if (s.record) return `attachment ${who} is committed with another ${kind} (stale duplicate)`;
  if (s.intent) return `no committed attachment, and the intent is dead: ${s.intentLive?.reason ?? 'unknown'}`;
  if (s.tombstone) return `${who} was deleted (DEL left a tombstone) and nothing claims it: HNS finished it afterwards`;
  return 'no committed attachment and no intent claims it';
}
