#include "sim_handles.h"

#include <new>

namespace hcnsim {
namespace {

// A live handle carries this tag; Close clears it, so a double close or a use after close is caught as E_HANDLE
// for as long as the allocator has not reused the memory (the same best effort a real handle table gives).
constexpr uint32_t kLive = 0x48434e48;  // "HCNH"

struct Handle {
  uint32_t tag;
  Kind kind;
  std::string guid;
  std::string boot;
};

Handle* Live(void* handle, Kind kind) {
  auto* h = static_cast<Handle*>(handle);
  return h != nullptr && h->tag == kLive && h->kind == kind ? h : nullptr;
}

}  // namespace

void* NewHandle(Kind kind, const std::string& guid, const std::string& boot) {
  return new (std::nothrow) Handle{kLive, kind, guid, boot};
}

std::optional<std::string> HandleBoot(void* handle, Kind kind) {
  Handle* h = Live(handle, kind);
  if (h == nullptr || h->boot.empty()) return std::nullopt;
  return h->boot;
}

const std::string* HandleGuid(void* handle, Kind kind) {
  Handle* h = Live(handle, kind);
  return h != nullptr ? &h->guid : nullptr;
}

bool CloseHandle(void* handle, Kind kind) {
  Handle* h = Live(handle, kind);
  if (h == nullptr) return false;
  h->tag = 0;
  delete h;
  return true;
}

}  // namespace hcnsim
