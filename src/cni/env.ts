/**
 * The CNI_* environment: which variables each verb needs, how their values are checked, and CNI_ARGS parsing.
 * Modelled on the Go skel's table (getCmdArgsFromEnv): a variable is checked only for the verbs that need it, an
 * empty value counts as missing, and every missing variable is named in one code-4 error.
 */
import { CniCode, CniError } from './cni-error';
import type { AttachmentArgs, Verb } from './types';

/** VERBS: every CNI_COMMAND we answer (the spec's prose forgets STATUS in one list; it is specified all the same). */
export const VERBS: readonly Verb[] = ['ADD', 'DEL', 'CHECK', 'VERSION', 'GC', 'STATUS'];

/** CONTAINER_ID_PATTERN: the spec's rule for CNI_CONTAINERID (also valid for `name`). */
export const CONTAINER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * IFNAME_PATTERN: stricter than the spec (which lets the plugin refuse names it cannot use). Endpoint and state-file
 * names are derived from CNI_IFNAME, so path separators, ':' and whitespace are refused up front; "." and ".." are
 * refused separately because they match the pattern but name directories.
 */
export const IFNAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

export interface EnvVarSpec {
  name: string;
  /** Verbs for which the variable must be set and non-empty (and is validated). */
  requiredFor: readonly Verb[];
  /** Returns why the value is unusable, or undefined when it is fine. */
  validate?: (value: string) => string | undefined;
  /** Set-but-empty is a value, not a missing variable. */
  emptyAllowed?: boolean;
}

/** ENV_TABLE: per-variable requirements (CNI_COMMAND is read before this table is consulted). */
export const ENV_TABLE: readonly EnvVarSpec[] = [
  {
    name: 'CNI_CONTAINERID',
    requiredFor: ['ADD', 'DEL', 'CHECK'],
    validate: (v) =>
      CONTAINER_ID_PATTERN.test(v)
        ? undefined
        : 'must start with a letter or digit and contain only letters, digits, "_", "." and "-"',
  },
  // Optional for DEL: the runtime may have lost the namespace and still must be able to clean up. Set but empty is
  // allowed: like "none", it names a Docker-style pod sandbox (attach by container id).
  { name: 'CNI_NETNS', requiredFor: ['ADD', 'CHECK'], emptyAllowed: true },
  {
    name: 'CNI_IFNAME',
    requiredFor: ['ADD', 'DEL', 'CHECK'],
    validate: (v) =>
      IFNAME_PATTERN.test(v) && v !== '.' && v !== '..'
        ? undefined
        : 'must be 1 to 64 letters, digits, "_", "." or "-" (and not "." or "..")',
  },
  // The spec makes CNI_PATH optional except for GC; skel (and Debian's host-local) require it for every verb but
  // STATUS, and a plugin that delegates IPAM cannot work without it.
  { name: 'CNI_PATH', requiredFor: ['ADD', 'DEL', 'CHECK', 'GC'] },
];

export type Env = Readonly<Record<string, string | undefined>>;

/** readCommand: CNI_COMMAND as a Verb; missing or unknown → code 4. */
export function readCommand(env: Env): Verb {
  const cmd = env.CNI_COMMAND;
  if (cmd === undefined || cmd === '') {
    throw new CniError(CniCode.INVALID_ENV, 'required env variables [CNI_COMMAND] missing');
  }
  if (!(VERBS as readonly string[]).includes(cmd)) {
    throw new CniError(
      CniCode.INVALID_ENV,
      `unknown CNI_COMMAND ${JSON.stringify(cmd)}; expected one of ${VERBS.join(', ')}`,
    );
  }
  return cmd as Verb;
}

/** checkEnv: every variable the verb requires is present, and each present required one passes its validator. */
export function checkEnv(env: Env, verb: Verb): void {
  const missing: string[] = [];
  for (const spec of ENV_TABLE) {
    if (!spec.requiredFor.includes(verb)) continue;
    const value = env[spec.name];
    if (value === undefined || (value === '' && !spec.emptyAllowed)) {
      missing.push(spec.name);
      continue;
    }
    const why = spec.validate?.(value);
    if (why !== undefined) {
      throw new CniError(CniCode.INVALID_ENV, `invalid ${spec.name} ${JSON.stringify(value)}: ${why}`);
    }
  }
  if (missing.length > 0) {
    throw new CniError(CniCode.INVALID_ENV, `required env variables [${missing.join(', ')}] missing for ${verb}`);
  }
}

/** pathSeparator: the OS list separator CNI_PATH uses. */
export function pathSeparator(platform: NodeJS.Platform): string {
  return platform === 'win32' ? ';' : ':';
}

/** splitCniPath: CNI_PATH split on the platform's separator, empty entries dropped, order kept. */
export function splitCniPath(value: string | undefined, platform: NodeJS.Platform): string[] {
  if (!value) return [];
  return value.split(pathSeparator(platform)).filter((d) => d !== '');
}

/**
 * parseCniArgs: `K1=V1;K2=V2`. Empty segments (a trailing ';') are tolerated; a segment without '=' or with an
 * empty key, or a key given twice, is code 4 (libcni's LoadArgs also refuses malformed pairs). A value may contain
 * '=' (only the first one separates).
 */
export function parseCniArgs(value: string | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (!value) return out;
  for (const segment of value.split(';')) {
    if (segment === '') continue;
    const eq = segment.indexOf('=');
    if (eq <= 0) {
      throw new CniError(
        CniCode.INVALID_ENV,
        `invalid CNI_ARGS pair ${JSON.stringify(segment)}: expected KEY=VALUE pairs separated by ";"`,
      );
    }
    const key = segment.slice(0, eq);
    if (Object.prototype.hasOwnProperty.call(out, key)) {
      throw new CniError(CniCode.INVALID_ENV, `invalid CNI_ARGS: key ${JSON.stringify(key)} given more than once`);
    }
    out[key] = segment.slice(eq + 1);
  }
  return out;
}

/** readAttachment: the AttachmentArgs of an ADD/DEL/CHECK (call checkEnv first). */
export function readAttachment(env: Env, platform: NodeJS.Platform): AttachmentArgs {
  return {
    containerId: env.CNI_CONTAINERID ?? '',
    ifname: env.CNI_IFNAME ?? '',
    netns: env.CNI_NETNS ?? '',
    args: parseCniArgs(env.CNI_ARGS),
    path: splitCniPath(env.CNI_PATH, platform),
  };
}
