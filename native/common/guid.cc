#include "guid.h"

#include <cstring>

namespace hcn {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads `digits` hex digits at text[*pos]; false on anything that is not hex.
bool ReadHex(std::string_view text, size_t* pos, int digits, uint64_t* value) {
  *value = 0;
  for (int i = 0; i < digits; ++i) {
    const int v = HexValue(text[*pos]);
    if (v < 0) return false;
    *value = (*value << 4) | static_cast<uint64_t>(v);
    ++*pos;
  }
  return true;
}

}  // namespace

bool ParseGuid(std::string_view text, GUID* out) {
  if (text.size() == 38) {
    if (text.front() != '{' || text.back() != '}') return false;
    text = text.substr(1, 36);
  }
  if (text.size() != 36) return false;
  size_t pos = 0;
  uint64_t v;
  GUID g{};
  const auto dash = [&] { return text[pos++] == '-'; };
  if (!ReadHex(text, &pos, 8, &v)) return false;
  g.Data1 = static_cast<uint32_t>(v);
  if (!dash() || !ReadHex(text, &pos, 4, &v)) return false;
  g.Data2 = static_cast<uint16_t>(v);
  if (!dash() || !ReadHex(text, &pos, 4, &v)) return false;
  g.Data3 = static_cast<uint16_t>(v);
  if (!dash()) return false;
  for (int i = 0; i < 8; ++i) {
    if (i == 2 && !dash()) return false;
    if (!ReadHex(text, &pos, 2, &v)) return false;
    g.Data4[i] = static_cast<uint8_t>(v);
  }
  *out = g;
  return true;
}

std::string FormatGuid(const GUID& g) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(36);
  const auto hex = [&](uint64_t value, int digits) {
    for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) s.push_back(kDigits[(value >> shift) & 0xF]);
  };
  hex(g.Data1, 8);
  s.push_back('-');
  hex(g.Data2, 4);
  s.push_back('-');
  hex(g.Data3, 4);
  s.push_back('-');
  for (int i = 0; i < 8; ++i) {
    if (i == 2) s.push_back('-');
    hex(g.Data4[i], 2);
  }
  return s;
}

bool IsNullGuid(const GUID& g) {
  static const GUID kNull{};
  return std::memcmp(&g, &kNull, sizeof(GUID)) == 0;
}

}  // namespace hcn
