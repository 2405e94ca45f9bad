/**
 * HNS through HNSCall (vmcompute.dll): hosts without HCN. One class across the files of v1/, each a link of its
 * chain — network.ts, endpoint.ts, namespace.ts — ending here, where it is checked against HnsApi.
 */
import type { HnsApi } from '../api-types';
import { V1Namespaces } from './namespace';

export class V1Api extends V1Namespaces implements HnsApi {
  readonly version = 1 as const;
}
