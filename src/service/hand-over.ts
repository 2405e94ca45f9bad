/**
 * Upgrading without a gap: a new service takes the address over from the one serving, and at no moment does a shim
 * find nothing to talk to. Below, Linux's unix socket; on Windows the same conversation runs over the named pipe, where
 * "released" means the old one agreed (there is no lock), and instead of a rename the new one adds its instances to the
 * pipe once the addon checked the pipe's server is the old one (listen.ts listenPipeTakingOver); at "taken" the old one
 * closes its instances.
 *
 *   new                                   old (serving)
 *   connect, HCNQ kind=HAND_OVER  ─────▶  peer uid checked (as for every request); releases <address>.lock
 *                                 ◀─────  HCNH (released)
 *   takes the lock; binds a temp socket
 *   beside the address; renames it over
 *   the address (atomic)
 *                 HCNT (taken)    ─────▶  stops accepting (after the connections already queued on its socket),
 *                                         finishes every accepted request, exits 0
 *
 * Until the rename the old service's socket is at the address and it serves; from the rename on, the new one's is.
 * A connection already queued on the old socket is accepted and served by the old service before it closes. Two
 * services serve at once only in that instant, which is as safe as a service and a standalone ADD (the state's locks
 * and intents). A new service that goes away before "taken" leaves the old one serving: it takes its lock back (and
 * its address, if the new one had renamed a socket over it). A service that does not hand over (another version,
 * not a service of ours) answers HCNV or nothing, and the new service refuses to start, as before.
 */
import * as net from 'net';
import type { Logger } from '../log/logger';
import { encodeHandOver, encodeRequest, KIND_HAND_OVER, parseHandOver } from './protocol';

/** The serving side's listener, as a hand-over needs it (listen.ts). */
export interface HandOverPort {
  /** Lets go of <address>.lock, so the new service can take it. */
  releaseLock(): void;
  /**
   * The hand-over did not complete: takes the lock back and, when the address no longer names this service's socket
   * (the new one renamed its own over it, then went away), binds a fresh socket there. False if that failed.
   */
  resume(): Promise<boolean>;
}

/** How long the new service waits for the old one's "released" (it answers at once unless it is wedged). */
const RELEASE_WAIT_MS = 10_000;

/** The new service's side, once the old one has released the lock: say "taken", or leave (the old one resumes). */
export interface HandOverClaim {
  taken(): void;
  abandon(): void;
}

/**
 * Asks the service at `address` to hand over. Resolves with the claim once it has released its lock, or with the
 * one-line reason it will not (nothing answers, it refused, it answered something else, it did not answer in time).
 */
export function askHandOver(address: string, pid: number): Promise<HandOverClaim | string> {
  return new Promise((resolve) => {
    const socket = net.connect(address);
    let got = Buffer.alloc(0);
    let settled = false;
    const give = (r: HandOverClaim | string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (typeof r === 'string') socket.destroy();
      resolve(r);
    };
    const timer = setTimeout(
      () => give(`it did not answer a hand-over within ${RELEASE_WAIT_MS / 1000} s`),
      RELEASE_WAIT_MS,
    );
    socket.on('error', (e) => give(`no answer to a hand-over (${(e as NodeJS.ErrnoException).code ?? e.message})`));
    socket.on('close', () => give('it closed the connection instead of handing over'));
    socket.on('connect', () =>
      socket.write(encodeRequest(KIND_HAND_OVER, { HCN_CNI_PID: String(pid) }, Buffer.alloc(0))),
    );
    socket.on('data', (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      const frame = parseHandOver(got);
      if (frame === undefined) return;
      if (frame !== 'released') {
        give(
          frame === 'refused'
            ? 'it does not hand over (another version)'
            : 'it answered a hand-over with something else',
        );
        return;
      }
      socket.removeAllListeners('close');
      socket.on('close', () => undefined);
      give({
        taken: () => socket.end(encodeHandOver('taken')),
        abandon: () => socket.destroy(),
      });
    });
  });
}

/**
 * The serving side: one hand-over at a time, and none once one has completed. `onTaken` runs when the new service
 * says the address is its own (the service then stops accepting and drains).
 */
export class HandOverDesk {
  private state: 'serving' | 'offered' | 'handed-over' = 'serving';

  constructor(
    private readonly o: {
      address: string;
      port: HandOverPort | undefined;
      log: Logger;
      onTaken(newPid: string): void;
      onLost(reason: string): void;
    },
  ) {}

  get handedOver(): boolean {
    return this.state === 'handed-over';
  }

  /** A hand-over request has been read from `socket` (its peer is the service's own user: the intake checked). */
  readonly request = (socket: net.Socket, env: Record<string, string>): void => {
    const newPid = env.HCN_CNI_PID ?? '?';
    const { port, log, address } = this.o;
    if (!port || this.state !== 'serving') {
      log.warn({ address, newPid, state: this.state }, 'service: refused a hand-over (not possible now)');
      socket.destroy(); // the new service refuses to start, as when no service hands over
      return;
    }
    this.state = 'offered';
    log.info({ address, newPid }, 'service: handing the address over to a new service');
    port.releaseLock();
    let got = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      got = Buffer.concat([got, chunk]);
      const frame = parseHandOver(got);
      if (frame === undefined) return;
      socket.off('data', onData);
      socket.off('close', onClose);
      if (frame === 'taken') {
        this.state = 'handed-over';
        socket.end();
        this.o.onTaken(newPid);
      } else {
        socket.destroy();
        void this.resume(newPid, 'it answered something else');
      }
    };
    const onClose = (): void => void this.resume(newPid, 'it went away before taking the address');
    socket.on('data', onData);
    socket.once('close', onClose);
    socket.write(encodeHandOver('released'));
  };

  private async resume(newPid: string, why: string): Promise<void> {
    this.state = 'serving';
    const ok = await this.o.port!.resume();
    if (ok)
      this.o.log.warn({ address: this.o.address, newPid }, `service: hand-over not completed (${why}); serving on`);
    else
      this.o.onLost(`a hand-over to pid ${newPid} was not completed (${why}) and the address could not be taken back`);
  }
}
