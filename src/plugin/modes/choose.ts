/**
 * The mode of a configuration or of a record, chosen once per verb (add.ts, del-plan.ts) or per recorded pod
 * (del-recorded.ts, repair-pod.ts): its variations are the methods of its object.
 */
import type { NetConf } from '../../cni/types';
import type { AddMode } from '../add-steps';
import type { DelMode } from '../del-steps';
import type { RepairMode } from '../repair-steps';
import type { AttachmentRecord } from '../../state/records';
import { bridgeMode } from './bridge';
import { delegatedNicMode } from './delegated-nic';

/** Bridge or delegated NIC: what an ADD, a DEL and a repair do differently in each. */
export type Mode = AddMode & DelMode & RepairMode;

const MODES: Readonly<Record<NetConf['mode'], Mode>> = { bridge: bridgeMode, delegatedNic: delegatedNicMode };

export function modeOf(conf: Pick<NetConf, 'mode'>): Mode {
  return MODES[conf.mode];
}

/**
 * The mode a record was created in. A shared attachment (container:<id>) borrows the sandbox's endpoint and owns no
 * network: as a bridge attachment, it has no network of its own to remove.
 */
export function modeOfRecord(rec: Pick<AttachmentRecord, 'mode'>): Mode {
  return rec.mode === 'shared' ? bridgeMode : MODES[rec.mode];
}
