/**
 * The key table (src/cni/config-keys.ts) is the one home of each configuration key: the parser's defaults and bounds
 * come from it, and NetConf's fields are checked against it when this file compiles (`npx tsc`).
 */
import {
  CONFIG_KEYS,
  DEFAULTS,
  KEY_SPECS,
  type IntegerRule,
  type KeySpec,
  type RuleOf,
  type RuledKey,
  type ValueOf,
} from '../../src/cni/config-keys';
import { parseNetConf } from '../../src/cni/config';
import { cniFailure } from '../helpers/net-conf';
import type { NetConf } from '../../src/cni/types';

type Spec = (typeof KEY_SPECS)[number];
/** The NetConf fields an entry fills: its `fills`, else the field spelled like its key. */
type FilledBy<S> = S extends { fills: readonly (infer F)[] }
  ? F
  : S extends { key: infer K }
    ? K & keyof NetConf
    : never;
/** What the parser itself adds, fed by no key. */
type ParserOwn = 'warnings' | 'raw';

// Every NetConf field is filled by some key's entry: a field without one fails to compile here, naming the field.
type Unfilled = Exclude<keyof NetConf, FilledBy<Spec> | ParserOwn>;
const everyFieldHasAKey: [Unfilled] extends [never] ? true : Unfilled = true;

// An entry without `fills` is spelled like the NetConf field it fills.
type Unmapped = Exclude<Exclude<Spec, { fills: unknown }>['key'], keyof NetConf>;
const everyKeyMapsToAField: [Unmapped] extends [never] ? true : Unmapped = true;

// A rule reads a value of its field's type (a boolean rule for a boolean field, the field's own choices).
type Mismatched = {
  [K in RuledKey & keyof NetConf]: ValueOf<RuleOf<K>> extends NonNullable<NetConf[K]> ? never : K;
}[RuledKey & keyof NetConf];
const everyRuleFitsItsField: [Mismatched] extends [never] ? true : Mismatched = true;

const BASE = { cniVersion: '1.0.0', name: 'cbr0', type: 'hcn-cni', subnet: '10.0.0.0/24' };

function parse(extra: Record<string, unknown>): NetConf {
  return parseNetConf({ ...BASE, ...extra }, { platform: 'linux', defaults: { stateDir: '/tmp/state' }, verb: 'ADD' });
}

function refusal(extra: Record<string, unknown>): { code: number; msg: string } {
  return cniFailure(() => parse(extra), `accepted ${JSON.stringify(extra)}`);
}

const specs = KEY_SPECS as readonly KeySpec[];
const ruled = (kind: string) => specs.filter((k) => k.rule?.kind === kind).map((k) => [k.key, k.rule] as const);

describe('the configuration key table', () => {
  it('is checked against NetConf when it compiles', () => {
    expect([everyFieldHasAKey, everyKeyMapsToAField, everyRuleFitsItsField]).toEqual([true, true, true]);
  });

  it('lists each key once (any case)', () => {
    const lower = CONFIG_KEYS.map((k) => k.key.toLowerCase());
    expect(lower.length).toBe(new Set(lower).size);
  });

  it.each(Object.entries(DEFAULTS))('applies the default of %s when the key is absent', (key, value) => {
    expect((parse({}) as unknown as Record<string, unknown>)[key]).toEqual(value);
  });

  it.each(ruled('integer'))('reads %s as an integer within its bounds, error 7 outside', (key, rule) => {
    const { min, max } = rule as IntegerRule;
    const conf = (v: number) => (parse({ [key]: v }) as unknown as Record<string, unknown>)[key];
    expect([conf(min), conf(max)]).toEqual([min, max]);
    for (const bad of [min - 1, max + 1, min + 0.5, String(min)]) {
      expect(refusal({ [key]: bad })).toEqual({
        code: 7,
        msg: `invalid network configuration: "${key}" must be an integer from ${min} to ${max}, got ${JSON.stringify(bad)}`,
      });
    }
  });

  it.each(ruled('boolean'))('reads %s as true or false only, error 7 otherwise', (key) => {
    const conf = (v: boolean) => (parse({ [key]: v }) as unknown as Record<string, unknown>)[key];
    expect([conf(true), conf(false)]).toEqual([true, false]);
    expect(refusal({ [key]: 'true' })).toEqual({
      code: 7,
      msg: `invalid network configuration: "${key}" must be true or false, got "true"`,
    });
  });

  it.each(ruled('choice'))('reads %s as one of its choices in any case, error 7 otherwise', (key, rule) => {
    const { choices } = rule as { choices: readonly string[] };
    for (const c of choices) {
      expect((parse({ [key]: c.toUpperCase() }) as unknown as Record<string, unknown>)[key]).toBe(c);
    }
    expect(refusal({ [key]: 'nonsense' })).toEqual({
      code: 7,
      msg: `invalid network configuration: "${key}" must be one of ${choices.map((c) => `"${c}"`).join(', ')}, got "nonsense"`,
    });
  });
});
