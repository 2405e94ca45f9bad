/**
 * CNI error codes (spec 1.1 "Error" section) and the plugin's own codes from 100. A CniError thrown anywhere below
 * the dispatcher becomes `{cniVersion, code, msg, details}` on stdout and a non-zero exit.
 */

export const CniCode = {
  /** Incompatible CNI version. */
  INCOMPATIBLE_VERSION: 1,
  /** Unsupported field in the network configuration; the message names the key and the value. */
  UNSUPPORTED_FIELD: 2,
  /** Container unknown or does not exist. */
  UNKNOWN_CONTAINER: 3,
  /** Invalid or missing environment variables; the message names them. */
  INVALID_ENV: 4,
  /** I/O failure (e.g. reading stdin, or the state directory). */
  IO_FAILURE: 5,
  /** Failed to decode content (stdin JSON, prevResult). */
  DECODE_FAILURE: 6,
  /** Invalid network configuration; the message names the key and the bad value. */
  INVALID_NETWORK_CONFIG: 7,
  /** Try again later: a transient condition (HNS unreachable or timed out, an earlier create still completing). */
  TRY_AGAIN_LATER: 11,
  /** STATUS: the plugin cannot service ADD (HNS, or a required HNS API, is unavailable). */
  PLUGIN_NOT_AVAILABLE: 50,
  /** STATUS: unavailable, and existing containers may have limited connectivity. */
  PLUGIN_NOT_AVAILABLE_LIMITED_CONNECTIVITY: 51,

  // Plugin-specific codes (documented in the README, "Error codes").
  /** An HNS call failed (details carry op, HRESULT and error record). */
  HNS_FAILURE: 100,
  /** The HNS network the configuration names does not exist (and createNetwork is false). */
  NETWORK_NOT_FOUND: 101,
  /** Delegated IPAM failed or returned something unusable. */
  IPAM_FAILURE: 102,
  /** Delegated-NIC mode: no host adapter has the pod's NIC MAC. */
  NIC_NOT_FOUND: 103,
  /** Delegated-NIC mode: the NIC is bound by a network that is not ours, or by another live attachment. */
  NIC_IN_USE: 104,
  /** CHECK: the attachment does not match HNS (missing endpoint, not attached, IP or MAC differs). */
  CHECK_FAILED: 105,
  /** `container:<id>`: the sandbox has no attachment to share. */
  SANDBOX_NOT_FOUND: 106,
  /** The HNS API the configuration requires is not available on this host. */
  API_UNAVAILABLE: 107,
  /** GC finished, but some objects or records could not be removed (details list them). */
  GC_INCOMPLETE: 108,
  /** Anything unexpected (a bug): details carry the original message. */
  INTERNAL: 999,
} as const;

export class CniError extends Error {
  readonly code: number;
  readonly details: string;
  override readonly name = 'CniError';

  constructor(code: number, msg: string, details = '', options?: { cause?: unknown }) {
    super(msg, options);
    this.code = code;
    this.details = details;
  }

  /** The spec's wire form (cniVersion is added by the dispatcher). */
  toJSON(): { code: number; msg: string; details?: string } {
    return this.details
      ? { code: this.code, msg: this.message, details: this.details }
      : { code: this.code, msg: this.message };
  }
}

export function isCniError(e: unknown): e is CniError {
  return e instanceof CniError;
}
