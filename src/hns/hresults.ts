/**
 * HRESULTs that HNS returns: every HCN_E_* (0x803B0001–0x803B0037, from the HCN reference "HCN Error Code")
 * and the Win32/RPC codes that HNS clients meet in the field, plus the two HCS codes hot attach meets (hcsshim
 * internal/hcs/errors.go). Shared by the facade (to name and classify
 * errors) and by the simulator (to return them), so both speak the same table.
 */

export interface HresultInfo {
  readonly code: string;
  readonly message: string;
}

const table: Array<[number, string, string]> = [
  [0x00000000, 'S_OK', 'The operation completed successfully.'],
  [0x803b0001, 'HCN_E_NETWORK_NOT_FOUND', 'The network was not found.'],
  [0x803b0002, 'HCN_E_ENDPOINT_NOT_FOUND', 'The endpoint was not found.'],
  [0x803b0003, 'HCN_E_LAYER_NOT_FOUND', "The network's underlying layer was not found."],
  [0x803b0004, 'HCN_E_SWITCH_NOT_FOUND', 'The virtual switch was not found.'],
  [0x803b0005, 'HCN_E_SUBNET_NOT_FOUND', 'The network does not have a subnet for this endpoint.'],
  [0x803b0006, 'HCN_E_ADAPTER_NOT_FOUND', 'An adapter was not found.'],
  [0x803b0007, 'HCN_E_PORT_NOT_FOUND', 'The switch-port was not found.'],
  [0x803b0008, 'HCN_E_POLICY_NOT_FOUND', 'An expected policy was not found.'],
  [0x803b0009, 'HCN_E_VFP_PORTSETTING_NOT_FOUND', 'A required VFP port setting was not found.'],
  [0x803b000a, 'HCN_E_INVALID_NETWORK', 'The provided network configuration is invalid or missing parameters.'],
  [0x803b000b, 'HCN_E_INVALID_NETWORK_TYPE', 'Invalid network type.'],
  [0x803b000c, 'HCN_E_INVALID_ENDPOINT', 'The provided endpoint configuration is invalid or missing parameters.'],
  [0x803b000d, 'HCN_E_INVALID_POLICY', 'The provided policy configuration is invalid or missing parameters.'],
  [0x803b000e, 'HCN_E_INVALID_POLICY_TYPE', 'Invalid policy type.'],
  [0x803b000f, 'HCN_E_INVALID_REMOTE_ENDPOINT_OPERATION', 'This requested operation is invalid for a remote endpoint.'],
  [0x803b0010, 'HCN_E_NETWORK_ALREADY_EXISTS', 'A network with this name already exists.'],
  [0x803b0011, 'HCN_E_LAYER_ALREADY_EXISTS', 'A network with this name already exists.'],
  [0x803b0012, 'HCN_E_POLICY_ALREADY_EXISTS', 'Policy information already exists on this object.'],
  [0x803b0013, 'HCN_E_PORT_ALREADY_EXISTS', 'The specified port already exists.'],
  [0x803b0014, 'HCN_E_ENDPOINT_ALREADY_ATTACHED', 'This endpoint is already attached to the switch.'],
  [0x803b0015, 'HCN_E_REQUEST_UNSUPPORTED', 'The specified request is unsupported.'],
  [0x803b0016, 'HCN_E_MAPPING_NOT_SUPPORTED', 'Port mapping is not supported on the given network.'],
  [0x803b0017, 'HCN_E_DEGRADED_OPERATION', 'There was an operation attempted on a degraded object.'],
  [0x803b0018, 'HCN_E_SHARED_SWITCH_MODIFICATION', 'Cannot modify a switch shared by multiple networks.'],
  [0x803b0019, 'HCN_E_GUID_CONVERSION_FAILURE', 'Failed to interpret a parameter as a GUID.'],
  [0x803b001a, 'HCN_E_REGKEY_FAILURE', 'Failed to process registry key.'],
  [0x803b001b, 'HCN_E_INVALID_JSON', 'Invalid JSON document string.'],
  [0x803b001c, 'HCN_E_INVALID_JSON_REFERENCE', 'The reference is invalid in the JSON document.'],
  [0x803b001d, 'HCN_E_ENDPOINT_SHARING_DISABLED', 'Endpoint sharing is disabled.'],
  [0x803b001e, 'HCN_E_INVALID_IP', 'IP address is either invalid or not part of any configured subnet(s).'],
  [0x803b001f, 'HCN_E_SWITCH_EXTENSION_NOT_FOUND', 'The specified switch extension does not exist on this switch.'],
  [0x803b0020, 'HCN_E_MANAGER_STOPPED', 'Operation cannot be performed while service is stopping.'],
  [0x803b0021, 'GCN_E_MODULE_NOT_FOUND', 'Operation cannot be performed while service module not found.'],
  [0x803b0022, 'GCN_E_NO_REQUEST_HANDLERS', 'Request Handlers not present to handle the JSON request.'],
  [0x803b0023, 'GCN_E_REQUEST_UNSUPPORTED', 'The specified request is unsupported.'],
  [0x803b0024, 'GCN_E_RUNTIMEKEYS_FAILED', 'Add runtime keys to container failed.'],
  [0x803b0025, 'GCN_E_NETADAPTER_TIMEOUT', 'Timeout while waiting for network adapter with the given instance id.'],
  [0x803b0026, 'GCN_E_NETADAPTER_NOT_FOUND', 'Network adapter not found for the given instance id.'],
  [0x803b0027, 'GCN_E_NETCOMPARTMENT_NOT_FOUND', 'Network compartment not found for the given id.'],
  [0x803b0028, 'GCN_E_NETINTERFACE_NOT_FOUND', 'Network interface not found for the given id.'],
  [0x803b0029, 'GCN_E_DEFAULTNAMESPACE_EXISTS', 'Default Namespace already exists.'],
  [
    0x803b002a,
    'HCN_E_ICS_DISABLED',
    'Internet Connection Sharing service (SharedAccess) is disabled and cannot be started.',
  ],
  [
    0x803b002b,
    'HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS',
    'This requested operation is invalid as endpoint is already part of a network namespace.',
  ],
  [0x803b002c, 'HCN_E_ENTITY_HAS_REFERENCES', 'The specified entity cannot be removed while it still has references.'],
  [0x803b002d, 'HCN_E_INVALID_INTERNAL_PORT', 'The internal port must exist and cannot be zero.'],
  [0x803b002e, 'HCN_E_NAMESPACE_ATTACH_FAILED', 'The requested operation for attach namespace failed.'],
  [0x803b002f, 'HCN_E_ADDR_INVALID_OR_RESERVED', 'An address provided is invalid or reserved.'],
  [0x803b0030, 'HCN_E_INVALID_PREFIX', 'The prefix provided is invalid.'],
  [0x803b0031, 'HCN_E_OBJECT_USED_AFTER_UNLOAD', 'A call was performed against an object that was torn down.'],
  [0x803b0032, 'HCN_E_INVALID_SUBNET', 'The provided subnet configuration is invalid or missing parameters.'],
  [0x803b0033, 'HCN_E_INVALID_IP_SUBNET', 'The provided IP subnet configuration is invalid or missing parameters.'],
  [0x803b0034, 'HCN_E_ENDPOINT_NOT_ATTACHED', 'The endpoint must be attached to complete the operation.'],
  [0x803b0035, 'HCN_E_ENDPOINT_NOT_LOCAL', 'The endpoint must be local to complete the operation.'],
  [0x803b0036, 'HCN_INTERFACEPARAMETERS_ALREADY_APPLIED', 'Cannot apply more than one InterfaceParameters policy.'],
  [0x803b0037, 'HCN_E_VFP_NOT_ALLOWED', 'A network of this type can not be created because VFP is not available.'],
  // Generic COM / Win32 codes HNS returns.
  [0x80004001, 'E_NOTIMPL', 'Not implemented.'],
  [0x80004005, 'E_FAIL', 'Unspecified error'],
  [0x8000ffff, 'E_UNEXPECTED', 'Catastrophic failure'],
  [0x80070002, 'ERROR_FILE_NOT_FOUND', 'The system cannot find the file specified.'],
  [0x80070005, 'E_ACCESSDENIED', 'Access is denied.'],
  [0x80070006, 'E_HANDLE', 'The handle is invalid.'],
  [0x8007000d, 'ERROR_INVALID_DATA', 'The data is invalid.'],
  [0x8007000e, 'E_OUTOFMEMORY', 'Not enough memory resources are available to complete this operation.'],
  [0x80070057, 'E_INVALIDARG', 'The parameter is incorrect.'],
  [0x80070078, 'ERROR_CALL_NOT_IMPLEMENTED', 'This function is not supported on this system.'],
  [0x8007007e, 'ERROR_MOD_NOT_FOUND', 'The specified module could not be found.'],
  [0x8007007f, 'ERROR_PROC_NOT_FOUND', 'The specified procedure could not be found.'],
  [0x800700b7, 'ERROR_ALREADY_EXISTS', 'Cannot create a file when that file already exists.'],
  [0x80070426, 'ERROR_SERVICE_NOT_ACTIVE', 'The service has not been started.'],
  [0x80070490, 'ERROR_NOT_FOUND', 'Element not found.'],
  [0x800705b4, 'ERROR_TIMEOUT', 'This operation returned because the timeout period expired.'],
  [0x800706ba, 'RPC_S_SERVER_UNAVAILABLE', 'The RPC server is unavailable.'],
  [0x800706be, 'RPC_S_CALL_FAILED', 'The remote procedure call failed.'],
  [0x800706bf, 'RPC_S_CALL_FAILED_DNE', 'The remote procedure call failed and did not execute.'],
  [0x800706d9, 'EPT_S_NOT_REGISTERED', 'There are no more endpoints available from the endpoint mapper.'],
  [0x80010108, 'RPC_E_DISCONNECTED', 'The object invoked has disconnected from its clients.'],
  // microsoft/hcsshim internal/hcs/errors.go: ErrComputeSystemDoesNotExist = 0xc037010e,
  // ErrVmcomputeOperationInvalidState = 0xc0370105.
  [
    0xc037010e,
    'HCS_E_SYSTEM_NOT_FOUND',
    'A virtual machine or container with the specified identifier does not exist.',
  ],
  [
    0xc0370105,
    'HCS_E_INVALID_STATE',
    'The requested virtual machine or container operation is not valid in the current state.',
  ],
];

const byValue = new Map<number, HresultInfo>(table.map(([v, code, message]) => [v, { code, message }]));
const byCode = new Map<string, number>(table.map(([v, code]) => [code, v]));

/** The HRESULT as an unsigned 32-bit number (native code may hand over a signed int32). */
export function toUnsigned(hr: number): number {
  return hr >>> 0;
}

/** Hex form as HNS documentation writes it: 0x803B0006. */
export function hresultHex(hr: number): string {
  return '0x' + toUnsigned(hr).toString(16).toUpperCase().padStart(8, '0');
}

/** Symbolic name and message; unknown FACILITY_WIN32 codes get a WIN32_<n> name rather than nothing. */
export function describeHresult(hr: number): HresultInfo {
  const u = toUnsigned(hr);
  const known = byValue.get(u);
  if (known) return known;
  if ((u & 0xffff0000) >>> 0 === 0x80070000)
    return { code: `WIN32_${u & 0xffff}`, message: `Win32 error ${u & 0xffff}.` };
  return { code: hresultHex(u), message: `HRESULT ${hresultHex(u)}` };
}

/** The value of a symbolic name (throws on an unknown name: a typo here is a bug, not an input). */
export function hresultOf(code: string): number {
  const v = byCode.get(code);
  if (v === undefined) throw new Error(`unknown HRESULT name ${code}`);
  return v;
}

/** All known codes, for tests and the docs table. */
export function allHresults(): ReadonlyArray<{ value: number } & HresultInfo> {
  return table.map(([value, code, message]) => ({ value, code, message }));
}

export const HR = {
  S_OK: 0,
  NETWORK_NOT_FOUND: 0x803b0001,
  ENDPOINT_NOT_FOUND: 0x803b0002,
  ADAPTER_NOT_FOUND: 0x803b0006,
  PORT_NOT_FOUND: 0x803b0007,
  INVALID_NETWORK: 0x803b000a,
  INVALID_NETWORK_TYPE: 0x803b000b,
  INVALID_ENDPOINT: 0x803b000c,
  INVALID_POLICY: 0x803b000d,
  INVALID_POLICY_TYPE: 0x803b000e,
  NETWORK_ALREADY_EXISTS: 0x803b0010,
  PORT_ALREADY_EXISTS: 0x803b0013,
  ENDPOINT_ALREADY_ATTACHED: 0x803b0014,
  REQUEST_UNSUPPORTED: 0x803b0015,
  INVALID_JSON: 0x803b001b,
  INVALID_IP: 0x803b001e,
  MANAGER_STOPPED: 0x803b0020,
  ENDPOINT_NAMESPACE_ALREADY_EXISTS: 0x803b002b,
  ENTITY_HAS_REFERENCES: 0x803b002c,
  ADDR_INVALID_OR_RESERVED: 0x803b002f,
  INVALID_PREFIX: 0x803b0030,
  INVALID_SUBNET: 0x803b0032,
  ENDPOINT_NOT_ATTACHED: 0x803b0034,
  HCS_SYSTEM_NOT_FOUND: 0xc037010e,
  HCS_INVALID_STATE: 0xc0370105,
  ERROR_INVALID_DATA: 0x8007000d,
  E_NOTIMPL: 0x80004001,
  E_FAIL: 0x80004005,
  E_UNEXPECTED: 0x8000ffff,
  E_HANDLE: 0x80070006,
  E_INVALIDARG: 0x80070057,
  ERROR_MOD_NOT_FOUND: 0x8007007e,
  ERROR_PROC_NOT_FOUND: 0x8007007f,
  ERROR_ALREADY_EXISTS: 0x800700b7,
  ERROR_NOT_FOUND: 0x80070490,
  ERROR_TIMEOUT: 0x800705b4,
  RPC_S_SERVER_UNAVAILABLE: 0x800706ba,
  RPC_S_CALL_FAILED: 0x800706be,
  RPC_S_CALL_FAILED_DNE: 0x800706bf,
  EPT_S_NOT_REGISTERED: 0x800706d9,
  RPC_E_DISCONNECTED: 0x80010108,
} as const;
