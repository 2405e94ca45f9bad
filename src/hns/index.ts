export { Hcn, query, DEFAULT_TIMEOUT_MS, type Filter, type HcnOptions, type HostAdapter } from './hcn';
export {
  HcnError,
  isHcnError,
  isNotFound,
  isUnreachable,
  isTimeout,
  isAlreadyExists,
  isAdapterUnavailable,
  hasCode,
  type ErrorRecord,
} from './hcn-error';
export { HR, describeHresult, hresultHex, hresultOf, allHresults } from './hresults';
export { loadNative, seaAssetNames, type LoadOptions, type LoadedNative } from './native';
export type { NativeHcn, NativeCapabilities, NativeStats } from './native-types';
export * from './api';
export * as policies from './policies';
export * from './schema';
export { hostOs, type HostOs } from './host-os';
export {
  watchHnsService,
  HCN_NOTIFICATION_SERVICE_DISCONNECT,
  type HnsServiceEvent,
  type HnsServiceWatch,
} from './service-notifications';
