/**
 * HNS's own word that it went away and that it answers again, from its service notifications
 * (HcnRegisterServiceCallback), where the host offers them.
 *
 * computenetwork.h's HCN_NOTIFICATIONS has one notification for the service itself, HcnNotificationServiceDisconnect
 * (0x01000000; mingw-w64/mingw-w64 mingw-w64-headers/include/computenetwork.h, MicrosoftDocs/Virtualization-Documentation
 * virtualization/api/hcn/Reference/HCN_NOTIFICATIONS.md), and none for its return. So after a disconnect the
 * registration is made again every `retryMs` until HNS takes it: that moment is HNS answering again. A registration
 * refused at the start (HNS down then) is retried the same way, and its success is reported as HNS answering again.
 * A host without the functions (an optional capability: Hcn.hasServiceNotifications) gets no registration and no
 * event: whoever listens keeps its own probe as the fallback.
 */
import type { Hcn } from './hcn';
import { isUnreachable } from './hcn-error';

/** HCN_NOTIFICATIONS HcnNotificationServiceDisconnect. */
export const HCN_NOTIFICATION_SERVICE_DISCONNECT = 0x01000000;

export type HnsServiceEvent = 'disconnected' | 'reconnected';

export interface HnsServiceWatch {
  /** False when the host has no service notifications: nothing will be reported. */
  readonly active: boolean;
  /** Unregisters and stops retrying; no event after it settles. */
  close(): Promise<void>;
}

export interface HnsServiceWatchOptions {
  /** Between two registration attempts while HNS is away (default 100 ms). */
  retryMs?: number;
  /** Told of a registration that failed for a reason other than HNS being away (then it is retried too). */
  onError?: (e: unknown) => void;
}

/** Starts watching; `listener` is called on the JS thread, and must not throw. */
export function watchHnsService(
  hcn: Hcn,
  listener: (event: HnsServiceEvent) => void,
  options: HnsServiceWatchOptions = {},
): HnsServiceWatch {
  if (!hcn.hasServiceNotifications) return { active: false, close: () => Promise.resolve() };
  const retryMs = options.retryMs ?? 100;
  let id: Promise<string | undefined> = Promise.resolve(undefined);
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const onNotification = (type: number): void => {
    if (closed || type !== HCN_NOTIFICATION_SERVICE_DISCONNECT) return;
    // The disconnected registration is done: its handle is released, and a new one is asked for.
    const gone = id;
    id = Promise.resolve(undefined);
    void gone
      .then((old) => (old === undefined ? undefined : hcn.unregisterServiceCallback(old)))
      .catch(() => undefined);
    listener('disconnected');
    retry(true);
  };
  const register = (after: boolean): void => {
    id = hcn.registerServiceCallback(onNotification).then(
      (registered) => {
        if (closed) {
          void hcn.unregisterServiceCallback(registered).catch(() => undefined);
          return undefined;
        }
        if (after) listener('reconnected');
        return registered;
      },
      (e: unknown) => {
        if (!isUnreachable(e)) options.onError?.(e);
        retry(true);
        return undefined;
      },
    );
  };
  const retry = (after: boolean): void => {
    if (closed) return;
    timer = setTimeout(() => register(after), retryMs);
    timer.unref();
  };
  register(false);
  return {
    active: true,
    close: async () => {
      closed = true;
      clearTimeout(timer);
      const last = await id;
      if (last !== undefined) await hcn.unregisterServiceCallback(last).catch(() => undefined);
    },
  };
}
