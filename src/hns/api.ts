/**
 * One way to talk to HNS, whichever API the host offers. The plugin and the audit work with NetworkInfo and
 * EndpointInfo; V2Api does objects through HCN (computenetwork.dll), V1Api through HNSCall (vmcompute.dll).
 * Both hot-attach to a Docker-style container through HCS (HCN has no container attach), asking v1 first whether it
 * is attached, as hcsshim does; v1 and v2 are two views of one object store, so objects created through one are seen
 * by the other. The operations that only one API or HCS offers live here too (HostOps), so the plugin never talks
 * to the facade below.
 *
 * This file is the front: what the rest of src imports. The parts, one file per HNS object and API version in the
 * shape of microsoft/hcsshim's hcn/ (hcnnetwork.go, hcnendpoint.go, hcnnamespace.go) and internal/hns:
 *   api-types.ts   the views, the specs, HnsApi and HostOps
 *   v2/            V2Api, through HCN: network.ts → endpoint.ts → namespace.ts → api.ts (one class, a link a file)
 *   v1/            V1Api, through HNSCall: the same four, and managementIpOf (only v1 shows it)
 *   host-ops.ts    what both do the same way: HCS hot attach, v1-only reads, adapters, HNS's version
 *   converters.ts  HNS's documents, v2 and v1, read into the views
 *   answers.ts     "not found" as undefined or an outcome, ids compared in any case
 */
export type {
  ApiVersion,
  DeleteOutcome,
  EndpointInfo,
  EndpointIp,
  EndpointListing,
  EndpointSpec,
  HnsApi,
  HostOps,
  HotAttachOutcome,
  Listing,
  NetworkInfo,
  NetworkSpec,
  SubnetInfo,
} from './api-types';
export { sameId } from './answers';
export {
  canonicalType,
  endpointFromV1,
  endpointFromV2,
  endpointsOfListing,
  networkFromV1,
  networkFromV2,
} from './converters';
export { V1Api } from './v1/api';
export { managementIpOf } from './v1/network';
export { V2Api } from './v2/api';
