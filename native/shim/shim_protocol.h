// The shim's side of the service wire protocol (docs/service-protocol.md). Little-endian u32 fields, no JSON: the
// shim never parses CNI documents, it only carries bytes, so it stays small and starts like `sh -c true`.
#ifndef HCN_CNI_SHIM_PROTOCOL_H_
#define HCN_CNI_SHIM_PROTOCOL_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace hcnshim {

// Bumped on any incompatible change; a service that speaks another version answers kMagicVersion and the shim
// falls back to the standalone executable.
constexpr uint32_t kProtocolVersion = 1;
constexpr uint32_t kKindCni = 1;
// CNI stdin limit (src/cni/dispatch.ts MAX_STDIN_BYTES); one byte more is read so the plugin can refuse it.
constexpr size_t kStdinLimit = 1024 * 1024;
constexpr char kMagicRequest[4] = {'H', 'C', 'N', 'Q'};
constexpr char kMagicAccept[4] = {'H', 'C', 'N', 'A'};
constexpr char kMagicVersion[4] = {'H', 'C', 'N', 'V'};
constexpr char kMagicResult[4] = {'H', 'C', 'N', 'R'};
// Bounds on what the service may send back, so a confused peer cannot make the shim allocate without limit.
constexpr uint32_t kMaxReply = 16 * 1024 * 1024;

inline void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// HCNQ | version | kind | env bytes | stdin bytes | env ("K=V\0"...) | stdin
inline std::string EncodeRequest(const std::string& env, const std::string& stdin_bytes) {
  std::string out(kMagicRequest, 4);
  PutU32(&out, kProtocolVersion);
  PutU32(&out, kKindCni);
  PutU32(&out, static_cast<uint32_t>(env.size()));
  PutU32(&out, static_cast<uint32_t>(stdin_bytes.size()));
  out += env;
  out += stdin_bytes;
  return out;
}

}  // namespace hcnshim

#endif  // HCN_CNI_SHIM_PROTOCOL_H_
