/**
 * The addon's function list, read from its one definition (native/include/hcn_functions.h), so the tests expect
 * exactly what the addon resolves and nothing has to be kept in step by hand.
 */
import * as fs from 'fs';
import * as path from 'path';

export type FnGroup = 'HCN' | 'V1' | 'HCS' | 'FREE' | 'SIM';

export interface HcnFunction {
  name: string;
  group: FnGroup;
}

const HEADER = path.join(__dirname, '..', '..', 'native', 'include', 'hcn_functions.h');

export const HCN_FUNCTION_TABLE: readonly HcnFunction[] = [
  ...fs.readFileSync(HEADER, 'utf8').matchAll(/HCN_FUNCTION\(\s*k\w+\s*,\s*(\w+)\s*,\s*(\w+)\s*\)/g),
].map((m) => ({ name: m[1]!, group: m[2] as FnGroup }));

/** Names of the functions in the given groups, in the header's order. */
export function functionsIn(...groups: FnGroup[]): string[] {
  return HCN_FUNCTION_TABLE.filter((f) => groups.includes(f.group)).map((f) => f.name);
}

/** Closes that the client library handles itself: never sent to the simulator. */
export const LOCAL_ONLY: ReadonlySet<string> = new Set(
  HCN_FUNCTION_TABLE.filter((f) => /^(Hcn|Hcs)Close/.test(f.name)).map((f) => f.name),
);
