// The rest of computenetwork.h: guest network services, their callbacks and port reservations (service
// notifications are sim_exports_notifications.cc's). hcn-sim does not model them (nothing of ours or of hcsshim's
// calls them), so each answers E_NOTIMPL — what an HNS answers for a request it does not implement (hcsshim's
// HCN_E_NOTIMPL, hcn/hcnerrors.go) — with its error record where the function has one, never a missing procedure.
// Out parameters are cleared first.
#include <type_traits>

#include "sim_export.h"
#include "sim_ops.h"

namespace {
template <typename T>
void Clear(T* slot) {
  if (slot != nullptr) *slot = T{};
}
}  // namespace

HCNSIM_V2_API HRESULT WINAPI HcnRegisterGuestNetworkServiceCallback(HCN_GUESTNETWORKSERVICE GuestNetworkService,
                                                                    HCN_NOTIFICATION_CALLBACK Callback, void* Context,
                                                                    HCN_CALLBACK* CallbackHandle) {
  (void)GuestNetworkService;
  (void)Callback;
  (void)Context;
  Clear(CallbackHandle);
  return hcnsim::NotImplemented(nullptr);
}
HCNSIM_V2_API HRESULT WINAPI HcnUnregisterGuestNetworkServiceCallback(HCN_CALLBACK CallbackHandle) {
  (void)CallbackHandle;
  return hcnsim::NotImplemented(nullptr);
}
HCNSIM_V2_API HRESULT WINAPI HcnCreateGuestNetworkService(HCN_REFGUID Id, PCWSTR Settings,
                                                          HCN_GUESTNETWORKSERVICE* GuestNetworkService,
                                                          PWSTR* ErrorRecord) {
  (void)Id;
  (void)Settings;
  Clear(GuestNetworkService);
  return hcnsim::NotImplemented(ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnCloseGuestNetworkService(HCN_GUESTNETWORKSERVICE GuestNetworkService) {
  (void)GuestNetworkService;
  return hcnsim::NotImplemented(nullptr);
}
HCNSIM_V2_API HRESULT WINAPI HcnModifyGuestNetworkService(HCN_GUESTNETWORKSERVICE GuestNetworkService,
                                                          PCWSTR Settings, PWSTR* ErrorRecord) {
  (void)GuestNetworkService;
  (void)Settings;
  return hcnsim::NotImplemented(ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnDeleteGuestNetworkService(HCN_REFGUID Id, PWSTR* ErrorRecord) {
  (void)Id;
  return hcnsim::NotImplemented(ErrorRecord);
}
HCNSIM_V2_API HRESULT WINAPI HcnReserveGuestNetworkServicePort(HCN_GUESTNETWORKSERVICE GuestNetworkService,
                                                               HCN_PORT_PROTOCOL Protocol, HCN_PORT_ACCESS Access,
                                                               USHORT Port, HANDLE* PortReservationHandle) {
  (void)GuestNetworkService;
  (void)Protocol;
  (void)Access;
  (void)Port;
  Clear(PortReservationHandle);
  return hcnsim::NotImplemented(nullptr);
}
HCNSIM_V2_API HRESULT WINAPI HcnReserveGuestNetworkServicePortRange(HCN_GUESTNETWORKSERVICE GuestNetworkService,
                                                                    USHORT PortCount,
                                                                    HCN_PORT_RANGE_RESERVATION* PortRangeReservation,
                                                                    HANDLE* PortReservationHandle) {
  (void)GuestNetworkService;
  (void)PortCount;
  Clear(PortRangeReservation);
  Clear(PortReservationHandle);
  return hcnsim::NotImplemented(nullptr);
}
HCNSIM_V2_API HRESULT WINAPI HcnReleaseGuestNetworkServicePortReservationHandle(HANDLE PortReservationHandle) {
  (void)PortReservationHandle;
  return hcnsim::NotImplemented(nullptr);
}
HCNSIM_V2_API HRESULT WINAPI HcnEnumerateGuestNetworkPortReservations(ULONG* ReturnCount,
                                                                      HCN_PORT_RANGE_ENTRY** PortEntries) {
  Clear(ReturnCount);
  Clear(PortEntries);
  return hcnsim::NotImplemented(nullptr);
}
// Nothing is ever handed out, so there is nothing to free.
HCNSIM_V2_API VOID WINAPI HcnFreeGuestNetworkPortReservations(HCN_PORT_RANGE_ENTRY* PortEntries) { (void)PortEntries; }

#define HCNSIM_MATCHES_ABI(name) static_assert(std::is_same_v<decltype(&name), PFN_##name>, #name " differs from hcn_abi.h")
HCNSIM_MATCHES_ABI(HcnRegisterGuestNetworkServiceCallback);
HCNSIM_MATCHES_ABI(HcnUnregisterGuestNetworkServiceCallback);
HCNSIM_MATCHES_ABI(HcnCreateGuestNetworkService);
HCNSIM_MATCHES_ABI(HcnCloseGuestNetworkService);
HCNSIM_MATCHES_ABI(HcnModifyGuestNetworkService);
HCNSIM_MATCHES_ABI(HcnDeleteGuestNetworkService);
HCNSIM_MATCHES_ABI(HcnReserveGuestNetworkServicePort);
HCNSIM_MATCHES_ABI(HcnReserveGuestNetworkServicePortRange);
HCNSIM_MATCHES_ABI(HcnReleaseGuestNetworkServicePortReservationHandle);
HCNSIM_MATCHES_ABI(HcnEnumerateGuestNetworkPortReservations);
HCNSIM_MATCHES_ABI(HcnFreeGuestNetworkPortReservations);
#undef HCNSIM_MATCHES_ABI
