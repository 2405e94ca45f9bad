/**
 * GUIDs as HNS shows them: 36 characters, no braces. Objects created through HCN (v2) carry lowercase ids and
 * objects created through HNSCall (v1) uppercase ones. Ids are 36 characters without braces (microsoft/hcsshim
 * hcn/hcnnetwork.go enumerateNetworks unmarshals the list into guid.GUID values). The case split is our assumption,
 * not captured, only consistent with public outputs: a CNI endpoint made under containerd (HCN) is listed lowercase in
 * microsoft/Windows-Containers issue 563, and Docker's v1 HNSCall log in docker/for-win issue 4295 addresses the nat
 * network in uppercase. Every comparison is case-insensitive, so the map keys are the lowercase form.
 */
import { randomUUID } from 'node:crypto';
import { GUID_PATTERN } from '../net/guid';

export const GUID_NULL = '00000000-0000-0000-0000-000000000000';

/** The 36-character form of a GUID string (braces dropped, case kept), or undefined when it is not a GUID. */
export function parseGuid(s: unknown): string | undefined {
  if (typeof s !== 'string') return undefined;
  const m = GUID_PATTERN.exec(s.trim());
  return m ? m[1] : undefined;
}

/** Map key for an id: lowercase, braces dropped. */
export function guidKey(s: string): string {
  return (parseGuid(s) ?? s).toLowerCase();
}

export function sameGuid(a: unknown, b: unknown): boolean {
  const x = parseGuid(a);
  const y = parseGuid(b);
  return x !== undefined && y !== undefined && x.toLowerCase() === y.toLowerCase();
}

export function isNullGuid(s: string | null | undefined): boolean {
  return s === null || s === undefined || s === '' || sameGuid(s, GUID_NULL);
}

export type ApiFlavour = 'v1' | 'v2';

/** A fresh GUID in the case its API shows. */
export function newGuid(api: ApiFlavour): string {
  return inCase(randomUUID(), api);
}

export function inCase(guid: string, api: ApiFlavour): string {
  return api === 'v1' ? guid.toUpperCase() : guid.toLowerCase();
}

const GUIDS_IN_TEXT = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * Every GUID inside a text re-cased (the host's idCase test mode, control-types.ts SimHost.idCase). `mixed` alternates
 * letter case along the GUID, starting upper or lower by `parity`: the engine flips it on every answer, so two
 * answers naming the same object never spell it the same way.
 */
export function recaseGuids(text: string, mode: 'as-stored' | 'upper' | 'mixed' | undefined, parity = 0): string {
  if (mode === undefined || mode === 'as-stored') return text;
  return text.replace(GUIDS_IN_TEXT, (g) =>
    mode === 'upper'
      ? g.toUpperCase()
      : [...g].map((c, i) => ((i + parity) % 2 === 0 ? c.toUpperCase() : c.toLowerCase())).join(''),
  );
}
