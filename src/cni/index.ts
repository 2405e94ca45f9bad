/**
 * The CNI protocol layer: dispatch (the entry the CLI calls), configuration parsing and its key table, result
 * rendering, delegated IPAM, and the vocabulary in types/errors. Nothing here knows about HNS.
 */
export { dispatch, MAX_STDIN_BYTES, type DispatchDeps, type DispatchInput, type DispatchOutput } from './dispatch';
export { parseNetConf, DEFAULTS, type ConfContextOptions } from './config';
export { CONFIG_KEYS, TOLERATED_KEYS, type ConfigKey } from './config-keys';
export { ENV_TABLE, VERBS, parseCniArgs, pathSeparator, splitCniPath, type Env, type EnvVarSpec } from './env';
export { createIpamClient, findPlugin, type IpamOptions } from './ipam';
export { renderResult, parseResult, parsePrevResult, parseIpamResult } from './result';
export { LATEST_VERSION, MIN_VERSION_FOR, compareVersions, isSupportedVersion, versionAtLeast } from './version';
export { formatMacColon, formatMacDash, parseMac } from '../net/addr';
export * from './cni-error';
export * from './types';
