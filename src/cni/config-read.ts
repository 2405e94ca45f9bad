/**
 * Reading a key by its entry in the key table (config-keys.ts): a plain rule (boolean, bounded integer, choice) read
 * the same way for every key, the key's default when it is not given, and aliases that must agree. The groups of
 * config.ts, config-network.ts and config-pod.ts read their keys through these.
 */
import { DEFAULTS, ruleOf, type KeyRule, type RuleOf, type RuledKey, type ValueOf } from './config-keys';
import { Fields, invalidConfig, invalidConfigMsg, describeValue } from './fields';

/** readSetting: a key with a plain rule (boolean, integer, choice), read by its entry; `name` may be an alias. */
export function readSetting<K extends RuledKey>(f: Fields, key: K, name: string = key): ValueOf<RuleOf<K>> | undefined {
  const rule: KeyRule = ruleOf(key);
  switch (rule.kind) {
    case 'boolean':
      return f.boolean(name) as ValueOf<RuleOf<K>> | undefined;
    case 'integer':
      return f.integer(name, rule.min, rule.max) as ValueOf<RuleOf<K>> | undefined;
    case 'choice':
      return oneOf(f, name, rule.choices) as ValueOf<RuleOf<K>> | undefined;
    case 'custom':
      throw new Error(`${key} is read by a function of its own`);
  }
}

/** setting: readSetting, or the key's default. */
export function setting<K extends RuledKey & keyof typeof DEFAULTS>(f: Fields, key: K): ValueOf<RuleOf<K>> {
  return readSetting(f, key) ?? (DEFAULTS[key] as ValueOf<RuleOf<K>>);
}

/** oneOf: a string matching one of `choices` case-insensitively, returned in canonical spelling. */
export function oneOf<T extends string>(f: Fields, name: string, choices: readonly T[]): T | undefined {
  const v = f.get(name);
  if (v === undefined) return undefined;
  const hit = typeof v === 'string' ? choices.find((c) => c.toLowerCase() === v.toLowerCase()) : undefined;
  if (hit === undefined) throw invalidConfig(f.pathOf(name), `one of ${choices.map((c) => `"${c}"`).join(', ')}`, v);
  return hit;
}

/** agree: the common value of aliases, or code 7 naming the two that disagree. */
export function agree<T>(given: Array<[string, T]>): T | undefined {
  for (const [p, v] of given.slice(1)) {
    if (v !== given[0]![1]) {
      throw invalidConfigMsg(
        `"${given[0]![0]}" (${describeValue(given[0]![1])}) and "${p}" (${describeValue(v)}) are the same setting and disagree`,
      );
    }
  }
  return given[0]?.[1];
}
