/**
 * What an ADD has done so far, to be undone in reverse if it fails: a failed ADD removes what this invocation
 * created, and nothing else (win-bridge released the IP of a live endpoint when a repeated ADD failed).
 */
import type { Logger } from '../log/logger';

export class Undo {
  private readonly steps: Array<{ what: string; run: () => Promise<unknown> }> = [];

  push(what: string, run: () => Promise<unknown>): void {
    this.steps.push({ what, run });
  }

  /** Forget everything: the work is committed. */
  clear(): void {
    this.steps.length = 0;
  }

  /** Undo in reverse order; failures are logged, not thrown (the original error is what the runtime must see). */
  async run(log: Logger, only?: (what: string) => boolean): Promise<void> {
    while (this.steps.length > 0) {
      const s = this.steps.pop()!;
      if (only && !only(s.what)) continue;
      try {
        await s.run();
        log.debug({ undo: s.what }, 'rolled back');
      } catch (e) {
        log.warn({ undo: s.what, err: (e as Error).message }, 'rollback step failed; the audit will finish it');
      }
    }
  }
}
