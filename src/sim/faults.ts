/**
 * Fault rules set through the control interface: fail, hang and kill-client. A rule picks calls by operation name
 * (`*` for all) and by arrival: the nth matching call and the `count - 1` after it. Calls are matched when they are
 * accepted, so which call a rule hits depends only on the order of arrival, never on timing inside the service.
 */
import type { SimOp } from './control-types';

export interface FaultRule {
  kind: 'fail' | 'hang' | 'kill';
  op: SimOp;
  nth: number;
  count: number;
  hresult?: number;
  ms?: number;
  /** fail: answer with the failure after the call took effect. */
  afterCommit?: boolean;
  /** Matching calls seen so far. */
  seen: number;
}

export interface FaultHits {
  fail?: number;
  /** The failure is answered after the call took effect. */
  failAfterCommit?: boolean;
  hang?: { ms?: number };
  kill: boolean;
}

/** Operation names compare case-insensitively and without a trailing slash ("HNSCall POST /networks/"). */
export function normalizeOp(op: string): string {
  return op.trim().replace(/\/+$/, '').replace(/\s+/g, ' ').toLowerCase();
}

export class FaultBook {
  private rules: FaultRule[] = [];

  add(rule: Omit<FaultRule, 'seen'>): void {
    this.rules.push({ ...rule, seen: 0 });
  }

  match(op: SimOp): FaultHits {
    const hits: FaultHits = { kill: false };
    const name = normalizeOp(op);
    for (const r of this.rules) {
      if (r.op !== '*' && normalizeOp(r.op) !== name) continue;
      r.seen++;
      if (r.seen < r.nth || r.seen >= r.nth + r.count) continue;
      if (r.kind === 'fail' && hits.fail === undefined) {
        hits.fail = r.hresult;
        if (r.afterCommit) hits.failAfterCommit = true;
      }
      if (r.kind === 'hang' && hits.hang === undefined) hits.hang = { ms: r.ms };
      if (r.kind === 'kill') hits.kill = true;
    }
    this.rules = this.rules.filter((r) => r.seen < r.nth + r.count - 1);
    return hits;
  }

  list(): readonly FaultRule[] {
    return this.rules;
  }

  clear(): void {
    this.rules = [];
  }
}
