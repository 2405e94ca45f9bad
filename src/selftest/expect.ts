/**
 * Tokens and expectations of a plan (plan.ts) made concrete: the arguments with the objects' values put in, the
 * values a step learns read out of its answer, and whether an answer is what the plugin relies on.
 */
import { sameId } from '../hns/api';
import { hresultHex } from '../hns/hresults';
import type { Answer } from './calls';
import type { Expect } from './plan';

export type Bound = Record<string, string | number>;

const TOKEN = /\{\{(\w+)(:upper)?\}\}/g;

/** The value with every "{{token}}" replaced; a string that is one token takes the bound value's type (a number). */
export function resolve(value: unknown, bound: Bound): unknown {
  if (typeof value === 'string') {
    const whole = /^\{\{(\w+)(:upper)?\}\}$/.exec(value);
    if (whole && whole[2] === undefined && typeof bound[whole[1]!] === 'number') return bound[whole[1]!];
    return value.replace(TOKEN, (_, name: string, upper?: string) => {
      const v = bound[name];
      if (v === undefined) throw new Error(`the plan uses {{${name}}} before it is known`);
      return upper ? String(v).toUpperCase() : String(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, bound));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, bound)]));
  return value;
}

/** The value at a dotted path ("IpConfigurations.0.IpAddress"; "" is the value itself), or undefined. */
export function at(value: unknown, path: string): unknown {
  if (path === '') return value;
  let cur: unknown = value;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Why the answer is not what the plugin relies on, or undefined when it is. */
export function problemWith(expect: Expect, answer: Answer, bound: Bound): string | undefined {
  if (expect.outcome === 'fails') {
    if (answer.ok) return `HNS accepted it; the plugin expects a refusal (${expect.meaning})`;
    if (expect.codes.includes(answer.hresult)) return undefined;
    return `refused with ${answer.hex} ${answer.code}; the plugin recognises ${expect.meaning} by ${expect.codes.map(hresultHex).join(' or ')}`;
  }
  if (!answer.ok) return `refused with ${answer.hex} ${answer.code}: ${answer.message}`;
  const missing = (expect.has ?? []).filter((p) => at(answer.value, p) === undefined);
  if (missing.length > 0) return `the answer lacks ${missing.join(', ')}`;
  for (const [path, token] of Object.entries(expect.sameId ?? {})) {
    const got = at(answer.value, path);
    if (!sameId(String(got ?? ''), String(bound[token] ?? '')))
      return `${path} is ${JSON.stringify(got)}, not the ${token} ${String(bound[token])}`;
  }
  if (expect.lists) {
    const list = at(answer.value, expect.lists.path ?? '');
    const want = String(bound[expect.lists.token] ?? '');
    const key = expect.lists.key;
    const found = Array.isArray(list) && list.some((e) => sameId(String((key ? at(e, key) : e) ?? ''), want));
    if (!found) return `${expect.lists.path || 'the answer'} does not list ${expect.lists.token} ${want}`;
  }
  return undefined;
}
