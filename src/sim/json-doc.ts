/**
 * Reading the JSON documents callers hand to HNS: settings, queries, modify requests, HNSCall bodies. Unparsable text
 * is HCN_E_INVALID_JSON (0x803B001B, windows-container-networking#69). A settings document is v2 when it carries
 * SchemaVersion.Major >= 2 and v1 otherwise (microsoft/hcsshim hcn/hcnv1schema_test.go passes v1 JSON to
 * HcnCreateNetwork).
 */
import { HR } from '../hns/hresults';
import { fail } from './sim-error';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A JSON object document; null, empty or anything but an object is invalid JSON for HNS. */
export function parseJsonDoc(text: string | null | undefined, what = 'document'): Obj {
  if (text === null || text === undefined || text.trim() === '') return fail(HR.INVALID_JSON, `empty ${what}`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return fail(HR.INVALID_JSON, `${what}: ${(e as Error).message}`);
  }
  if (!isObj(doc)) return fail(HR.INVALID_JSON, `${what} is not a JSON object`);
  return doc;
}

export interface SchemaVersion {
  major: number;
  minor: number;
}

/** SchemaVersion of a document, or undefined when it has none (or a malformed one). */
export function schemaVersionOf(doc: Obj): SchemaVersion | undefined {
  const sv = doc.SchemaVersion;
  if (!isObj(sv) || typeof sv.Major !== 'number') return undefined;
  return { major: sv.Major, minor: typeof sv.Minor === 'number' ? sv.Minor : 0 };
}

export function isV2Doc(doc: Obj): boolean {
  return (schemaVersionOf(doc)?.major ?? 0) >= 2;
}

/** The value of an optional field of one kind; a present field of another kind fails with `hr`. */
export function optString(doc: Obj, key: string, hr: number): string | undefined {
  const v = doc[key];
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : fail(hr, `${key} is not a string`);
}

export function optNumber(doc: Obj, key: string, hr: number): number | undefined {
  const v = doc[key];
  if (v === undefined || v === null) return undefined;
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : fail(hr, `${key} is not an unsigned integer`);
}

export function optBool(doc: Obj, key: string, hr: number): boolean | undefined {
  const v = doc[key];
  if (v === undefined || v === null) return undefined;
  return typeof v === 'boolean' ? v : fail(hr, `${key} is not a boolean`);
}

export function optArray(doc: Obj, key: string, hr: number): unknown[] {
  const v = doc[key];
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : fail(hr, `${key} is not an array`);
}

export function stringList(v: unknown, hr: number, what: string): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return [...(v as string[])];
  return fail(hr, `${what} is not a list of strings`);
}

/** v1 writes lists as comma-separated strings ("10.0.0.10,168.63.129.16"). */
export function commaList(v: string | undefined): string[] {
  return v
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}

/** A Settings value given as an object or as its JSON serialisation (both appear in clients); else `hr`. */
export function objectOrJson(v: unknown, hr: number, what: string): Obj {
  if (typeof v === 'string') {
    try {
      const parsed: unknown = JSON.parse(v);
      if (isObj(parsed)) return parsed;
    } catch {
      /* reported below */
    }
    return fail(hr, `${what} is not a JSON object`);
  }
  return isObj(v) ? v : fail(hr, `${what} is not an object`);
}

/**
 * An enum given by name (case-insensitive) or by its position, as HNS accepts both (names: MicrosoftDocs/
 * Virtualization-Documentation virtualization/api/hcn/HNS_Schema.md, which says variants "should be used as string";
 * positions: Microsoft's C++ sample sends network and Ipam "Type" : 0, MicrosoftDocs/windowsserverdocs
 * WindowsServerDocs/networking/technologies/hcn/hcn-scenarios.md). Names matched case-insensitively: our assumption.
 */
export function enumValue<T extends string>(v: unknown, names: readonly T[]): T | undefined {
  if (typeof v === 'number' && Number.isInteger(v)) return names[v];
  if (typeof v === 'string') return names.find((n) => n.toLowerCase() === v.toLowerCase());
  return undefined;
}
