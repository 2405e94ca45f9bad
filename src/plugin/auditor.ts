/**
 * The audit as a verb runs it (ADD when due, GC, an ADD's audit of its own objects, the service's node agent): the
 * configuration's grace and opt-ins applied, what it saw given to the address book (the resident service's record of
 * who holds which address: address-book.ts), and its outcome told to the observer, if any (observer.ts).
 */
import type { NetConf } from '../cni/types';
import type { HnsApi } from '../hns/api';
import type { HostOs } from '../hns/host-os';
import type { Logger } from '../log/logger';
import { audit, auditShown, graceMs, type AuditDeps, type AuditReport, type Shown } from '../orphans/audit';
import type { SweepResult } from '../orphans/sweep';
import type { StateSnapshot, StateStore } from '../state/store';
import type { AddressBook } from './address-book';
import { auditObservation, type AuditObservation } from './observer';

export type AuditConf = Pick<NetConf, 'hnsTimeoutSeconds' | 'adopt'>;

/** What an audit looks at: its configuration's opt-ins, HNS, the state store, the log. */
export interface AuditOn {
  readonly conf: AuditConf;
  readonly api: HnsApi;
  readonly store: StateStore;
  readonly log: Logger;
}

export interface AuditorOptions {
  os: () => HostOs;
  now: () => number;
  /** Told how every audit ended (the resident service's counts); none in the standalone executable. */
  observe?: (observation: AuditObservation) => void;
  addressBook?: AddressBook;
}

export class Auditor {
  constructor(private readonly options: AuditorOptions) {}

  /** The whole node's audit. */
  async audit(on: AuditOn): Promise<AuditReport> {
    const book = this.options.addressBook;
    const mark = book?.mark();
    const report = await audit(this.deps(on));
    // The listing minus what the audit deleted: what holds an address now.
    if (mark !== undefined) book?.listing(mark, report.endpoints);
    this.audited(report);
    return report;
  }

  /** The audit of a few objects HNS showed (orphans/audit.ts auditShown), by the same rules. */
  async auditShown(on: AuditOn, shown: Shown, state: StateSnapshot): Promise<SweepResult> {
    const outcome = await auditShown(this.deps(on), shown, state);
    for (const d of outcome.sweep.deleted) if (d.kind === 'endpoint') this.options.addressBook?.deleted(d.id);
    this.audited(outcome);
    return outcome.sweep;
  }

  /** Tells the observer, if any, how an audit ended. */
  audited(report: Pick<AuditReport, 'counts' | 'sweep'> & Partial<Pick<AuditReport, 'housekeeping'>>): void {
    const observe = this.options.observe;
    if (!observe) return;
    try {
      observe(auditObservation(report));
    } catch {
      // an observer's failure is not the verb's
    }
  }

  private deps({ conf, api, store, log }: AuditOn): AuditDeps {
    return {
      api,
      store,
      os: this.options.os(),
      log,
      now: this.options.now,
      graceMs: graceMs(conf.hnsTimeoutSeconds),
      adopt: conf.adopt,
    };
  }
}
