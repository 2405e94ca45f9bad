// The object family an HCN function of the list (hcn_functions.h) acts on, read from its name:
// HcnQueryEndpointProperties acts on an endpoint. One rule for the two places that call a function by its list
// entry alone — the simulator client's generated exports (native/simclient/sim_exports_v2.cc) and the addon's calls
// by name (native/addon/hcn_calls.cc) — so they agree on which open and close go with a function.
#ifndef HCN_CNI_HCN_FAMILY_H_
#define HCN_CNI_HCN_FAMILY_H_

#include <string_view>

enum class HcnFamily { kNone, kNetwork, kEndpoint, kNamespace };

// Endpoint and Namespace are looked for before Network: no function of those families names a network.
constexpr HcnFamily HcnFamilyOf(std::string_view name) {
  return name.find("Endpoint") != std::string_view::npos    ? HcnFamily::kEndpoint
         : name.find("Namespace") != std::string_view::npos ? HcnFamily::kNamespace
         : name.find("Network") != std::string_view::npos   ? HcnFamily::kNetwork
                                                            : HcnFamily::kNone;
}

#endif  // HCN_CNI_HCN_FAMILY_H_
