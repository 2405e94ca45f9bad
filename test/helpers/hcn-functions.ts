/**
 * The addon's function list, read from its one definition (native/include/hcn_functions.h), so the tests expect
 * exactly what the addon resolves and nothing has to be kept in step by hand.
 */
import * as fs from 'fs';
import * as path from 'path';

export type FnGroup = 'HCN' | 'V1' | 'HCS' | 'FREE' | 'SIM';

export interface HcnFunction {
  name: string;
  /** The library column. */
  group: FnGroup;
  /** OPTIONAL: a capability of its own (capabilities().optional), never missing. */
  optional: boolean;
  /** NO_SDK: declared by no public header, so the win build has no SDK declaration to check it against. */
  sdk: boolean;
  /** The sim column: the generic verb the simulator client's export forwards to, or OWN (written by hand). */
  sim: string;
  /** It returns a string besides its error record: each successful call leaves one for the free function. */
  returnsText: boolean;
}

const HEADER = path.join(__dirname, '..', '..', 'native', 'include', 'hcn_functions.h');

/** A string the function hands back (freed with CoTaskMemFree): a PWSTR* out parameter other than its error record
 *  (ErrorRecord, or HCS's Result document of error events). */
const returnsText = (params: string): boolean =>
  params.split(',').some((p) => {
    const out = /^PWSTR\s*\*\s*(\w+)$/.exec(p.trim());
    return out !== null && out[1] !== 'ErrorRecord' && out[1] !== 'Result';
  });

export const HCN_FUNCTION_TABLE: readonly HcnFunction[] = [
  ...fs
    .readFileSync(HEADER, 'utf8')
    .matchAll(
      /\bX\(\s*k\w+\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*(REQUIRED|OPTIONAL)\s*,\s*(SDK|NO_SDK)\s*,\s*(\w+)\s*,\s*\w+\s*,[\s\\]*\(([^()]*)\)/g,
    ),
].map((m) => ({
  name: m[1]!,
  group: m[2] as FnGroup,
  optional: m[3] === 'OPTIONAL',
  sdk: m[4] === 'SDK',
  sim: m[5]!,
  returnsText: returnsText(m[6]!),
}));

/** Names of the functions in the given groups, in the header's order. */
export function functionsIn(...groups: FnGroup[]): string[] {
  return HCN_FUNCTION_TABLE.filter((f) => groups.includes(f.group)).map((f) => f.name);
}

/** Names of the required functions in the given groups: what capabilities().missing lists when the host lacks them. */
export function requiredIn(...groups: FnGroup[]): string[] {
  return HCN_FUNCTION_TABLE.filter((f) => groups.includes(f.group) && !f.optional).map((f) => f.name);
}

/** Closes and unregistrations that the client library handles itself: never sent to the simulator. */
export const LOCAL_ONLY: ReadonlySet<string> = new Set(
  HCN_FUNCTION_TABLE.filter((f) => /^(Hcn|Hcs)(Close|Unregister)/.test(f.name)).map((f) => f.name),
);
