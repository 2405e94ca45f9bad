/**
 * How the service ends, as a part (src/service/hand-over/service-end.ts): it is made before the listener, which hands
 * it the hand-over requests it reads; one that arrives before the part has started (no desk on a listener yet) is
 * refused — the connection closed, so the new service refuses to start, as when no service hands over.
 */
import type * as net from 'net';
import { silentLogger } from '../../src/log/logger';
import { DEFAULT_MAX_ABANDONED_CALLS } from '../../src/service/hand-over/abandoned-bound';
import { ServiceEnd } from '../../src/service/hand-over/service-end';

function socket(): { s: net.Socket; destroyed: () => boolean; written: () => number } {
  let destroyed = false;
  let written = 0;
  const s = { destroy: () => void (destroyed = true), write: () => (written++, true) } as unknown as net.Socket;
  return { s, destroyed: () => destroyed, written: () => written };
}

it('refuses a hand-over asked before it started: the connection is closed, nothing written', () => {
  const end = new ServiceEnd({ address: '/run/hcn-cni/hcn-cni.sock' }, silentLogger);
  const c = socket();
  end.request(c.s, { HCN_CNI_PID: '42' });
  expect([c.destroyed(), c.written()]).toEqual([true, 0]);
});

it('takes over by default, from its own address; with takeOver false, from nowhere', () => {
  const address = '/run/hcn-cni/hcn-cni.sock';
  const byDefault = new ServiceEnd({ address }, silentLogger);
  const refusing = new ServiceEnd({ address, takeOver: false, maxAbandonedCalls: 3 }, silentLogger);
  expect([byDefault.takeOver, byDefault.takeOverFrom, byDefault.maxAbandoned]).toEqual([
    true,
    address,
    DEFAULT_MAX_ABANDONED_CALLS,
  ]);
  expect([refusing.takeOver, refusing.takeOverFrom, refusing.maxAbandoned]).toEqual([false, undefined, 3]);
});
