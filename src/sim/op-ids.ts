/** The ids a request names or creates, read at acceptance (op-table.ts, op-table-v1.ts, op-table-sdn.ts). */
import { HR } from '../hns/hresults';
import { inCase, isNullGuid, newGuid, parseGuid, type ApiFlavour } from './guid';
import type { Obj } from './json-doc';
import { fail } from './sim-error';

export function requireGuid(v: string | null | undefined, what: string): string {
  return parseGuid(v) ?? fail(HR.E_INVALIDARG, `${what} is not a GUID: ${JSON.stringify(v)}`);
}

/** The id a create will store: the caller's, else the one inside the settings, else a fresh one — in the API's case. */
export function createId(
  requested: string | null | undefined,
  settingsText: string | null | undefined,
  api: ApiFlavour,
): string {
  if (!isNullGuid(requested)) return inCase(requireGuid(requested, 'id'), api);
  try {
    const inner = parseGuid((JSON.parse(settingsText ?? '') as Obj).ID);
    if (inner && !isNullGuid(inner)) return inCase(inner, api);
  } catch {
    /* run() reports unparsable settings */
  }
  return newGuid(api);
}
