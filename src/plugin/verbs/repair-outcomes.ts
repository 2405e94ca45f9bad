/** What became of one pod's repair (repair.ts), as reported to the service and its metrics. */
import { hresultHex } from '../../hns/hresults';
import { ownerKey, type Owner } from '../../state/records';

/** What became of one pod's repair (docs/repair.md, "Per pod, reported"); the service's metrics label them all. */
export const REPAIR_OUTCOMES = [
  'repaired',
  'namespace-gone',
  'container-gone',
  'network-gone',
  'no-recorded-spec',
  'deleted-meanwhile',
  'attached-elsewhere',
  'hns-refused',
  'hns-unreachable',
  'hns-failed',
] as const;
export type RepairOutcome = (typeof REPAIR_OUTCOMES)[number];

export interface PodRepair {
  /** containerId@ifname */
  attachment: string;
  endpoint: string;
  outcome: RepairOutcome;
  detail?: string;
  /** The HRESULT HNS (or HCS) answered, "0x803B0006", when it refused. */
  hresult?: string;
}

/** Says what became of one pod's repair. */
export type Reporter = (outcome: RepairOutcome, detail?: string, hresult?: number) => PodRepair;

/** The reporter of one pod's repair: its attachment and the endpoint its record named when the repair began. */
export function reporterFor(owner: Owner, endpoint: string): Reporter {
  return (outcome, detail, hresult) => ({
    attachment: ownerKey(owner),
    endpoint,
    outcome,
    ...(detail ? { detail } : {}),
    ...(hresult !== undefined ? { hresult: hresultHex(hresult) } : {}),
  });
}
