/**
 * The node-wide register of live claims. Two conflists on one node may name different state directories; each
 * audit reads only its own, so an audit of one used to delete an endpoint the other's running ADD had created and
 * not yet attached (to it, a leak of a killed ADD). Every ADD therefore also registers its intent here — one place
 * per node, whatever stateDir its conflist names — before anything is created, and withdraws it when the intent
 * ends (committed, rolled back or voided). Every audit reads it after listing HNS, as it reads its own intents.
 *
 * One file per intent, <fileKey>#<intentId>.json, holding the intent and the state directory it belongs to.
 * Only liveness matters here (a dead intent claims nothing), so entries of dead processes are removed by whoever
 * reads them, and a file that is not a valid claim is skipped with a warning (it cannot claim anything either). An
 * entry past its deadline whose process still runs claims nothing either, but stays until that process ends it: its
 * ADD may still commit, so an audit that deletes what it planned voids it first, in its own state directory
 * (orphans/audit.ts), as it does its own directory's.
 */
import * as fs from 'fs';
import * as path from 'path';
import { removeFile, writeFileAtomic } from './atomic';
import { fileKey } from './file-names';
import { onState } from './io-error';
import { intentLiveness, processRuns } from './liveness';
import { NewerRecordError, RecordFormatError, validateRecord, type IntentRecord, type Owner } from './records';
import { readStateFile } from './safe-read';

export interface Claim {
  stateDir: string;
  intent: IntentRecord;
}

/**
 * A claim written by a newer hcn-cni (its intent in a newer record schema): this version cannot judge whether it is
 * live, nor what it plans, so it protects its owner's objects as a newer record in the state directory does.
 */
export interface NewerClaim {
  file: string;
  /** The owner's file key (file-names.ts), from the claim's file name. */
  key: string;
  reason: string;
}

export interface ClaimWarn {
  warn(obj: object, msg?: string): void;
}

export class ClaimRegistry {
  private ready = false;

  constructor(readonly dir: string) {}

  private ensure(): void {
    if (this.ready) return;
    onState(this.dir, 'creating the node-wide claims directory', () => {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      if (!fs.statSync(this.dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    });
    this.ready = true;
  }

  private file(owner: Owner, intentId: string): string {
    return path.join(this.dir, `${fileKey(owner)}#${intentId}.json`);
  }

  /** Registers (or updates) an intent. Failing here fails the ADD: an unregistered claim is invisible to others. */
  register(stateDir: string, intent: IntentRecord): void {
    this.ensure();
    const file = this.file(intent, intent.id);
    onState(file, 'registering the claim', () =>
      writeFileAtomic(file, `${JSON.stringify({ stateDir, intent })}\n`, 'claim', undefined, 'none'),
    );
  }

  /** Withdraws a claim; best effort (a leftover entry of a finished process claims nothing). */
  withdraw(owner: Owner, intentId: string, log?: ClaimWarn): void {
    const file = this.file(owner, intentId);
    try {
      removeFile(file, 'claim', undefined, false);
    } catch (e) {
      log?.warn(
        { file, err: (e as Error).message },
        'could not withdraw a node-wide claim; it lapses with its process',
      );
    }
  }

  /**
   * The claims of other state directories (those of `ownStateDir` are in its own intents already), optionally only an
   * owner's: the live ones, and those past their deadline whose process still runs. Entries whose process has ended
   * are removed on the way; those of a newer version, whatever state directory they name, are left as they are and
   * added to `newer`.
   */
  otherClaims(
    ownStateDir: string,
    now: number,
    startTimeOf: (pid: number) => string | null,
    log?: ClaimWarn,
    owner?: Owner,
    newer?: NewerClaim[],
  ): { live: Claim[]; expired: Claim[] } {
    this.ensure();
    const own = path.resolve(ownStateDir);
    const prefix = owner ? `${fileKey(owner)}#` : undefined;
    const out = { live: [] as Claim[], expired: [] as Claim[] };
    for (const name of onState(this.dir, 'listing the node-wide claims', () => fs.readdirSync(this.dir))) {
      if (!name.endsWith('.json') || (prefix && !name.startsWith(prefix))) continue;
      const file = path.join(this.dir, name);
      const claim = this.read(file, log);
      if (!claim) continue;
      if ('reason' in claim) {
        newer?.push(claim);
        continue;
      }
      const live = intentLiveness(claim.intent, undefined, now, startTimeOf).live;
      const expired = !live && now >= claim.intent.deadline && processRuns(claim.intent, startTimeOf);
      if (!live && !expired) {
        this.withdraw(claim.intent, claim.intent.id, log);
        continue;
      }
      if (path.resolve(claim.stateDir) !== own) out[live ? 'live' : 'expired'].push(claim);
    }
    return out;
  }

  private read(file: string, log?: ClaimWarn): Claim | NewerClaim | undefined {
    const got = readStateFile(file, 256 * 1024);
    if (got.kind === 'missing') return undefined;
    try {
      if (got.kind === 'bad') throw new RecordFormatError(got.reason);
      const v = JSON.parse(got.text) as { stateDir?: unknown; intent?: unknown };
      if (typeof v.stateDir !== 'string') throw new RecordFormatError('"stateDir" must be a string');
      return { stateDir: v.stateDir, intent: validateRecord(v.intent, 'intent') };
    } catch (e) {
      if (e instanceof NewerRecordError) {
        const name = path.basename(file, '.json');
        return { file, key: name.slice(0, name.lastIndexOf('#')), reason: e.message };
      }
      log?.warn({ file, err: (e as Error).message }, 'skipping a node-wide claim that is not valid');
      return undefined;
    }
  }
}
