/**
 * The service's bound on abandoned HCN calls (src/hns/abandoned-calls.ts: past their timeout, still running on
 * a native thread of their own). Below the bound they cost nothing that other pods need: each keeps one thread
 * and its call inside HNS. At the bound the service retires: it stops accepting at once (the listener closes, so
 * every shim runs hcn-cni-standalone from the next request on, at standalone cost but unaffected), lets the
 * requests it already accepted finish (each HCN call they make is bounded by its own timeout), and then the
 * process exits with EXIT_RETIRED, so the DaemonSet's container ends and the kubelet starts a fresh service.
 *
 * Why not only stop accepting: nothing brings those calls back (HNS may never answer them), so a service that
 * waits for them would be a process that serves nobody for as long as it lives, and only its restart ends the
 * threads. Why not exit at once: the requests in flight are healthy pods' verbs; cut mid-verb they would be safe
 * (intents, audit) but each would cost its pod a retry. Why a bound at all: each abandoned call is a thread of
 * this process and an RPC HNS still holds; without a bound a HNS that stopped answering would make the service
 * grow without end.
 */
import { abandonedCalls, abandonedCount, watchAbandoned } from '../../hns/abandoned-calls';

/**
 * Default bound. A node runs about 110 pods at most (the kubelet's default maxPods); 256 calls abandoned at once is
 * more than two per pod of a full node left unanswered by HNS, well past a slow moment.
 */
export const DEFAULT_MAX_ABANDONED_CALLS = 256;

/** The exit code of a service that retired at the bound (sysexits' EX_TEMPFAIL: a temporary failure, retry). */
export const EXIT_RETIRED = 75;

export interface AbandonedOp {
  op: string;
  count: number;
  /** Age of the oldest call of this op (ms since it started). */
  oldestAgeMs: number;
  newestAgeMs: number;
}

export interface AbandonedStatus {
  /** Calls abandoned and still running. */
  count: number;
  /** At this count the service stops accepting and exits (EXIT_RETIRED). */
  bound: number;
  /** By op, the op with the oldest call first. */
  byOp: AbandonedOp[];
}

export function abandonedStatus(bound: number, now = Date.now()): AbandonedStatus {
  const byOp = new Map<string, AbandonedOp>();
  for (const c of abandonedCalls()) {
    const age = now - c.startedAt;
    const o = byOp.get(c.op);
    if (!o) byOp.set(c.op, { op: c.op, count: 1, oldestAgeMs: age, newestAgeMs: age });
    else {
      o.count++;
      o.oldestAgeMs = Math.max(o.oldestAgeMs, age);
      o.newestAgeMs = Math.min(o.newestAgeMs, age);
    }
  }
  return { count: abandonedCount(), bound, byOp: [...byOp.values()].sort((a, b) => b.oldestAgeMs - a.oldestAgeMs) };
}

/** Calls `retire` once, with a reason, when the abandoned calls reach `bound`; returns the undo. */
export function watchBound(bound: number, retire: (reason: string) => void): () => void {
  let done = false;
  const check = (count: number): void => {
    if (done || count < bound) return;
    done = true;
    const oldest = abandonedCalls()[0];
    retire(
      `${count} HCN calls are past their timeout and still unanswered (the bound is ${bound}; the oldest, ${oldest?.op ?? '?'}, started ${oldest ? ((Date.now() - oldest.startedAt) / 1000).toFixed(1) : '?'}s ago)`,
    );
  };
  const stop = watchAbandoned(check);
  check(abandonedCount());
  return stop;
}
