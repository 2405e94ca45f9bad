#include "pipe_server.h"

namespace hcn {

Napi::Value JsListenPipe(const Napi::CallbackInfo& info) {
  throw Napi::Error::New(info.Env(), "listenPipe: named pipes exist only on Windows");
}

}  // namespace hcn
