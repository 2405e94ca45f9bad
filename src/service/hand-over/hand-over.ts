/**
 * Upgrading without a gap: a new service takes the address over from the one serving, and at no moment does a shim
 * find nothing to talk to. Below, Linux's unix socket; on Windows the same conversation runs over the named pipe, where
 * "released" means the old one agreed (there is no lock), and instead of a rename the new one adds its instances to the
 * pipe once the addon checked the pipe's server is the old one (listeners.ts listenPipeTakingOver); at "taken" the old one
 * closes its instances.
 *
 *   new                                   old (serving)
 *   binds a temp socket beside the address
 *   connect, HCNQ kind=HAND_OVER  ─────▶  peer uid checked (as for every request); the proof checked (successor.ts:
 *   (its pid, start time, temp socket)    the peer is that pid, started then, and the socket is there); releases
 *                                         the address lock (listeners.ts addressLockFile)
 *                                 ◀─────  HCNH (released); the offer stands OFFER_DEADLINE_MS
 *   takes the lock; renames its temp
 *   socket over the address (atomic)
 *                 HCNT (taken)    ─────▶  checks: the address names that socket, the lock is held, that pid listens
 *                                         there; then stops accepting (after the connections already queued on its
 *                                         socket), finishes every accepted request, exits 0
 *
 * Until the rename the old service's socket is at the address and it serves; from the rename on, the new one's is.
 * A connection already queued on the old socket is accepted and served by the old service before it closes. Two
 * services serve at once only in that instant, which is as safe as a service and a standalone ADD (the state's locks
 * and intents). A new service that goes away before "taken", is silent past the deadline, or says "taken" when the
 * address is not its own leaves the old one serving: it takes its lock back (later, if another process holds it for
 * a moment while the old socket is still at the address) and its address, if the new one had renamed a socket over
 * it. A service that does not hand over (another version, not a service of ours) answers HCNV or nothing, and the
 * new service refuses to start, as before; so does one asked without the proof (a version before it, or a client
 * that is not a service).
 */
import * as net from 'net';
import type { Logger } from '../../log/logger';
import { encodeHandOver, encodeRequest, KIND_HAND_OVER, parseHandOver } from '../transport/protocol';
import type { Successor } from './successor';

/** The serving side's listener, as a hand-over needs it (listeners.ts). */
export interface HandOverPort {
  /** Whether the request read from `socket` proves a new service asks (successor.ts); or why not. */
  successor(socket: net.Socket, env: Record<string, string>): Successor | string;
  /** Lets go of the address lock, so the new service can take it. */
  releaseLock(): void;
  /** At "taken": why the address is not the successor's now (successor.ts notTaken), or undefined. */
  notTaken(s: Successor): Promise<string | undefined>;
  /**
   * The hand-over did not complete: serves on. Takes the lock back — later, when another process holds it for a
   * moment while this service's socket is still at the address — and, when the address no longer names this
   * service's socket (the new one renamed its own over it, then went away), binds a fresh socket there. False if the
   * address is lost now; `onLost` if it is lost later (another's socket at the address before the lock came back).
   */
  resume(onLost: (why: string) => void): Promise<boolean>;
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
export function askHandOver(address: string, proof: Record<string, string>): Promise<HandOverClaim | string> {
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
    socket.on('connect', () => socket.write(encodeRequest(KIND_HAND_OVER, proof, Buffer.alloc(0))));
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
 * How long an offer stands: from "released" to "taken". A new service says "taken" within milliseconds (it takes the
 * lock and renames a socket); one that says nothing for this long is frozen or is not a service, and the address
 * must not stay without its lock (and every later hand-over refused) while it is silent.
 */
export const OFFER_DEADLINE_MS = 10_000;

/**
 * The serving side: one hand-over at a time, offered only to a process that proves it is a new service
 * (successor.ts), for at most `offerDeadlineMs`, and none once one has completed. `onTaken` runs once the new service
 * said the address is its own and it is (the service then stops accepting and drains).
 */
export class HandOverDesk {
  private state: 'serving' | 'offered' | 'handed-over' = 'serving';

  constructor(
    private readonly o: {
      address: string;
      port: HandOverPort | undefined;
      log: Logger;
      offerDeadlineMs?: number;
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
    const successor = port && this.state === 'serving' ? port.successor(socket, env) : `not possible now`;
    if (typeof successor === 'string') {
      log.warn({ address, newPid, state: this.state }, `service: refused a hand-over (${successor})`);
      socket.destroy(); // the new service refuses to start, as when no service hands over
      return;
    }
    this.state = 'offered';
    log.info({ address, newPid }, 'service: handing the address over to a new service');
    port!.releaseLock();
    this.offer(socket, successor);
    socket.write(encodeHandOver('released'));
  };

  /** Waits for "taken" (and checks it), the connection's end, or the deadline, whichever comes first. */
  private offer(socket: net.Socket, successor: Successor): void {
    const newPid = String(successor.pid);
    let got = Buffer.alloc(0);
    const done = (): void => {
      clearTimeout(deadline);
      socket.off('data', onData);
      socket.off('close', onClose);
    };
    const deadlineMs = this.o.offerDeadlineMs ?? OFFER_DEADLINE_MS;
    const deadline = setTimeout(() => {
      done();
      socket.destroy();
      void this.resume(newPid, `it did not say "taken" within ${deadlineMs} ms of "released"`);
    }, deadlineMs);
    const onData = (chunk: Buffer): void => {
      got = Buffer.concat([got, chunk]);
      const frame = parseHandOver(got);
      if (frame === undefined) return;
      done();
      if (frame === 'taken') void this.checkTaken(socket, successor);
      else {
        socket.destroy();
        void this.resume(newPid, 'it answered something else');
      }
    };
    const onClose = (): void => {
      done();
      void this.resume(newPid, 'it went away before taking the address');
    };
    socket.on('data', onData);
    socket.once('close', onClose);
  }

  /** "taken": believed once the address is the successor's (its socket, the lock held, it listening there). */
  private async checkTaken(socket: net.Socket, successor: Successor): Promise<void> {
    const newPid = String(successor.pid);
    const why = await this.o.port!.notTaken(successor);
    if (why !== undefined) {
      socket.destroy();
      return this.resume(newPid, `it said "taken" but ${why}`);
    }
    this.state = 'handed-over';
    socket.end();
    this.o.onTaken(newPid);
  }

  private async resume(newPid: string, why: string): Promise<void> {
    this.state = 'serving';
    const lost = (how: string): void =>
      this.o.onLost(`a hand-over to pid ${newPid} was not completed (${why}) and ${how}`);
    const ok = await this.o.port!.resume(lost);
    if (ok)
      this.o.log.warn({ address: this.o.address, newPid }, `service: hand-over not completed (${why}); serving on`);
    else lost('the address could not be taken back');
  }
}
