/**
 * CNI spec versions: which we speak, how they order, and the minimum version each verb needs.
 * The Go skel matches the requested version EXACTLY against the supported list (a plugin that lists "0.3.0" but not
 * "0.3.1" rejects 0.3.1), and so do we; ordering is only used for the per-verb minimums and for result shapes.
 */
import { CniCode, CniError } from './cni-error';
import { describeValue } from './fields';
import { SUPPORTED_VERSIONS, type CniVersion, type Verb } from './types';

/** The version we answer VERSION with when the request names none, and the one newer results are shaped for. */
export const LATEST_VERSION: CniVersion = '1.1.0';

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/**
 * DEFAULT_CONF_VERSION: what a configuration without cniVersion means. containernetworking/cni pkg/version/conf.go
 * (ConfigDecoder.Decode) reads a missing or empty cniVersion as "0.1.0", and the peers' skel accepts it.
 */
export const DEFAULT_CONF_VERSION: CniVersion = '0.1.0';

/** versionOrDefault: the version a configuration's cniVersion value asks for (absent or "" is DEFAULT_CONF_VERSION). */
export function versionOrDefault(given: unknown): unknown {
  return given === undefined || given === '' ? DEFAULT_CONF_VERSION : given;
}

/**
 * supportedVersion: the requested version when we speak it (exact match against SUPPORTED_VERSIONS, like skel) and,
 * given a verb, when the verb exists in it (CHECK 0.4.0, GC and STATUS 1.1.0); code 1 otherwise.
 */
export function supportedVersion(requested: unknown, verb?: Verb): CniVersion {
  if (!isSupportedVersion(requested)) {
    throw new CniError(
      CniCode.INCOMPATIBLE_VERSION,
      `incompatible CNI version ${describeValue(requested)}; this plugin supports ${SUPPORTED_VERSIONS.join(', ')}`,
    );
  }
  const min = verb === undefined ? undefined : MIN_VERSION_FOR[verb];
  if (min !== undefined && !versionAtLeast(requested, min)) {
    throw new CniError(
      CniCode.INCOMPATIBLE_VERSION,
      `incompatible CNI version: ${verb} needs cniVersion ${min} or later, got ${JSON.stringify(requested)}`,
    );
  }
  return requested;
}

/** isSupportedVersion: exact string match against SUPPORTED_VERSIONS, like skel. */
export function isSupportedVersion(v: unknown): v is CniVersion {
  return typeof v === 'string' && (SUPPORTED_VERSIONS as readonly string[]).includes(v);
}

/** isVersionString: "X.Y.Z" with decimal parts (used to decide whether a requested version may be echoed back). */
export function isVersionString(v: unknown): v is string {
  return typeof v === 'string' && SEMVER.test(v);
}

/** compareVersions: negative, zero or positive like a sort comparator; throws on a string that is not X.Y.Z. */
export function compareVersions(a: string, b: string): number {
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < 3; i++) {
    const d = pa[i]! - pb[i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** versionAtLeast: a >= min. */
export function versionAtLeast(a: string, min: string): boolean {
  return compareVersions(a, min) >= 0;
}

/**
 * MIN_VERSION_FOR: CHECK appeared in 0.4.0, GC and STATUS in 1.1.0. skel answers code 1 when a verb is asked for
 * below its version, because the runtime and the plugin would disagree about what the verb means.
 */
export const MIN_VERSION_FOR: Readonly<Partial<Record<Verb, CniVersion>>> = {
  CHECK: '0.4.0',
  GC: '1.1.0',
  STATUS: '1.1.0',
};

function parts(v: string): [number, number, number] {
  const m = SEMVER.exec(v);
  if (!m) throw new TypeError(`not a version: ${JSON.stringify(v)}`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}
