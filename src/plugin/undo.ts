/**
 * What an ADD has done so far, to be undone in reverse if it fails: a failed ADD removes what this invocation
 * created, and nothing else (win-bridge released the IP of a live endpoint when a repeated ADD failed).
 */
import type { Logger } from '../log/logger';

export class Undo {
  private readonly steps: Array<{ what: string; run: () => Promise<unknown>; onlyIfClean: boolean }> = [];

  /**
   * `onlyIfClean`: run this step only if every step undone before it succeeded. The IPAM release is one: when an
   * endpoint of this ADD could not be deleted, it still holds its IP, and the allocation is left for the DEL the
   * runtime sends after a failed ADD (which releases it once HNS no longer shows the endpoint).
   */
  push(what: string, run: () => Promise<unknown>, options: { onlyIfClean?: boolean } = {}): void {
    this.steps.push({ what, run, onlyIfClean: options.onlyIfClean ?? false });
  }

  /** Forget everything: the work is committed. */
  clear(): void {
    this.steps.length = 0;
  }

  /** Undo in reverse order; failures are logged, not thrown (the original error is what the runtime must see). */
  async run(log: Logger, only?: (what: string) => boolean): Promise<void> {
    let clean = true;
    while (this.steps.length > 0) {
      const s = this.steps.pop()!;
      if (only && !only(s.what)) continue;
      if (s.onlyIfClean && !clean) {
        log.warn(
          { undo: s.what },
          'rollback step skipped: an HNS object of this ADD could not be removed; the DEL that follows finishes it',
        );
        continue;
      }
      try {
        await s.run();
        log.debug({ undo: s.what }, 'rolled back');
      } catch (e) {
        clean = false;
        log.warn({ undo: s.what, err: (e as Error).message }, 'rollback step failed; the audit will finish it');
      }
    }
  }
}
