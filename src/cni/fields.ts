/**
 * Case-insensitive, path-aware reading of JSON objects, and the two error shapes configuration problems take.
 *
 * Why case-insensitive: the incumbents are Go programs, and Go's encoding/json matches field names without regard to
 * case, so real configurations say "Nameservers", "Search", "GW", "ApiVersion" and AdditionalArgs' "Name"/"Value".
 * Two keys that differ only by case in one object would make the result depend on key order, so that is refused.
 * Why paths: a code-7 message must name the key the operator has to fix, spelled as they spelled it.
 */
import { CniCode, CniError } from './cni-error';
import { isIpAddress } from '../net/addr';
import {
  MAX_DNS_LIST_ENTRIES,
  MAX_DNS_SEARCH_CHARS,
  MAX_DNS_SEARCH_ENTRIES,
  MAX_RESOLVER_OPTION,
  domainNameProblem,
  isResolverOption,
} from '../net/dns-name';

/** describeValue: a short JSON rendering of a bad value for messages ("abc" → `"abc"`, absent → `nothing`). */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  let s: string;
  try {
    s = JSON.stringify(value) ?? String(value);
  } catch {
    s = String(value);
  }
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
}

/** invalidConfig: code 7, `invalid network configuration: "<path>" must be <what>, got <value>`. */
export function invalidConfig(path: string, what: string, value: unknown): CniError {
  return invalidConfigMsg(mustBe(path, what, value));
}

/** invalidConfigMsg: code 7 with a free-form sentence (for rules that involve more than one key). */
export function invalidConfigMsg(sentence: string): CniError {
  return new CniError(CniCode.INVALID_NETWORK_CONFIG, `invalid network configuration: ${sentence}`);
}

/** unsupportedField: code 2, naming the key and the value, and saying what to do instead. */
export function unsupportedField(path: string, value: unknown, why: string): CniError {
  return new CniError(
    CniCode.UNSUPPORTED_FIELD,
    `unsupported network configuration: "${path}": ${describeValue(value)} is not supported: ${why}`,
  );
}

const DOMAIN_NAME = 'a DNS domain name (RFC 1123: letters, digits and "-" in labels joined by ".")';

/** isPlainObject: a JSON object (not an array, not null). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** joinPath: "a" + "b" → "a.b"; "" + "b" → "b". */
export function joinPath(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

/** mustBe: the sentence every typed check produces: `"<path>" must be <what>, got <value>`. */
export function mustBe(path: string, what: string, value: unknown): string {
  return `"${path}" must be ${what}, got ${describeValue(value)}`;
}

export interface FieldsOptions {
  /**
   * Refuse every pair of case-duplicate keys in the object at once (objects we interpret as a whole). When false, only
   * the keys we look up are checked (objects that pass through, like ipam or an HNS policy value).
   */
  strict: boolean;
  /**
   * How a problem sentence becomes an error. Default: code 7 "invalid network configuration: …". Results
   * (prevResult, IPAM output) use their own code and prefix; children inherit it.
   */
  fail?: (sentence: string) => CniError;
}

/** Fields: one JSON object read by case-insensitive key, remembering which keys were interpreted. */
export class Fields {
  readonly obj: Readonly<Record<string, unknown>>;
  readonly path: string;
  private readonly byLower = new Map<string, string[]>();
  private readonly used = new Set<string>();
  private readonly fail: (sentence: string) => CniError;

  constructor(obj: Readonly<Record<string, unknown>>, path: string, options: FieldsOptions = { strict: true }) {
    this.obj = obj;
    this.path = path;
    this.fail = options.fail ?? invalidConfigMsg;
    for (const k of Object.keys(obj)) {
      const lower = k.toLowerCase();
      const list = this.byLower.get(lower);
      if (list) list.push(k);
      else this.byLower.set(lower, [k]);
    }
    if (options.strict) {
      for (const keys of this.byLower.values()) {
        if (keys.length > 1) throw this.duplicate(keys);
      }
    }
  }

  /** key: the spelling the input used for `name`, or undefined; code 7 if it appears in two spellings. */
  key(name: string): string | undefined {
    const keys = this.byLower.get(name.toLowerCase());
    if (!keys) return undefined;
    if (keys.length > 1) throw this.duplicate(keys);
    return keys[0];
  }

  /** has: the key is present (null counts as absent, as Go leaves the zero value for null). */
  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /** get: the raw value (undefined when absent or null); marks the key as interpreted. */
  get(name: string): unknown {
    const k = this.key(name);
    this.used.add(name.toLowerCase());
    if (k === undefined) return undefined;
    const v = this.obj[k];
    return v === null ? undefined : v;
  }

  /** pathOf: the key path for messages, in the input's spelling when present. */
  pathOf(name: string): string {
    return joinPath(this.path, this.key(name) ?? name);
  }

  /** touch: mark keys as known without reading them (tolerated keys). */
  touch(...names: string[]): void {
    for (const n of names) this.used.add(n.toLowerCase());
  }

  /** unknownKeys: keys present in the input that nothing interpreted or tolerated, in input spelling. */
  unknownKeys(): string[] {
    const out: string[] = [];
    for (const [lower, keys] of this.byLower) if (!this.used.has(lower)) out.push(...keys);
    return out;
  }

  string(name: string, what = 'a string'): string | undefined {
    const v = this.get(name);
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw this.invalid(this.pathOf(name), what, v);
    return v;
  }

  /** nonEmptyString: a string with something in it; "" is refused (it never means "default"). */
  nonEmptyString(name: string, what = 'a non-empty string'): string | undefined {
    const v = this.get(name);
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || v === '') throw this.invalid(this.pathOf(name), what, v);
    return v;
  }

  boolean(name: string): boolean | undefined {
    const v = this.get(name);
    if (v === undefined) return undefined;
    if (typeof v !== 'boolean') throw this.invalid(this.pathOf(name), 'true or false', v);
    return v;
  }

  integer(name: string, min: number, max: number): number | undefined {
    const v = this.get(name);
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      throw this.invalid(this.pathOf(name), `an integer from ${min} to ${max}`, v);
    }
    return v;
  }

  object(name: string): Record<string, unknown> | undefined {
    const v = this.get(name);
    if (v === undefined) return undefined;
    if (!isPlainObject(v)) throw this.invalid(this.pathOf(name), 'an object', v);
    return v;
  }

  array(name: string, what = 'a list'): unknown[] | undefined {
    const v = this.get(name);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) throw this.invalid(this.pathOf(name), what, v);
    return v;
  }

  /**
   * stringArray: a list of strings. `check` may throw its own error for an entry (it gets the entry's path); entries
   * that are not strings are refused as "<itemWhat>".
   */
  stringArray(name: string, itemWhat: string, check?: (s: string, path: string) => void): string[] | undefined {
    const list = this.array(name, `a list of strings (each ${itemWhat})`);
    if (list === undefined) return undefined;
    return list.map((item, i) => {
      const p = `${this.pathOf(name)}[${i}]`;
      if (typeof item !== 'string') throw this.invalid(p, itemWhat, item);
      check?.(item, p);
      return item;
    });
  }

  /*
   * Values of a kind (src/net/dns-name.ts): each goes to HNS, where a "," splits it (v1 joins lists with ",") and a
   * blank or control character reaches the pod as it is, so only what the kind allows is read.
   */

  /** domainName: a DNS domain name (RFC 1123 host-name syntax, at most 253 characters); "" is Go's "not set". */
  domainName(name: string): string | undefined {
    const v = this.string(name, DOMAIN_NAME);
    if (v === undefined || v === '') return undefined;
    this.checkDomainName(v, this.pathOf(name));
    return v;
  }

  /** domainNameList: a search list — DNS domain names, at most 32 of them and 2048 characters in all (Kubernetes's). */
  domainNameList(name: string): string[] | undefined {
    const list = this.boundedStrings(name, DOMAIN_NAME, MAX_DNS_SEARCH_ENTRIES, (s, p) => this.checkDomainName(s, p));
    const chars = list?.join(' ').length ?? 0;
    if (chars > MAX_DNS_SEARCH_CHARS) {
      throw this.fail(
        `"${this.pathOf(name)}" must be at most ${MAX_DNS_SEARCH_CHARS} characters in all (joined by blanks), got ${chars}`,
      );
    }
    return list;
  }

  /** ipAddressList: IP addresses (nameservers), at most 32. */
  ipAddressList(name: string): string[] | undefined {
    return this.boundedStrings(name, 'an IP address', MAX_DNS_LIST_ENTRIES, (s, p) => {
      if (!isIpAddress(s)) throw this.invalid(p, 'an IP address', s);
    });
  }

  /** resolverOptionList: resolver options ("ndots:5"), at most 32. */
  resolverOptionList(name: string): string[] | undefined {
    const what = `a resolver option ("name" or "name:value", visible characters but ",", at most ${MAX_RESOLVER_OPTION})`;
    return this.boundedStrings(name, what, MAX_DNS_LIST_ENTRIES, (s, p) => {
      if (!isResolverOption(s)) throw this.invalid(p, what, s);
    });
  }

  private boundedStrings(
    name: string,
    itemWhat: string,
    max: number,
    check: (s: string, path: string) => void,
  ): string[] | undefined {
    const list = this.array(name, `a list of strings (each ${itemWhat})`);
    if (list !== undefined && list.length > max)
      throw this.fail(`"${this.pathOf(name)}" must have at most ${max} entries, got ${list.length}`);
    return this.stringArray(name, itemWhat, check);
  }

  private checkDomainName(v: string, path: string): void {
    const why = domainNameProblem(v);
    if (why !== undefined) throw this.fail(`${mustBe(path, DOMAIN_NAME, v)} (${why})`);
  }

  /** child: the object at `name` read as Fields (undefined when absent). */
  child(name: string, strict = true): Fields | undefined {
    const o = this.object(name);
    return o === undefined ? undefined : new Fields(o, this.pathOf(name), { strict, fail: this.fail });
  }

  /** nested: Fields over an object found elsewhere (a list entry), with this reader's error style. */
  nested(obj: Record<string, unknown>, path: string, strict = true): Fields {
    return new Fields(obj, path, { strict, fail: this.fail });
  }

  /** invalid: the error for `"<path>" must be <what>, got <value>` in this reader's style. */
  invalid(path: string, what: string, value: unknown): CniError {
    return this.fail(mustBe(path, what, value));
  }

  private duplicate(keys: string[]): CniError {
    const where = this.path === '' ? 'the top level' : `"${this.path}"`;
    return this.fail(`keys ${keys.map((k) => `"${k}"`).join(' and ')} in ${where} differ only by case`);
  }
}
