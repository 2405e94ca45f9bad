/**
 * The state store: one file per owner and kind under <stateDir>/{attachments,intents,tombstones}/<cid>@<ifname>.json.
 * One file per attachment means one unreadable file costs one pod, never the node (Azure CNI keeps every pod in one
 * file; when it is corrupt every ADD and DEL fails). Unreadable files are moved to quarantine/ and reported.
 *
 * Reads take no lock (files are replaced atomically). Writes that depend on what is there (commit an attachment
 * only if this attempt's intent is still current, and no newer tombstone voids it) run under the state lock, which
 * is held for file operations only.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { HostOs } from '../hns/host-os';
import { readIfExists, removeFile, writeFileAtomic, type CrashHook } from './atomic';
import { StateLock } from './lock';
import {
  ownerKey,
  parseRecord,
  RecordFormatError,
  type AnyRecord,
  type AttachmentRecord,
  type IntentRecord,
  type Owner,
  type PlannedObject,
  type RecordKind,
  type TombstoneRecord,
} from './records';

export interface QuarantinedFile {
  /** Path of the moved file. */
  file: string;
  kind: RecordKind;
  /** From the file name, so the audit still knows whose objects it must not touch. */
  owner: Owner | undefined;
  reason: string;
  at: number;
}

export interface StateSnapshot {
  attachments: AttachmentRecord[];
  intents: IntentRecord[];
  tombstones: TombstoneRecord[];
  quarantined: QuarantinedFile[];
}

export interface StoreWarn {
  warn(obj: object, msg?: string): void;
}

export interface StoreOptions {
  os: HostOs;
  now?: () => number;
  crash?: CrashHook;
  lockTimeoutMs?: number;
  log?: StoreWarn;
}

const DIRS: Record<RecordKind, string> = { attachment: 'attachments', intent: 'intents', tombstone: 'tombstones' };
const QUARANTINE = 'quarantine';
const STALE_TMP_MS = 10 * 60_000;

export type CommitOutcome = 'committed' | 'superseded' | 'expired';

export class StateStore {
  readonly dir: string;
  private readonly lock: StateLock;
  private readonly now: () => number;
  private readonly crash: CrashHook | undefined;
  private readonly log: StoreWarn | undefined;
  private ready = false;

  constructor(dir: string, options: StoreOptions) {
    this.dir = dir;
    this.now = options.now ?? Date.now;
    this.crash = options.crash;
    this.log = options.log;
    this.lock = new StateLock(path.join(dir, 'lock'), options.os, options.lockTimeoutMs);
  }

  /** Creates the directories (0700) on first use. */
  ensure(): void {
    if (this.ready) return;
    for (const d of [...Object.values(DIRS), QUARANTINE]) fs.mkdirSync(path.join(this.dir, d), { recursive: true, mode: 0o700 });
    this.ready = true;
  }

  // ---- reads ----

  getAttachment(owner: Owner): AttachmentRecord | undefined {
    return this.read('attachment', owner);
  }
  getIntent(owner: Owner): IntentRecord | undefined {
    return this.read('intent', owner);
  }
  getTombstone(owner: Owner): TombstoneRecord | undefined {
    return this.read('tombstone', owner);
  }

  /** Everything on disk (unreadable files are quarantined on the way). */
  snapshot(): StateSnapshot {
    this.ensure();
    return {
      attachments: this.readAll('attachment'),
      intents: this.readAll('intent'),
      tombstones: this.readAll('tombstone'),
      quarantined: this.quarantined(),
    };
  }

  quarantined(): QuarantinedFile[] {
    this.ensure();
    const out: QuarantinedFile[] = [];
    for (const name of fs.readdirSync(path.join(this.dir, QUARANTINE))) {
      if (name.endsWith('.why')) continue;
      const m = /^(attachment|intent|tombstone)--(.+)\.json\.(\d+)$/.exec(name);
      if (!m) continue;
      const file = path.join(this.dir, QUARANTINE, name);
      out.push({
        file,
        kind: m[1] as RecordKind,
        owner: ownerFromKey(m[2]!),
        reason: readIfExists(`${file}.why`) ?? 'unknown',
        at: Number(m[3]),
      });
    }
    return out;
  }

  // ---- writes ----

  async writeIntent(intent: IntentRecord): Promise<void> {
    this.ensure();
    await this.lock.run(() => this.write(intent, 'intent'));
  }

  /** Rewrites this attempt's intent (what it plans became known), unless a DEL or another ADD replaced it. */
  async updateIntent(intent: IntentRecord): Promise<boolean> {
    this.ensure();
    return this.lock.run(() => {
      const current = this.read('intent', intent);
      if (!current || current.id !== intent.id) return false;
      this.write(intent, 'intent-update');
      return true;
    });
  }

  /**
   * Replaces this attempt's intent with the attachment record, unless the attempt was superseded meanwhile: its
   * intent is gone or replaced (a DEL tombstoned it, or another ADD took over), or its deadline passed — checked here,
   * under the lock, because past the deadline an audit may already have judged its objects dead. The record is
   * written before the intent is removed, so at every instant one of them claims the objects.
   */
  async commitAttachment(record: AttachmentRecord, intentId?: string): Promise<CommitOutcome> {
    this.ensure();
    return this.lock.run(() => {
      if (intentId !== undefined) {
        const current = this.read('intent', record);
        if (!current || current.id !== intentId) return 'superseded' as const;
        if (this.now() >= current.deadline) return 'expired' as const;
        const tomb = this.read('tombstone', record);
        if (tomb?.voids?.includes(current.id)) return 'superseded' as const;
      }
      this.write(record, 'attachment');
      removeFile(this.path('intent', record), 'intent', this.crash, false);
      removeFile(this.path('tombstone', record), 'tombstone', this.crash);
      return 'committed' as const;
    });
  }

  async removeAttachment(owner: Owner): Promise<boolean> {
    this.ensure();
    return this.lock.run(() => removeFile(this.path('attachment', owner), 'attachment', this.crash));
  }

  /** Removes the owner's intent, only if it is still the one with this id (when given). */
  async removeIntent(owner: Owner, intentId?: string): Promise<boolean> {
    this.ensure();
    return this.lock.run(() => {
      const current = this.read('intent', owner);
      if (!current || (intentId !== undefined && current.id !== intentId)) return false;
      return removeFile(this.path('intent', owner), 'intent', this.crash);
    });
  }

  /**
   * Writes a tombstone for the owner and drops its intent, returning the intent it voided. The tombstone keeps what
   * that intent planned, so a later audit can finish deleting objects HNS completes after this DEL, and names the
   * intents it voided. `onlyIntent`: void the intent only if it is still this one (GC acting on a snapshot must not
   * void a newer, running ADD's).
   */
  async tombstone(
    owner: Owner,
    reason: string,
    options: { extra?: PlannedObject[]; onlyIntent?: string; cniNetwork?: string; ipamPending?: boolean } = {},
  ): Promise<IntentRecord | undefined> {
    this.ensure();
    return this.lock.run(() => {
      const current = this.read('intent', owner);
      const intent = current && (options.onlyIntent === undefined || current.id === options.onlyIntent) ? current : undefined;
      const prior = this.read('tombstone', owner);
      const planned = dedupe([...(prior?.planned ?? []), ...(intent?.planned ?? []), ...(options.extra ?? [])]);
      const voids = [...new Set([...(prior?.voids ?? []), ...(intent ? [intent.id] : [])])];
      const cniNetwork = options.cniNetwork ?? intent?.cniNetwork ?? prior?.cniNetwork;
      const tomb: TombstoneRecord = {
        kind: 'tombstone',
        schema: 1,
        containerId: owner.containerId,
        ifname: owner.ifname,
        createdAt: this.now(),
        reason,
        planned,
        ...(voids.length ? { voids } : {}),
        ...(cniNetwork ? { cniNetwork } : {}),
        ...(options.ipamPending || prior?.ipamPending ? { ipamPending: true } : {}),
      };
      this.write(tomb, 'tombstone');
      if (intent) removeFile(this.path('intent', owner), 'intent', this.crash);
      return intent;
    });
  }

  /** The IPAM allocation a tombstone kept (ipamPending) has been released. */
  async ipamReleased(owner: Owner): Promise<void> {
    this.ensure();
    await this.lock.run(() => {
      const t = this.read('tombstone', owner);
      if (!t?.ipamPending) return;
      const { ipamPending: _released, ...rest } = t;
      this.write(rest, 'tombstone');
    });
  }

  /** Removes a tombstone that is not newer than `olderThan` and does not still hold back an IPAM release. */
  async removeTombstone(owner: Owner, olderThan?: number): Promise<boolean> {
    this.ensure();
    return this.lock.run(() => {
      const t = this.read('tombstone', owner);
      if (!t || t.ipamPending || (olderThan !== undefined && t.createdAt >= olderThan)) return false;
      return removeFile(this.path('tombstone', owner), 'tombstone', this.crash);
    });
  }

  /** Deletes quarantined files (the operator's `hcn-cni state --clear-quarantine`). */
  clearQuarantine(owner?: Owner): number {
    let n = 0;
    for (const q of this.quarantined()) {
      if (owner && !(q.owner && ownerKey(q.owner) === ownerKey(owner))) continue;
      fs.rmSync(q.file, { force: true });
      fs.rmSync(`${q.file}.why`, { force: true });
      n++;
    }
    return n;
  }

  // ---- plumbing ----

  private path(kind: RecordKind, owner: Owner): string {
    return path.join(this.dir, DIRS[kind], `${ownerKey(owner)}.json`);
  }

  private write(record: AnyRecord, point: string): void {
    writeFileAtomic(this.path(record.kind, record), JSON.stringify(record, null, 1) + '\n', point, this.crash);
  }

  private read<K extends RecordKind>(kind: K, owner: Owner): Extract<AnyRecord, { kind: K }> | undefined {
    this.ensure();
    const file = this.path(kind, owner);
    const text = readIfExists(file);
    return text === undefined ? undefined : this.parseOrQuarantine(kind, file, text);
  }

  private readAll<K extends RecordKind>(kind: K): Array<Extract<AnyRecord, { kind: K }>> {
    const dir = path.join(this.dir, DIRS[kind]);
    const out: Array<Extract<AnyRecord, { kind: K }>> = [];
    for (const name of fs.readdirSync(dir)) {
      const file = path.join(dir, name);
      if (name.endsWith('.tmp')) {
        this.removeStaleTmp(file);
        continue;
      }
      if (!name.endsWith('.json')) continue;
      const text = readIfExists(file);
      if (text === undefined) continue;
      const rec = this.parseOrQuarantine(kind, file, text);
      if (rec) out.push(rec);
    }
    return out;
  }

  private parseOrQuarantine<K extends RecordKind>(kind: K, file: string, text: string): Extract<AnyRecord, { kind: K }> | undefined {
    try {
      const rec = parseRecord(text, kind);
      if (ownerKey(rec) !== path.basename(file, '.json')) throw new RecordFormatError('owner does not match the file name');
      return rec;
    } catch (e) {
      if (!(e instanceof RecordFormatError)) throw e;
      this.quarantine(kind, file, e.message);
      return undefined;
    }
  }

  private quarantine(kind: RecordKind, file: string, reason: string): void {
    const at = this.now();
    const target = path.join(this.dir, QUARANTINE, `${kind}--${path.basename(file)}.${at}`);
    try {
      fs.renameSync(file, target);
      fs.writeFileSync(`${target}.why`, reason, { mode: 0o600 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; // another process moved it first
    }
    this.log?.warn({ file, quarantinedAs: target, reason }, 'unreadable state record moved to quarantine');
  }

  private removeStaleTmp(file: string): void {
    try {
      if (this.now() - fs.statSync(file).mtimeMs > STALE_TMP_MS) fs.rmSync(file, { force: true });
    } catch {
      // gone already
    }
  }
}

export function ownerFromKey(key: string): Owner | undefined {
  const at = key.lastIndexOf('@');
  if (at <= 0 || at === key.length - 1) return undefined;
  return { containerId: key.slice(0, at), ifname: key.slice(at + 1) };
}

function dedupe(list: PlannedObject[]): PlannedObject[] {
  const seen = new Set<string>();
  return list.filter((p) => {
    const k = `${p.kind}|${p.name}|${p.id ?? ''}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
