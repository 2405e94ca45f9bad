/**
 * HCN calls this process has given up on: past their timeout (the caller got ERROR_TIMEOUT) and still running,
 * because an HCN call cannot be cancelled. Each keeps one of the addon's call threads (native/addon/call_threads.h)
 * until HNS answers, and nothing else: later calls run on other threads. Process-wide, like the addon itself.
 * The resident service bounds how many there may be (src/service/hand-over/abandoned-bound.ts) and shows them in its status.
 */

export interface AbandonedCall {
  /** The HCN function or HNSCall route ("HcnCreateEndpoint", "HNSCall GET /endpoints"). */
  op: string;
  /** When the call started (ms since the epoch). */
  startedAt: number;
  /** The timeout it had (ms). */
  timeoutMs: number;
}

type Listener = (count: number) => void;

const open = new Set<AbandonedCall>();
const listeners = new Set<Listener>();

function changed(): void {
  for (const l of listeners) l(open.size);
}

/** Records `call` as abandoned until `pending` (its native promise) settles. */
export function abandon(call: AbandonedCall, pending: Promise<unknown>): void {
  open.add(call);
  const settled = (): void => {
    open.delete(call);
    changed();
  };
  pending.then(settled, settled);
  changed();
}

/** The calls abandoned and not yet answered, oldest first. */
export function abandonedCalls(): AbandonedCall[] {
  return [...open].sort((a, b) => a.startedAt - b.startedAt);
}

export function abandonedCount(): number {
  return open.size;
}

/** Calls `listener` with the new count whenever a call is abandoned or an abandoned one ends; returns the undo. */
export function watchAbandoned(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}
