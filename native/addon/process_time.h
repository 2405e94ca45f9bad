// A token for "process pid as started at time T": two equal tokens are the same process, so a recycled pid is
// not mistaken for the process that wrote an intent record.
#ifndef HCN_CNI_ADDON_PROCESS_TIME_H_
#define HCN_CNI_ADDON_PROCESS_TIME_H_

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace hcn {

// nullopt when no live process has this pid (exited, zombie, never existed). Throws std::runtime_error when the
// answer is unknowable (e.g. access denied): "dead" would be a dangerous guess.
std::optional<std::string> ProcessStartTime(int64_t pid);

}  // namespace hcn

#endif  // HCN_CNI_ADDON_PROCESS_TIME_H_
