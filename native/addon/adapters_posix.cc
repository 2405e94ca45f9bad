#include "adapters.h"

namespace hcn {

// Linux adapters are not Windows adapters: HNS would never bind to them, so there is nothing truthful to list.
bool OsAdaptersAvailable() { return false; }

HRESULT OsListAdapters(std::string* json) {
  *json = "[]";
  return 0;
}

}  // namespace hcn
