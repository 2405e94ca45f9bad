#include "exit_now.h"

#include <windows.h>

namespace hcn {

// TerminateProcess rather than ExitProcess: ExitProcess runs DLL detach routines under the loader lock, which can
// wait on the very threads that are stuck.
void ExitNow(int code) {
  TerminateProcess(GetCurrentProcess(), static_cast<UINT>(code));
  for (;;) Sleep(INFINITE);
}

}  // namespace hcn
