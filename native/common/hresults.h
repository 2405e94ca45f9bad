// HRESULTs the native code produces or tests for itself. mingw-w64's winerror.h has none of the HCN codes, and
// Linux has no winerror.h at all, so both platforms take them from here (names follow src/hns/hresults.ts).
#ifndef HCN_CNI_COMMON_HRESULTS_H_
#define HCN_CNI_COMMON_HRESULTS_H_

#include "hcn_abi.h"

namespace hcn {

constexpr HRESULT Hr(uint32_t value) { return static_cast<HRESULT>(value); }
constexpr uint32_t Unsigned(HRESULT hr) { return static_cast<uint32_t>(hr); }
constexpr bool Failed(HRESULT hr) { return hr < 0; }

constexpr HRESULT kOk = 0;
constexpr HRESULT kPointer = Hr(0x80004003u);            // E_POINTER
constexpr HRESULT kUnexpected = Hr(0x8000FFFFu);         // E_UNEXPECTED
constexpr HRESULT kHandle = Hr(0x80070006u);             // E_HANDLE
constexpr HRESULT kOutOfMemory = Hr(0x8007000Eu);        // E_OUTOFMEMORY
constexpr HRESULT kModNotFound = Hr(0x8007007Eu);        // ERROR_MOD_NOT_FOUND
constexpr HRESULT kProcNotFound = Hr(0x8007007Fu);       // ERROR_PROC_NOT_FOUND
constexpr HRESULT kNotFound = Hr(0x80070490u);           // ERROR_NOT_FOUND ("Element not found.")
constexpr HRESULT kServerUnavailable = Hr(0x800706BAu);  // RPC_S_SERVER_UNAVAILABLE
constexpr HRESULT kCallFailed = Hr(0x800706BEu);         // RPC_S_CALL_FAILED
constexpr HRESULT kNetworkNotFound = Hr(0x803B0001u);    // HCN_E_NETWORK_NOT_FOUND
constexpr HRESULT kEndpointNotFound = Hr(0x803B0002u);   // HCN_E_ENDPOINT_NOT_FOUND

}  // namespace hcn

#endif  // HCN_CNI_COMMON_HRESULTS_H_
