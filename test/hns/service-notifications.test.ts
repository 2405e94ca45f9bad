/**
 * HNS's service notifications end to end: the facade (Hcn, watchHnsService) over the addon, the simulator client's
 * HcnRegisterServiceCallback and hcn-sim, which sends HcnNotificationServiceDisconnect to every registration when HNS
 * restarts (src/sim/service-callbacks.ts) and refuses registrations while it is down.
 */
import { Hcn } from '../../src/hns/hcn';
import { HR } from '../../src/hns/hresults';
import {
  HCN_NOTIFICATION_SERVICE_DISCONNECT,
  watchHnsService,
  type HnsServiceEvent,
} from '../../src/hns/service-notifications';
import { rejectionOf, useHcn } from './helpers';

const fx = useHcn();

/** Resolves with the next value pushed, in order. */
function queue<T>(): { push: (v: T) => void; next: () => Promise<T> } {
  const values: T[] = [];
  const waiters: ((v: T) => void)[] = [];
  return {
    push: (v) => (waiters.length > 0 ? waiters.shift()!(v) : values.push(v)),
    next: () => (values.length > 0 ? Promise.resolve(values.shift()!) : new Promise((r) => waiters.push(r))),
  };
}

test('the simulator client offers service notifications as an optional capability', () => {
  expect(fx.hcn.capabilities.missing).toEqual([]);
  expect(fx.hcn.capabilities.optional).toEqual(
    expect.arrayContaining(['HcnRegisterServiceCallback', 'HcnUnregisterServiceCallback']),
  );
  expect(fx.hcn.hasServiceNotifications).toBe(true);
});

test('a registration hears HcnNotificationServiceDisconnect when HNS restarts; registering again fails while HNS is down', async () => {
  const { hcn, control } = fx;
  const heard = queue<[number, number]>();
  const id = await hcn.registerServiceCallback((type, status) => heard.push([type, status]));
  await control.restart({ downMs: 60_000 });
  expect(await heard.next()).toEqual([HCN_NOTIFICATION_SERVICE_DISCONNECT, 0]);
  expect((await rejectionOf(hcn.registerServiceCallback(() => undefined))).hresult).toBe(HR.RPC_S_CALL_FAILED_DNE);
  await hcn.unregisterServiceCallback(id);
  // HNS back (a restart without down time ends the outage): a registration is taken again.
  await control.restart({ downMs: 0 });
  await hcn.unregisterServiceCallback(await hcn.registerServiceCallback(() => undefined));
  expect((await control.stats()).calls.HcnRegisterServiceCallback).toBe(3);
});

test('an unregistered callback hears nothing of a later restart', async () => {
  const { hcn, control } = fx;
  const heard: number[] = [];
  await hcn.unregisterServiceCallback(await hcn.registerServiceCallback((type) => heard.push(type)));
  const watched = queue<[number, number]>();
  const id = await hcn.registerServiceCallback((type, status) => watched.push([type, status]));
  await control.restart({ downMs: 0 });
  // The still-registered callback heard the restart: the other one, unregistered first, would have by now.
  await watched.next();
  await new Promise((r) => setImmediate(r));
  expect(heard).toEqual([]);
  await hcn.unregisterServiceCallback(id);
});

test('watchHnsService: disconnected when HNS goes down, reconnected once it takes a registration again', async () => {
  const { hcn, control } = fx;
  const events = queue<HnsServiceEvent>();
  const watch = watchHnsService(hcn, (e) => events.push(e), { retryMs: 20 });
  expect(watch.active).toBe(true);
  // The first registration is in place once the simulator has counted it.
  await until(async () => ((await control.stats()).calls.HcnRegisterServiceCallback ?? 0) >= 1);
  await control.restart({ downMs: 60_000 });
  expect(await events.next()).toBe('disconnected');
  // Refused while down: retried until HNS answers again.
  await until(async () => ((await control.stats()).calls.HcnRegisterServiceCallback ?? 0) >= 3);
  await control.restart({ downMs: 0 });
  expect(await events.next()).toBe('reconnected');
  await watch.close();
});

test('a host without service notifications: nothing registered, nothing reported', async () => {
  const { hcn, control } = fx;
  const without = new Hcn(hcn.native, { ...hcn.capabilities, optional: [] });
  expect(without.hasServiceNotifications).toBe(false);
  const watch = watchHnsService(without, () => {
    throw new Error('no event expected');
  });
  expect(watch.active).toBe(false);
  await watch.close();
  expect((await control.stats()).calls.HcnRegisterServiceCallback).toBeUndefined();
});

async function until(cond: () => Promise<boolean>): Promise<void> {
  while (!(await cond())) await new Promise((r) => setTimeout(r, 10));
}
