// peerCredentials(fd): who is on the other end of an accepted unix socket, for the service's peer check (it refuses
// anyone but its own user before reading a byte). Linux: SO_PEERCRED, which the kernel fills at connect() time.
// Windows has no such fd: the addon's pipe server checks the client's token itself (pipe_server_win.cc).
#include <napi.h>

#ifndef _WIN32
#include <sys/socket.h>
#include <sys/types.h>
#endif

#include <cerrno>
#include <cstring>
#include <string>

#include "js_args.h"
#include "js_os.h"

namespace hcn {

Napi::Value JsPeerCredentials(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto fd = static_cast<int>(IntegerArg(info, 0, INT32_MAX, "peerCredentials(fd: number)"));
#if defined(__linux__)
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    throw Napi::Error::New(env, std::string("peerCredentials: getsockopt(SO_PEERCRED): ") + std::strerror(errno));
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("pid", Napi::Number::New(env, cred.pid));
  out.Set("uid", Napi::Number::New(env, cred.uid));
  out.Set("gid", Napi::Number::New(env, cred.gid));
  return out;
#else
  (void)fd;
  throw Napi::Error::New(env, "peerCredentials: not available on this platform");
#endif
}

}  // namespace hcn
