// listenPipe(name, allowedSids, onEvent): the service's named-pipe server on Windows (pipe_server_win.cc), because
// Node's net.Server cannot give a pipe a DACL nor check who connected. Elsewhere it throws (pipe_server_posix.cc):
// the Linux service listens on a 0600 unix socket and checks SO_PEERCRED (peer_credentials.cc).
#ifndef HCN_CNI_ADDON_PIPE_SERVER_H_
#define HCN_CNI_ADDON_PIPE_SERVER_H_

#include <napi.h>

namespace hcn {

Napi::Value JsListenPipe(const Napi::CallbackInfo& info);

}  // namespace hcn

#endif  // HCN_CNI_ADDON_PIPE_SERVER_H_
