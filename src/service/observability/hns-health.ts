/**
 * Whether HNS answers, as the resident service sees it: the one "HNS is failing / answers again" state of the service.
 * Every HCN call the service makes (the runtime's observer), the node agent's probe and HNS's own service
 * notifications tell it; the node agent reads it (its recovery pass, the status and the readiness probe:
 * node-agent.ts, probes.ts), and the recovery pass is what repairs the pods a restart left (repair-trigger.ts).
 *
 * Failing: a call went unanswered (an RPC failure or a timeout: isUnreachable), or HNS said it went away. Answering
 * again: any call HNS answers, whatever it answers (an error code is an answer). An HNS restart drops endpoints and
 * non-persistent networks (docker/for-win issue 12425, projectcalico/calico issue 5164), and creates in flight at
 * the restart may have half happened, so each return owes one recovery pass (takeRecovery), however many calls see it.
 */
import { unreachableHresult } from '../../hns/hcn-error';

export class HnsHealth {
  private since: number | undefined;
  private recoveryOwed = false;
  private readonly listeners: Array<() => void> = [];

  /** `now` is the wall clock: failingSince is shown to people, never compared. */
  constructor(private readonly now: () => number = Date.now) {}

  /** Since when HNS has been failing (wall clock), or undefined while it answers. */
  get failingSince(): number | undefined {
    return this.since;
  }

  /** One HCN call's outcome: its HRESULT, undefined for a success. */
  observe(hresult: number | undefined): void {
    if (unreachableHresult(hresult)) this.failing();
    else this.answered();
  }

  /** HNS did not answer, or said it went away. */
  failing(): void {
    this.since ??= this.now();
  }

  /** HNS answered: if it was failing, a recovery pass is owed, and whoever listens is told. */
  answered(): void {
    if (this.since === undefined) return;
    this.since = undefined;
    this.recoveryOwed = true;
    for (const listener of this.listeners) listener();
  }

  /** Whether a recovery pass is owed (HNS answers again since the last one was taken); taking it settles the debt. */
  takeRecovery(): boolean {
    const owed = this.recoveryOwed && this.since === undefined;
    if (owed) this.recoveryOwed = false;
    return owed;
  }

  /** Calls `listener` each time HNS answers again after failing. */
  onAnswering(listener: () => void): void {
    this.listeners.push(listener);
  }
}
