/**
 * Bounds on the shape of the configuration, checked before anything else reads it. Values the plugin passes on
 * without understanding them — HNS policy objects (AdditionalArgs[].Value, policies[].value), `args` — end up in
 * JSON.stringify, in HNS requests and in log lines, all of which recurse: a value nested 5 000 levels deep once
 * overflowed the stack with 999 after the network had been created. Error 7, naming the key, before anything runs.
 * The walk itself is iterative, so it cannot overflow on what it is guarding against.
 */
import { invalidConfigMsg } from './fields';

/** Real configurations nest 5 or 6 levels (an ACL policy inside AdditionalArgs); 32 leaves room for anything real. */
export const MAX_CONFIG_DEPTH = 32;
/** One HNS policy object is a few hundred bytes; 64 KiB per passed-through value is beyond any real one. */
export const MAX_PASSTHROUGH_BYTES = 64 * 1024;

/** Top-level keys whose values (or whose entries' `value`) are passed through as they are (any case). */
const POLICY_LISTS = new Set(['additionalargs', 'policies']);
const OPAQUE = new Set(['args']);

/** Approximate JSON size of a value (strings and keys by length), computed without recursion and with a ceiling. */
function approxSize(value: unknown, ceiling: number): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && size <= ceiling) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length + 2;
    else if (Array.isArray(v)) {
      size += 2 + v.length;
      for (const x of v) stack.push(x);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        size += k.length + 4;
        stack.push(x);
      }
      size += 2;
    } else size += String(v).length;
  }
  return size;
}

function key(path: string, k: string): string {
  return path === '' ? k : `${path}.${k}`;
}

/** Throws code 7 when the document nests deeper than MAX_CONFIG_DEPTH or a passthrough value is too large. */
export function checkValueBounds(raw: Record<string, unknown>): void {
  const stack: Array<{ v: unknown; depth: number; path: string }> = [{ v: raw, depth: 1, path: '' }];
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > MAX_CONFIG_DEPTH) {
      throw invalidConfigMsg(
        `"${path}" is nested more than ${MAX_CONFIG_DEPTH} levels deep; no network configuration needs that`,
      );
    }
    if (Array.isArray(v)) v.forEach((x, i) => stack.push({ v: x, depth: depth + 1, path: `${path}[${i}]` }));
    else
      for (const [k, x] of Object.entries(v as Record<string, unknown>))
        stack.push({ v: x, depth: depth + 1, path: key(path, k) });
  }
  for (const [k, v] of Object.entries(raw)) {
    const lower = k.toLowerCase();
    const values: Array<[string, unknown]> = [];
    if (OPAQUE.has(lower)) values.push([k, v]);
    if (POLICY_LISTS.has(lower) && Array.isArray(v)) {
      v.forEach((entry, i) => {
        if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return;
        for (const [ek, ev] of Object.entries(entry as Record<string, unknown>)) {
          if (ek.toLowerCase() === 'value') values.push([`${k}[${i}].${ek}`, ev]);
        }
      });
    }
    for (const [p, value] of values) {
      if (approxSize(value, MAX_PASSTHROUGH_BYTES) > MAX_PASSTHROUGH_BYTES) {
        throw invalidConfigMsg(
          `"${p}" is larger than ${MAX_PASSTHROUGH_BYTES / 1024} KiB; a value passed on to HNS or the runtime may be at most that`,
        );
      }
    }
  }
}
