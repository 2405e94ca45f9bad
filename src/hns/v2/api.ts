/**
 * HNS through HCN (computenetwork.dll): every write on a host that has it. One class across the files of v2/, each
 * a link of its chain — network.ts (and what every link reads), endpoint.ts, namespace.ts — ending here, where it is
 * checked against HnsApi.
 */
import type { HnsApi } from '../api-types';
import { V2Namespaces } from './namespace';

export class V2Api extends V2Namespaces implements HnsApi {
  readonly version = 2 as const;
}
