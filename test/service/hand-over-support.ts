/**
 * The new service's side of a hand-over (src/service/hand-over/hand-over.ts), played by the test process step by step: it binds
 * a socket beside the address, asks with the proof a new service gives (its pid, its start time, that socket), and
 * then does what the test says — take the address as a new service does, say "taken" without taking anything, stay
 * silent, or go away.
 */
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { loadNative } from '../../src/hns/native';
import { addressLockFile } from '../../src/service/transport/listeners';
import { encodeHandOver, encodeRequest, KIND_HAND_OVER, parseHandOver } from '../../src/service/transport/protocol';
import { successorProof } from '../../src/service/hand-over/successor';

const native = () => loadNative({}).native;

/** True if some process holds the address's lock (this one lets go of it at once if it got it). */
export function lockHeld(address: string): boolean {
  const n = native();
  const handle = n.tryLockFile(addressLockFile(address));
  if (handle !== null) n.unlockFile(handle);
  return handle === null;
}

/** Holds the address's lock, as a second new service does for a moment; null if another process holds it. */
export function grabLock(address: string): { release(): void } | null {
  const n = native();
  const handle = n.tryLockFile(addressLockFile(address));
  return handle === null ? null : { release: () => n.unlockFile(handle) };
}

export interface Asking {
  /** The connection to the serving service. */
  socket: net.Socket;
  /** "released", or undefined when the service closed the connection instead. */
  answer: 'released' | 'refused' | 'other' | undefined;
  /** The socket bound beside the address (listening in this process). */
  server: net.Server;
  temp: string;
  /** As a new service: takes the lock, renames its socket over the address, says "taken". */
  take(): { release(): void };
  /** Says "taken" without taking anything. */
  sayTaken(): Promise<void>;
  /** Goes away: closes the connection and its socket. */
  close(): Promise<void>;
}

/**
 * Asks the service at `address` to hand over; `env` replaces the proof's entries (a lie, or a missing one). Resolves
 * with the service's answer ("released", or undefined when it closed the connection).
 */
export async function askHandOver(address: string, env: Record<string, string | undefined> = {}): Promise<Asking> {
  const server = net.createServer((c) => c.destroy());
  const temp = path.join(
    path.dirname(address),
    `.test-successor-${process.pid}-${Math.random().toString(36).slice(2)}`,
  );
  await new Promise<void>((resolve) => server.listen(temp, resolve));
  const proof: Record<string, string> = { ...successorProof(native(), process.pid, temp) };
  for (const [k, v] of Object.entries(env))
    if (v === undefined) delete proof[k];
    else proof[k] = v;
  const socket = net.connect(address);
  socket.on('error', () => undefined);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  const answer = await new Promise<Asking['answer']>((resolve) => {
    let got = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      got = Buffer.concat([got, chunk]);
      const frame = parseHandOver(got);
      if (frame === undefined) return;
      socket.off('data', onData);
      resolve(frame === 'released' ? 'released' : frame === 'refused' ? 'refused' : 'other');
    };
    socket.on('data', onData);
    socket.once('close', () => resolve(undefined));
    socket.write(encodeRequest(KIND_HAND_OVER, proof, Buffer.alloc(0)));
  });
  const sayTaken = (): Promise<void> => new Promise<void>((resolve) => socket.end(encodeHandOver('taken'), resolve));
  return {
    socket,
    answer,
    server,
    temp,
    take: () => {
      const lock = grabLock(address);
      if (!lock) throw new Error('the address lock is held by another process');
      fs.renameSync(temp, address);
      void sayTaken();
      return lock;
    },
    sayTaken,
    close: async () => {
      socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
