/**
 * The service's book of requests: what it has accepted and not finished yet (queued or running, by id), the
 * connections whose request is not complete yet, and its counts (served, refused, …). The intake writes it; the
 * status, the metrics' gauges and the drain at close read it.
 */

/** A request not finished yet, as STATUS shows it. */
export interface InFlight {
  id: number;
  verb: string;
  containerId?: string;
  ifname?: string;
  state: 'queued' | 'running';
  /** ms since the service accepted it. */
  ageMs: number;
  /** false once the shim that sent it has gone (killed, timed out): the verb still finishes. */
  shimConnected: boolean;
}

export interface Entry {
  id: number;
  verb: string;
  containerId?: string;
  ifname?: string;
  state: 'queued' | 'running';
  since: number;
  shimConnected: boolean;
}

export class RequestBook {
  readonly counts = { served: 0, refused: 0, failed: 0, notRun: 0, timedOut: 0, tooMany: 0 };
  readonly entries = new Map<number, Entry>();
  /** Connections whose request is being read (reading()); the bound on them is the intake's. */
  private reads = 0;
  private readonly running = new Set<Promise<void>>();
  private nextId = 1;

  newId(): number {
    return this.nextId++;
  }

  get pendingConnections(): number {
    return this.reads;
  }

  /**
   * A connection's request is being read; call the function returned once it is complete or the connection is gone.
   * A drain waits for reads too, not only for accepted requests: a connection that a handed-over pipe delivered
   * (start-listening.ts) has no net.Server that waits for it to end, and a service that exited while reading it would leave
   * its shim with "closed before accepting" and the standalone executable to run.
   */
  reading(): () => void {
    this.reads++;
    let done: () => void = () => undefined;
    this.track(new Promise<void>((resolve) => (done = resolve)));
    return () => {
      this.reads--;
      done();
    };
  }

  /** Keeps `done` until it settles (drained() waits for it). */
  track(done: Promise<void>): void {
    this.running.add(done);
    const forget = (): void => void this.running.delete(done);
    done.then(forget, forget);
  }

  /** Resolves once every request tracked, including those tracked meanwhile, has settled. */
  async drained(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  inFlight(): InFlight[] {
    return [...this.entries.values()].map((e) => ({
      id: e.id,
      verb: e.verb,
      ...(e.containerId !== undefined ? { containerId: e.containerId } : {}),
      ...(e.ifname !== undefined ? { ifname: e.ifname } : {}),
      state: e.state,
      ageMs: Date.now() - e.since,
      shimConnected: e.shimConnected,
    }));
  }

  /** Requests accepted and queued behind their attachment's earlier verb, and those running. */
  queuedAndRunning(): { queued: number; running: number } {
    const all = [...this.entries.values()];
    const running = all.filter((e) => e.state === 'running').length;
    return { queued: all.length - running, running };
  }
}
