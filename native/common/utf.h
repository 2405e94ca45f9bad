// UTF-8 <-> UTF-16. The HCN ABI speaks UTF-16 and the simulator wire speaks UTF-8. Ill-formed input (unpaired
// surrogates, invalid UTF-8) becomes U+FFFD instead of failing: a name HNS cannot echo back exactly is still
// better than a call that cannot be made at all.
#ifndef HCN_CNI_COMMON_UTF_H_
#define HCN_CNI_COMMON_UTF_H_

#include <string>
#include <string_view>

#include "hcn_abi.h"

namespace hcn {

static_assert(sizeof(hcn_wchar) == sizeof(char16_t), "the ABI's WCHAR must be UTF-16");

std::string Utf16ToUtf8(std::u16string_view text);
std::u16string Utf8ToUtf16(std::string_view text);
void AppendUtf8(std::string* out, char32_t code_point);

// WCHAR is wchar_t on Windows and char16_t elsewhere; both are UTF-16 code units, so views convert in place.
inline std::u16string_view View(const hcn_wchar* text) {
  return text == nullptr ? std::u16string_view() : std::u16string_view(reinterpret_cast<const char16_t*>(text));
}
inline const hcn_wchar* Wide(const std::u16string& text) { return reinterpret_cast<const hcn_wchar*>(text.c_str()); }
inline hcn_wchar* Wide(char16_t* text) { return reinterpret_cast<hcn_wchar*>(text); }

}  // namespace hcn

#endif  // HCN_CNI_COMMON_UTF_H_
