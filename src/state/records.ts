/**
 * What the state directory holds, one JSON file per owner and kind:
 *  - attachment: a committed attachment (what ADD created and DEL must remove);
 *  - intent: written before any HNS create, so a process killed mid-create leaves a claim that names what it
 *    planned, who it was (pid + start time) and until when the claim holds;
 *  - tombstone: written by a DEL that could not be sure everything is gone; it voids older intents of the owner so
 *    the next audit removes whatever HNS completes later.
 * The state layer knows nothing of CNI or HNS: results are opaque JSON, objects are ids and names.
 */

export interface Owner {
  containerId: string;
  ifname: string;
}

export type ObjectKind = 'network' | 'endpoint';

export interface PlannedObject {
  kind: ObjectKind;
  name: string;
  /** Set when the create passes its own id (HCN honours it): claims then match by id, else by name. */
  id?: string;
}

export interface AttachmentRecord extends Owner {
  kind: 'attachment';
  schema: 1;
  netns: string;
  /**
   * The CNI network configuration (`name`) whose ADD made it: GC only judges its own network's records, since
   * several conflists may share one state directory. Absent in records written before it existed (any GC judges
   * those, as before).
   */
  cniNetwork?: string;
  mode: 'bridge' | 'delegatedNic' | 'shared';
  apiVersion: 1 | 2;
  network: { id: string; name: string; owned: boolean };
  /** owned: false for a shared attachment (container:<id>), which only borrows the sandbox's endpoint. */
  endpoint: { id: string; name: string; owned: boolean };
  /** For a shared attachment: the sandbox attachment it borrows from. */
  sharedWith?: Owner;
  /** Delegated NIC MAC, "AA-BB-CC-DD-EE-FF". */
  mac?: string;
  /**
   * The host adapter the attachment's own network binds (delegated NIC), as the ADD found it: the doctor tells a NIC
   * replaced or reinstalled since (another NetCfgInstanceId under the same name and MAC) by it. Absent in records
   * written before it existed, and in bridge mode (the shared network is no attachment's own).
   */
  adapter?: RecordedAdapter;
  /** True when this attachment's ADD allocated from delegated IPAM (DEL then releases). */
  ipamAllocated: boolean;
  attach: { kind: 'namespace' | 'container' | 'none'; target: string };
  /** The CNI result to return on a repeated ADD (version-neutral; opaque here). */
  result: Record<string, unknown>;
  createdAt: number;
  /**
   * What re-creating the objects after an HNS restart needs (src/plugin/verbs/repair.ts), as given to HNS at ADD: the
   * endpoint's spec with the addresses and MAC HNS ended up with, and, for a network of the attachment's own
   * (delegated NIC), the network's. Opaque here. Absent in records written before it existed: those are reported as
   * not repairable, never guessed at from today's configuration.
   */
  recreate?: { endpoint: Record<string, unknown>; network?: Record<string, unknown> };
  /** When repair last re-created the endpoint (ms since epoch). */
  repairedAt?: number;
}

export interface IntentRecord extends Owner {
  kind: 'intent';
  schema: 1;
  /** Random, to tell one ADD attempt from the next for the same owner. */
  id: string;
  /** The CNI network (configuration name) of the ADD: GC of another network leaves it alone. */
  cniNetwork?: string;
  mac?: string;
  planned: PlannedObject[];
  pid: number;
  pidStartTime: string | null;
  createdAt: number;
  /** After this instant (ms since epoch) the intent is dead even if its process still runs. */
  deadline: number;
}

export interface TombstoneRecord extends Owner {
  kind: 'tombstone';
  schema: 1;
  createdAt: number;
  /**
   * Random, new on every write of the tombstone: which write a reader saw (tombstoneWrite), so that an audit can tell
   * a tombstone it read before listing HNS from one written since without comparing clocks. Absent in tombstones
   * written before it existed (their whole content then tells one write from another).
   */
  writeId?: string;
  reason: string;
  /** What the voided intent (if any) had planned: the delete-during-create race makes these worth retrying. */
  planned: PlannedObject[];
  /** Ids of the intents this DEL voided: an intent is dead when a tombstone names it (not by comparing clocks). */
  voids?: string[];
  /** The CNI network of the attachment, when known. */
  cniNetwork?: string;
  /**
   * HNS refused to delete the attachment's endpoint, so its IP is still in use: IPAM is released only once the audit
   * has removed the objects (by the next ADD or GC of this network), never before — else the IP would be handed out
   * twice.
   */
  ipamPending?: boolean;
  /**
   * Endpoints (another plugin's, on a migrated node) that held the attachment's address when DEL ran: the kept
   * allocation is released only once no listing shows them, nor any endpoint with that address.
   */
  heldBy?: HeldBy[];
}

/** A host adapter as an ADD found it (src/hns/hcn.ts HostAdapter). */
export interface RecordedAdapter {
  name: string;
  mac: string;
  /** NetCfgInstanceId ("{GUID}"); absent where the host's listing does not show it. */
  interfaceGuid?: string;
}

/** An HNS endpoint that holds an address an attachment's IPAM allocation is for. */
export interface HeldBy {
  id: string;
  name: string;
  address: string;
}

export type AnyRecord = AttachmentRecord | IntentRecord | TombstoneRecord;
export type RecordKind = AnyRecord['kind'];

export class RecordFormatError extends Error {
  override readonly name = 'RecordFormatError';
}

/** The record schema this version writes and reads. A newer version reads every older one it knows. */
export const RECORD_SCHEMA = 1;

/**
 * A record of a newer hcn-cni (a higher schema number): well-formed as far as this version can tell, and not its to
 * judge. It is never quarantined, rewritten or acted on (src/state/quarantine.ts keepNewer): an older version that meets it during an
 * upgrade or a rollback says so and changes nothing.
 */
export class NewerRecordError extends RecordFormatError {
  constructor(readonly schema: number) {
    super(
      `written by a newer hcn-cni (record schema ${schema}; this version reads ${RECORD_SCHEMA}): left as it is, for the newer version`,
    );
  }
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(o: Record<string, unknown>, k: string): string {
  const v = o[k];
  if (typeof v !== 'string') throw new RecordFormatError(`"${k}" must be a string`);
  return v;
}

function num(o: Record<string, unknown>, k: string): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new RecordFormatError(`"${k}" must be a number`);
  return v;
}

function bool(o: Record<string, unknown>, k: string): boolean {
  const v = o[k];
  if (typeof v !== 'boolean') throw new RecordFormatError(`"${k}" must be true or false`);
  return v;
}

function obj(o: Record<string, unknown>, k: string): Record<string, unknown> {
  const v = o[k];
  if (!isObj(v)) throw new RecordFormatError(`"${k}" must be an object`);
  return v;
}

function optional(
  o: Record<string, unknown>,
  k: string,
  check: (o: Record<string, unknown>, k: string) => unknown,
): void {
  if (o[k] !== undefined) check(o, k);
}

function oneOf<T>(o: Record<string, unknown>, k: string, allowed: readonly T[]): void {
  if (!allowed.includes(o[k] as T))
    throw new RecordFormatError(`"${k}" must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`);
}

function planned(v: unknown): PlannedObject[] {
  if (!Array.isArray(v)) throw new RecordFormatError('"planned" must be an array');
  return v.map((p) => {
    if (!isObj(p) || (p.kind !== 'network' && p.kind !== 'endpoint') || typeof p.name !== 'string') {
      throw new RecordFormatError('"planned" entries need kind and name');
    }
    if (p.id !== undefined && typeof p.id !== 'string') throw new RecordFormatError('"planned" ids must be strings');
    return p.id === undefined ? { kind: p.kind, name: p.name } : { kind: p.kind, name: p.name, id: p.id };
  });
}

function hnsObject(o: Record<string, unknown>, k: string): void {
  const v = obj(o, k);
  for (const f of ['id', 'name'])
    if (typeof v[f] !== 'string') throw new RecordFormatError(`"${k}.${f}" must be a string`);
  if (typeof v.owned !== 'boolean') throw new RecordFormatError(`"${k}.owned" must be true or false`);
}

/**
 * Parses and checks a record of the expected kind against its schema: every required field present with its type,
 * every optional one of its type when present (unknown extra fields are tolerated, for records of newer versions
 * that add one). Anything else throws RecordFormatError and the file is quarantined: a record that parses but lacks,
 * say, ipamAllocated used to be accepted, and DEL then kept the IP for good.
 */
export function parseRecord<K extends RecordKind>(text: string, kind: K): Extract<AnyRecord, { kind: K }> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new RecordFormatError(`not JSON: ${(e as Error).message}`);
  }
  return validateRecord(v, kind);
}

/** Checks an already parsed value against the record schema of `kind` (e.g. the intent inside a node-wide claim). */
export function validateRecord<K extends RecordKind>(v: unknown, kind: K): Extract<AnyRecord, { kind: K }> {
  if (!isObj(v)) throw new RecordFormatError('not an object');
  if (v.kind !== kind) throw new RecordFormatError(`kind is ${JSON.stringify(v.kind)}, expected ${kind}`);
  if (typeof v.schema === 'number' && Number.isInteger(v.schema) && v.schema > RECORD_SCHEMA)
    throw new NewerRecordError(v.schema);
  if (v.schema !== RECORD_SCHEMA) throw new RecordFormatError(`unknown schema ${JSON.stringify(v.schema)}`);
  str(v, 'containerId');
  str(v, 'ifname');
  num(v, 'createdAt');
  optional(v, 'cniNetwork', str);
  if (kind === 'attachment') validateAttachment(v);
  else if (kind === 'intent') validateIntent(v);
  else validateTombstone(v);
  return v as unknown as Extract<AnyRecord, { kind: K }>;
}

function validateAttachment(v: Record<string, unknown>): void {
  str(v, 'netns');
  oneOf(v, 'mode', ['bridge', 'delegatedNic', 'shared']);
  if (v.apiVersion !== 1 && v.apiVersion !== 2) throw new RecordFormatError('"apiVersion" must be 1 or 2');
  hnsObject(v, 'network');
  hnsObject(v, 'endpoint');
  bool(v, 'ipamAllocated');
  const attach = obj(v, 'attach');
  oneOf(attach, 'kind', ['namespace', 'container', 'none']);
  str(attach, 'target');
  obj(v, 'result');
  optional(v, 'mac', str);
  optional(v, 'repairedAt', num);
  if (v.adapter !== undefined) {
    const ad = obj(v, 'adapter');
    str(ad, 'name');
    str(ad, 'mac');
    optional(ad, 'interfaceGuid', str);
  }
  if (v.recreate !== undefined) {
    const r = obj(v, 'recreate');
    obj(r, 'endpoint');
    optional(r, 'network', obj);
  }
  if (v.sharedWith !== undefined) {
    const w = obj(v, 'sharedWith');
    str(w, 'containerId');
    str(w, 'ifname');
  }
  if (v.mode === 'shared' && v.sharedWith === undefined)
    throw new RecordFormatError('a shared attachment needs "sharedWith"');
}

function validateIntent(v: Record<string, unknown>): void {
  str(v, 'id');
  num(v, 'pid');
  num(v, 'deadline');
  if (v.pidStartTime !== null) str(v, 'pidStartTime');
  optional(v, 'mac', str);
  v.planned = planned(v.planned);
}

function validateTombstone(v: Record<string, unknown>): void {
  str(v, 'reason');
  optional(v, 'writeId', str);
  v.planned = planned(v.planned ?? []);
  if (v.voids !== undefined && !(Array.isArray(v.voids) && v.voids.every((x) => typeof x === 'string'))) {
    throw new RecordFormatError('"voids" must be a list of intent ids');
  }
  optional(v, 'ipamPending', bool);
  if (
    v.heldBy !== undefined &&
    !(
      Array.isArray(v.heldBy) &&
      v.heldBy.every(
        (h) => isObj(h) && typeof h.id === 'string' && typeof h.name === 'string' && typeof h.address === 'string',
      )
    )
  ) {
    throw new RecordFormatError('"heldBy" must be a list of {id, name, address}');
  }
}

export function sameOwner(a: Owner, b: Owner): boolean {
  return a.containerId === b.containerId && a.ifname === b.ifname;
}

export function ownerKey(o: Owner): string {
  return `${o.containerId}@${o.ifname}`;
}

/** Which write of a tombstone this is: equal for two reads of the same write, different for any later write. */
export function tombstoneWrite(t: TombstoneRecord): string {
  return t.writeId ?? JSON.stringify(t);
}
