// Ends the process at once with an exit code, without the orderly shutdown Node's process.exit() performs.
// Why: a call thread (call_threads.h) may be blocked in an HCN call that HNS never answers, and process.exit()
// would run exit handlers and static destructors under it (when HCN calls ran on libuv's pool, process.exit()
// joined the pool and waited for as long as HNS hung). The CNI executable must answer within hnsTimeoutSeconds
// and go; its output and logs are written synchronously before this is called, so nothing is lost.
#ifndef HCN_CNI_ADDON_EXIT_NOW_H_
#define HCN_CNI_ADDON_EXIT_NOW_H_

namespace hcn {

[[noreturn]] void ExitNow(int code);

}  // namespace hcn

#endif  // HCN_CNI_ADDON_EXIT_NOW_H_
