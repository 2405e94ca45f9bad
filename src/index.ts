/**
 * hcn-cni as a library: run the plugin in process, or use the typed HCN facade directly.
 *
 *   import { runCni, Hcn, HcnError } from 'hcn-cni';
 */
export { runCni, defaultStateDir, type RunCniOptions, type RunCniResult } from './run';
export { Hcn, type HcnOptions, type Filter, type HostAdapter } from './hns/hcn';
export { HcnError, isNotFound, isUnreachable, isAlreadyExists, isAdapterUnavailable, isTimeout } from './hns/hcn-error';
export { HR, describeHresult, hresultHex } from './hns/hresults';
export * from './hns/schema';
export { V1Api, V2Api, type HnsApi, type NetworkInfo, type EndpointInfo } from './hns/api';
export { CniError, CniCode } from './cni/cni-error';
export type { CniResult, NetConf, CniHandlers } from './cni/types';
export { pluginDeps, type DepsOptions, type PluginDeps } from './plugin/deps';
export { createHandlers } from './plugin/handlers';
