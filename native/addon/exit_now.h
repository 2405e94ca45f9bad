// Ends the process at once with an exit code, without the orderly shutdown Node's process.exit() performs.
// Why: process.exit() joins libuv's thread pool, and a worker blocked in an HCN call that HNS never answers keeps
// it joined for as long as HNS hangs. The CNI executable must answer within hnsTimeoutSeconds and go; its output
// and logs are written synchronously before this is called, so nothing is lost.
#ifndef HCN_CNI_ADDON_EXIT_NOW_H_
#define HCN_CNI_ADDON_EXIT_NOW_H_

namespace hcn {

[[noreturn]] void ExitNow(int code);

}  // namespace hcn

#endif  // HCN_CNI_ADDON_EXIT_NOW_H_
