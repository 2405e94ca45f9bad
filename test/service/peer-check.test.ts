/**
 * The service's peer check fails closed (src/service/transport/intake.ts): a connection whose socket descriptor cannot be read
 * is refused — counted, nothing read from it — as a connection from another user is. Node exposes the descriptor on
 * Linux today; a socket without one is what a Node that stopped exposing it would hand the service.
 */
import type * as net from 'net';
import type { NativeHcn } from '../../src/hns/native-types';
import { silentLogger } from '../../src/log/logger';
import { RequestIntake, type IntakeOptions } from '../../src/service/transport/intake';

/** A connection as the intake sees it: its handle's descriptor, and what was done to it. */
function connection(fd: number | undefined): { socket: net.Socket; destroyed: () => boolean; read: () => boolean } {
  let destroyed = false;
  let read = false;
  const socket = {
    _handle: fd === undefined ? {} : { fd },
    destroy: () => void (destroyed = true),
    on: () => socket,
    once: () => socket,
    resume: () => void (read = true),
    setTimeout: () => socket,
  } as unknown as net.Socket;
  return { socket, destroyed: () => destroyed, read: () => read };
}

function intake(peerUid: number): { intake: RequestIntake; counts: { refused: number }; asked: number[] } {
  const counts = { refused: 0 };
  const asked: number[] = [];
  const native = {
    peerCredentials: (fd: number) => (asked.push(fd), { uid: peerUid, gid: 0, pid: 1 }),
  } as unknown as NativeHcn;
  const o = {
    address: '/run/hcn-cni/hcn-cni.sock',
    platform: 'linux',
    allowUid: 1000,
    requestTimeoutMs: 1000,
    maxPending: 0, // a connection that passed the check is answered "too many" at once: nothing is read either way
    native,
    log: silentLogger,
    book: { counts, pendingConnections: 0 },
  } as unknown as IntakeOptions;
  return { intake: new RequestIntake(o), counts, asked };
}

it('refuses (and counts) a connection whose socket descriptor cannot be read, as one from another user', () => {
  const { intake: i, counts, asked } = intake(1000);
  for (const fd of [undefined, -1]) {
    const c = connection(fd);
    i.onConnection(c.socket);
    expect([fd, c.destroyed(), c.read()]).toEqual([fd, true, false]);
  }
  expect(counts.refused).toBe(2);
  expect(asked).toEqual([]);
  // Another user's connection: refused the same way.
  const other = intake(0);
  const c = connection(7);
  other.intake.onConnection(c.socket);
  expect([c.destroyed(), other.counts.refused, other.asked]).toEqual([true, 1, [7]]);
});
