/**
 * What an operator can do about an object of ours the audit leaves (in flight, or protected): one answer per cause,
 * shared by the doctor's findings and uninstall's refusal, so neither tells someone to clear a quarantine that is not
 * there. A network that holds another plugin's endpoint stays until that plugin (or its operator) removes the
 * endpoint: deleting the network would take the endpoint with it in HNS, and hcn-cni never removes what it did not name.
 */
import type { Judged } from './detect';

export function nextStep(j: Pick<Judged, 'verdict' | 'held'>): string | undefined {
  if (j.verdict === 'in-flight') return 'wait for the running ADD to finish or pass its deadline, then run it again';
  if (j.verdict !== 'protected') return undefined;
  switch (j.held) {
    case 'quarantined':
      return 'hcn-cni state (the quarantined record and why); once dealt with, hcn-cni state --clear-quarantine';
    case 'newer-record':
      return 'run the newer hcn-cni that wrote the record (hcn-cni state shows it, with its record schema)';
    case 'attached':
      return 'remove the pod it is attached to through the runtime (crictl stopp, then rmp); its DEL or the next audit then removes it';
    case 'holds-foreign':
      return 'remove the endpoints not named by hcn-cni with the plugin that made them; hcn-cni deletes neither them nor the network while they are on it';
    case 'holds-ours':
      return 'let the pods on it end (their DEL), or the ADD creating them finish; the next audit then deletes the network';
    default:
      return 'hcn-cni audit --dry-run says why it is left';
  }
}
