// GUIDs as HCN writes them: 36 characters, lowercase on output; braces and either case accepted on input.
#ifndef HCN_CNI_COMMON_GUID_H_
#define HCN_CNI_COMMON_GUID_H_

#include <string>
#include <string_view>

#include "hcn_abi.h"

namespace hcn {

bool ParseGuid(std::string_view text, GUID* out);
std::string FormatGuid(const GUID& guid);
bool IsNullGuid(const GUID& guid);

}  // namespace hcn

#endif  // HCN_CNI_COMMON_GUID_H_
