/**
 * HostComputeQuery: `{"SchemaVersion":{"Major":2,"Minor":0},"Flags":0,"Filter":"<JSON object as a string>"}`.
 * The SchemaVersion picks the shape Query*Properties returns (Major 2 → v2; Major 1, none, or a NULL/empty query →
 * v1). The Filter is a set of equality conditions on the internal (v1) field names — ID, Name, VirtualNetwork,
 * VirtualNetworkName, Flags… (microsoft/hcsshim hcn/hcnnetwork.go GetNetworkByName, hcn/hcnendpoint.go
 * ListEndpointsOfNetwork's {"VirtualNetwork": id}) — with GUID-valued fields compared case-insensitively.
 */
import { HR } from '../hns/hresults';
import { sameGuid, parseGuid } from './guid';
import { isObj, parseJsonDoc, schemaVersionOf, type Obj } from './json-doc';
import { fail } from './sim-error';
import type { Schema } from './views';

export interface Query {
  schema: Schema;
  filter?: Obj;
}

export function parseQuery(text: string | null | undefined): Query {
  if (text === null || text === undefined || text.trim() === '') return { schema: 'v1' };
  const doc = parseJsonDoc(text, 'query');
  const schema: Schema = (schemaVersionOf(doc)?.major ?? 0) >= 2 ? 'v2' : 'v1';
  const raw = doc.Filter;
  if (raw === undefined || raw === null || raw === '') return { schema };
  if (isObj(raw)) return { schema, filter: raw }; // lenient: an object instead of its serialisation
  if (typeof raw !== 'string') return fail(HR.INVALID_JSON, 'Filter is not a string');
  return { schema, filter: parseJsonDoc(raw, 'Filter') };
}

function fieldOf(view: Obj, key: string): unknown {
  if (key in view) return view[key];
  const k = Object.keys(view).find((x) => x.toLowerCase() === key.toLowerCase());
  return k === undefined ? undefined : view[k];
}

function equal(actual: unknown, wanted: unknown): boolean {
  if (typeof actual === 'string' && typeof wanted === 'string') {
    return parseGuid(actual) !== undefined && parseGuid(wanted) !== undefined
      ? sameGuid(actual, wanted)
      : actual === wanted;
  }
  if (wanted === null) return actual === undefined || actual === null;
  if (typeof wanted === 'object') return JSON.stringify(actual) === JSON.stringify(wanted);
  return actual === wanted;
}

/** Whether an object's v1 view satisfies every condition of the filter. */
export function matchesFilter(v1View: Obj, filter: Obj | undefined): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([k, v]) => equal(fieldOf(v1View, k), v));
}

/**
 * False when the object's own fields already rule the filter out (Name, ID, an endpoint's VirtualNetwork); true
 * when only its view can tell. A shortcut before matchesFilter, never a different answer.
 */
export function mayMatch(o: { id: string; name?: string; networkId?: string }, filter: Obj | undefined): boolean {
  if (!filter) return true;
  for (const [k, v] of Object.entries(filter)) {
    const key = k.toLowerCase();
    const own = key === 'name' ? o.name : key === 'id' ? o.id : key === 'virtualnetwork' ? o.networkId : undefined;
    if (own === undefined || typeof v !== 'string') continue;
    if (!equal(own, v)) return false;
  }
  return true;
}
