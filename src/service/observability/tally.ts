/**
 * The service's counts of what it did: verbs by CNI result code, HCN calls and their errors by HRESULT, audit
 * verdicts and the objects the audits removed, pods repaired after an HNS restart by outcome. Always kept (a few small maps), whether or not metrics are served, so
 * `hcn-cni service` shows them (ServiceStatus.tally); when `--metrics` is given the same events also reach the
 * Prometheus registry (prometheus.ts), so the two never disagree. Label values are bounded: verbs are the CNI verbs (or
 * "other"), ops are the facade's function names and HNSCall routes with ids replaced (src/hns/hcn.ts), HRESULTs
 * are what HNS returns, repair outcomes are src/plugin/verbs/repair.ts's REPAIR_OUTCOMES.
 */
import type { HcnCallObservation } from '../../hns/hcn';
import { hresultHex } from '../../hns/hresults';
import type { AuditObservation } from '../../plugin/observer';

/** Where the service's events go: the tally below, and the Prometheus metrics when they are on. */
export interface MetricsSink {
  /** A CNI request the service ran: its verb, CNI result code ("0" for success), and how long it ran. */
  verb(verb: string, code: string, seconds: number): void;
  /** An HCN call ended; `hresult` ("0x803B0006") when it failed. */
  hcnCall(op: string, seconds: number, hresult?: string): void;
  audit(observation: AuditObservation): void;
  /** One pod the repair after an HNS restart handled, by its outcome (src/plugin/verbs/repair.ts). */
  repair(outcome: string): void;
}

const VERBS = new Set(['ADD', 'DEL', 'CHECK', 'GC', 'STATUS', 'VERSION']);

/** The verb label: the CNI verb, or "other" for anything else a client sent (the label set stays bounded). */
export function verbLabel(command: string | undefined): string {
  return command && VERBS.has(command) ? command : 'other';
}

/** The code label of a finished request: "0", or the CNI error code its error JSON carries. */
export function codeLabel(exitCode: number, stdout: string): string {
  if (exitCode === 0) return '0';
  try {
    const code = (JSON.parse(stdout) as { code?: unknown }).code;
    if (typeof code === 'number' && Number.isInteger(code)) return String(code);
  } catch {
    // not the CNI error JSON: counted as unknown
  }
  return 'unknown';
}

export interface TallySnapshot {
  verbs: Array<{ verb: string; code: string; count: number; seconds: number }>;
  hnsCalls: Array<{ op: string; count: number; seconds: number; errors: number }>;
  hnsErrors: Array<{ op: string; hresult: string; count: number }>;
  audits: number;
  verdicts: Record<string, number>;
  removed: Record<string, number>;
  removeFailures: number;
  /** Housekeeping chores of the audits that failed (noted in the state directory, retried by the next audit). */
  housekeepingFailures: number;
  /** Pods the repair after an HNS restart handled, per outcome (repaired, namespace-gone, …: src/plugin/verbs/repair.ts). */
  repairs: Record<string, number>;
}

interface Sum {
  count: number;
  seconds: number;
}

function add(map: Map<string, Sum>, key: string, seconds: number): Sum {
  const s = map.get(key) ?? { count: 0, seconds: 0 };
  s.count++;
  s.seconds += seconds;
  map.set(key, s);
  return s;
}

const byKey = <T extends { key: string }>(a: T, b: T): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

export class Tally implements MetricsSink {
  private readonly verbs = new Map<string, Sum>();
  private readonly calls = new Map<string, Sum & { errors: number }>();
  private readonly errors = new Map<string, number>();
  private audits = 0;
  private readonly verdicts: Record<string, number> = {};
  private readonly removed: Record<string, number> = { network: 0, endpoint: 0 };
  private removeFailures = 0;
  private housekeepingFailures = 0;
  private readonly repairs: Record<string, number> = {};

  repair(outcome: string): void {
    this.repairs[outcome] = (this.repairs[outcome] ?? 0) + 1;
  }

  verb(verb: string, code: string, seconds: number): void {
    add(this.verbs, `${verb}\0${code}`, seconds);
  }

  hcnCall(op: string, seconds: number, hresult?: string): void {
    const c = this.calls.get(op) ?? { count: 0, seconds: 0, errors: 0 };
    c.count++;
    c.seconds += seconds;
    if (hresult) {
      c.errors++;
      const key = `${op}\0${hresult}`;
      this.errors.set(key, (this.errors.get(key) ?? 0) + 1);
    }
    this.calls.set(op, c);
  }

  audit(o: AuditObservation): void {
    this.audits++;
    for (const [verdict, n] of Object.entries(o.verdicts)) this.verdicts[verdict] = (this.verdicts[verdict] ?? 0) + n;
    for (const kind of o.removed) this.removed[kind] = (this.removed[kind] ?? 0) + 1;
    this.removeFailures += o.failed;
    this.housekeepingFailures += o.housekeepingFailed;
  }

  snapshot(): TallySnapshot {
    const split = (key: string): [string, string] => key.split('\0') as [string, string];
    return {
      verbs: [...this.verbs]
        .map(([key, s]) => ({ key, ...s }))
        .sort(byKey)
        .map(({ key, count, seconds }) => {
          const [verb, code] = split(key);
          return { verb, code, count, seconds };
        }),
      hnsCalls: [...this.calls]
        .map(([key, c]) => ({ key, ...c }))
        .sort(byKey)
        .map(({ key, count, seconds, errors }) => ({ op: key, count, seconds, errors })),
      hnsErrors: [...this.errors]
        .map(([key, count]) => ({ key, count }))
        .sort(byKey)
        .map(({ key, count }) => {
          const [op, hresult] = split(key);
          return { op, hresult, count };
        }),
      audits: this.audits,
      verdicts: { ...this.verdicts },
      removed: { ...this.removed },
      removeFailures: this.removeFailures,
      housekeepingFailures: this.housekeepingFailures,
      repairs: { ...this.repairs },
    };
  }
}

/** An HCN call as the sinks take it: seconds, and the HRESULT in the form operators search for. */
export function callEvent(c: HcnCallObservation): { op: string; seconds: number; hresult?: string } {
  return {
    op: c.op,
    seconds: c.durationMs / 1000,
    ...(c.hresult !== undefined ? { hresult: hresultHex(c.hresult) } : {}),
  };
}
