/**
 * Two answers compared by shape, not by value: the same keys, the same JSON types, strings of the same form (a GUID
 * in lower or upper case, a MAC with dashes or colons, an address) and, for refusals, the same HRESULT. Values differ
 * by nature — the simulator assigns its own ids, MACs and addresses — so ids are learnt as the comparison goes: a
 * host id seen where the simulator answers another becomes a mapping, which the later calls' arguments go through.
 */
import { sameId } from '../hns/api';
import { describeHresult, hresultHex } from '../hns/hresults';
import type { Answer } from './calls';

export type DifferenceKind = 'outcome' | 'code' | 'type' | 'form' | 'missing-in-sim' | 'missing-on-host' | 'empty';

export interface Difference {
  step: string;
  /** Where in the answer ("" for the answer itself, "IpConfigurations.0.PrefixLength"). */
  path: string;
  kind: DifferenceKind;
  host: string;
  sim: string;
}

const GUID = /^\{?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\}?$/;
const MAC = /^[0-9a-fA-F]{2}([-:])(?:[0-9a-fA-F]{2}\1){4}[0-9a-fA-F]{2}$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}(\/\d{1,2})?$/;

function letterCase(s: string): string {
  const letters = s.replace(/[^a-zA-Z]/g, '');
  if (letters === '') return 'digits';
  return s === s.toLowerCase() ? 'lower' : s === s.toUpperCase() ? 'upper' : 'mixed';
}

/** The form of a string: what a reader of it may rely on beyond "a string". */
export function formOf(s: string): string {
  if (GUID.test(s)) return `guid${s.startsWith('{') ? ' in braces' : ''} (${letterCase(s)} case)`;
  if (MAC.test(s)) return `MAC with ${s[2] === '-' ? 'dashes' : 'colons'} (${letterCase(s)} case)`;
  if (IPV4.test(s)) return s.includes('/') ? 'IPv4 prefix' : 'IPv4 address';
  return 'text';
}

const idLike = (s: string) => formOf(s) !== 'text';

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** Host value → simulator value, learnt from answers (keys in lower case). */
export class IdMap {
  private readonly map = new Map<string, string>();

  learn(host: string, sim: string): void {
    const k = host.toLowerCase();
    if (!this.map.has(k)) this.map.set(k, sim);
  }

  /** A host value as the simulator knows it, in the case the host value was written in. */
  translate(host: string): string {
    const sim = this.map.get(host.toLowerCase());
    if (sim === undefined) return host;
    return host === host.toUpperCase() && host !== host.toLowerCase() ? sim.toUpperCase() : sim;
  }

  /** Arguments of a call with every known host id (whole strings and GUIDs inside paths) replaced. */
  translateArgs(value: unknown): unknown {
    if (typeof value === 'string')
      return idLike(value)
        ? this.translate(value)
        : value.replace(/[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}/g, (g) => this.translate(g));
    if (Array.isArray(value)) return value.map((v) => this.translateArgs(v));
    if (value && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.translateArgs(v)]));
    return value;
  }
}

interface Walk {
  step: string;
  ids: IdMap;
  out: Difference[];
}

function diff(w: Walk, path: string, kind: DifferenceKind, host: string, sim: string): void {
  w.out.push({ step: w.step, path, kind, host, sim });
}

function walk(w: Walk, path: string, host: unknown, sim: unknown): void {
  const [th, ts] = [typeOf(host), typeOf(sim)];
  if (th !== ts) return diff(w, path, 'type', th, ts);
  if (typeof host === 'string') {
    const [fh, fs] = [formOf(host), formOf(sim as string)];
    if (fh !== fs) return diff(w, path, 'form', fh, fs);
    if (idLike(host) || path === '') w.ids.learn(host, sim as string);
    return;
  }
  if (Array.isArray(host)) {
    const s = sim as unknown[];
    if ((host.length === 0) !== (s.length === 0))
      return diff(w, path, 'empty', `${host.length} element(s)`, `${s.length} element(s)`);
    if (host.length > 0) walk(w, join(path, '0'), host[0], s[0]);
    return;
  }
  if (th === 'object') {
    const [h, s] = [host as Record<string, unknown>, sim as Record<string, unknown>];
    for (const k of Object.keys(h))
      if (!(k in s)) diff(w, join(path, k), 'missing-in-sim', typeOf(h[k]), 'absent');
      else walk(w, join(path, k), h[k], s[k]);
    for (const k of Object.keys(s)) if (!(k in h)) diff(w, join(path, k), 'missing-on-host', 'absent', typeOf(s[k]));
  }
}

const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);

/** In a listing, the element naming the focused object (by ID, Id or the element itself). */
function focused(list: unknown, id: string | undefined): unknown {
  if (!id || !Array.isArray(list)) return list;
  const hit = list.find((e) => {
    const v =
      typeof e === 'string' ? e : ((e as { ID?: unknown; Id?: unknown } | null)?.ID ?? (e as { Id?: unknown })?.Id);
    return typeof v === 'string' && sameId(v, id);
  });
  return hit === undefined ? [] : [hit];
}

/** Every difference between the host's answer and the simulator's to the same call. */
export function compareAnswers(
  step: string,
  host: Answer,
  sim: Answer,
  ids: IdMap,
  focus?: { host: string; sim: string },
): Difference[] {
  const w: Walk = { step, ids, out: [] };
  // Said from the HRESULT itself: the report's hex and code fields are for people, the number is the record.
  const code = (a: Answer) => (a.ok ? '' : `${hresultHex(a.hresult)} ${describeHresult(a.hresult).code}`);
  if (host.ok !== sim.ok) {
    const said = (a: Answer) => (a.ok ? 'answered' : `refused ${code(a)}`);
    diff(w, '', 'outcome', said(host), said(sim));
  } else if (!host.ok && !sim.ok) {
    if (host.hresult !== sim.hresult) diff(w, '', 'code', code(host), code(sim));
  } else if (host.ok && sim.ok) {
    walk(w, '', focused(host.value, focus?.host), focused(sim.value, focus?.sim));
  }
  return w.out;
}
