/** The mode of a configuration, chosen once per ADD (add.ts): its variations are the methods of its object. */
import type { NetConf } from '../../cni/types';
import type { AddMode } from '../add-steps';
import { bridgeMode } from './bridge';
import { delegatedNicMode } from './delegated-nic';

const MODES: Readonly<Record<NetConf['mode'], AddMode>> = { bridge: bridgeMode, delegatedNic: delegatedNicMode };

export function modeOf(conf: Pick<NetConf, 'mode'>): AddMode {
  return MODES[conf.mode];
}
