/**
 * The adapter each HNS network bound, by its NetCfgInstanceId, as the node agent first saw it: this state directory's
 * record of the networks it has no record of its own for (a bridge network, a peer's), so a NIC replaced or
 * reinstalled under the same name and MAC — HNS keeps the network bound to the old id (projectcalico/calico issue
 * 11840) — is told after the fact, even across a reboot that restarted the service. A network keeps its first entry
 * until it is gone (a network re-created has another id); the doctor compares it with the host's adapter now.
 * Best effort: a file that cannot be read or written only means nothing to compare.
 */
import * as fs from 'fs';
import * as path from 'path';
import { writeFileAtomic } from './atomic';
import { ADAPTERS_SEEN } from './file-names';
import type { HousekeepingLog } from './housekeeping';

export interface SeenAdapter {
  adapterName: string;
  /** "{GUID}" as Windows writes it. */
  interfaceGuid: string;
  /** When it was first seen (ms since epoch). */
  since: number;
}

/** By network id, lower case. */
export type AdaptersSeen = Record<string, SeenAdapter>;

export function readAdaptersSeen(stateDir: string): AdaptersSeen {
  try {
    const v = JSON.parse(fs.readFileSync(path.join(stateDir, ADAPTERS_SEEN), 'utf8')) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return {};
    const out: AdaptersSeen = {};
    for (const [id, e] of Object.entries(v as Record<string, Partial<SeenAdapter>>)) {
      if (typeof e?.adapterName === 'string' && typeof e.interfaceGuid === 'string' && typeof e.since === 'number')
        out[id.toLowerCase()] = { adapterName: e.adapterName, interfaceGuid: e.interfaceGuid, since: e.since };
    }
    return out;
  } catch {
    return {};
  }
}

export function writeAdaptersSeen(
  stateDir: string,
  seen: AdaptersSeen,
  log: HousekeepingLog | undefined,
  ensure: () => void,
): void {
  try {
    ensure();
    writeFileAtomic(path.join(stateDir, ADAPTERS_SEEN), JSON.stringify(seen), 'adapters-seen', undefined, 'none');
  } catch (e) {
    log?.warn(
      { file: path.join(stateDir, ADAPTERS_SEEN), err: (e as Error).message },
      "could not note the networks' adapters; the doctor compares what was noted before",
    );
  }
}
