/**
 * HCN service notifications (HcnRegisterServiceCallback) as hcn-sim delivers them to its clients.
 *
 * The notification types are computenetwork.h's HCN_NOTIFICATIONS (mingw-w64/mingw-w64
 * mingw-w64-headers/include/computenetwork.h; MicrosoftDocs/Virtualization-Documentation
 * virtualization/api/hcn/Reference/HCN_NOTIFICATIONS.md). The one for the service itself is
 * HcnNotificationServiceDisconnect (0x01000000, under "Common notifications"); its name is all that either source says
 * of when it fires, and hcn-sim reads it as that: sent to every registration when HNS goes away (`ctl restart`), and
 * the registration ends with it (a disconnected service has no callback left to call). The enum has no "connected" or
 * "back" type, so none is sent: a client learns that HNS is back by registering again, which fails while HNS is down
 * (RPC_S_CALL_FAILED_DNE, as every call then does) and succeeds once it answers. The per-object types (network
 * create, namespace delete, …) are not sent: nothing here registers for them.
 */

/** One notification line of a registration's connection (docs/sim-protocol.md, "Service notifications"). */
export interface ServiceNotification {
  notification: number;
  status: number;
  data: string | null;
}

/** HCN_NOTIFICATIONS HcnNotificationServiceDisconnect. */
export const HCN_NOTIFICATION_SERVICE_DISCONNECT = 0x01000000;

export class ServiceCallbacks {
  private readonly registrations = new Set<(n: ServiceNotification) => void>();

  /** Registers a client's callback; the function returned unregisters it (its connection closed). */
  add(deliver: (n: ServiceNotification) => void): () => void {
    this.registrations.add(deliver);
    return () => this.registrations.delete(deliver);
  }

  get size(): number {
    return this.registrations.size;
  }

  /** HNS goes away: every registration gets HcnNotificationServiceDisconnect, and none is left. */
  serviceDisconnect(): number {
    const all = [...this.registrations];
    this.registrations.clear();
    for (const deliver of all) deliver({ notification: HCN_NOTIFICATION_SERVICE_DISCONNECT, status: 0, data: null });
    return all.length;
  }
}
