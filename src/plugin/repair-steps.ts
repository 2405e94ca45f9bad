/**
 * What the two modes do differently in a repair after an HNS restart (verbs/repair-pod.ts), chosen once per pod from
 * its record (modes/choose.ts). Types only, as add-steps.ts and del-steps.ts are for ADD and DEL.
 */
import type { AttachmentRecord } from '../state/records';

export interface RepairMode {
  /**
   * Why a repair may not re-create the attachment's network once HNS no longer has it (the detail of its
   * network-gone report), or undefined: the network is the pod's own, re-created from its recorded spec.
   */
  networkNotRecreated(rec: AttachmentRecord): string | undefined;
}
