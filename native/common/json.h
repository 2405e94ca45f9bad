// Just enough JSON for the native side: the simulator's request lines and response objects, and the arrays of
// GUID strings that Hcn*Enumerate* return. Strings are decoded to UTF-8; escaped unpaired surrogates become U+FFFD.
#ifndef HCN_CNI_COMMON_JSON_H_
#define HCN_CNI_COMMON_JSON_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hcn::json {

struct Value {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Value> items;
  std::vector<std::pair<std::string, Value>> members;

  // The member named `key`, or nullptr (also when this is not an object).
  const Value* Find(std::string_view key) const;
};

// Parses exactly one JSON value (surrounding whitespace allowed). On failure returns false and says why.
bool Parse(std::string_view text, Value* out, std::string* error);

// Appends `utf8` as a quoted JSON string. The input must be valid UTF-8 (callers convert from UTF-16 first).
void AppendString(std::string* out, std::string_view utf8);

}  // namespace hcn::json

#endif  // HCN_CNI_COMMON_JSON_H_
