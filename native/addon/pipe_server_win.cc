// The service's named-pipe server (src/service/transport/listeners.ts). Node's net.Server creates its pipes with the default
// security descriptor, which lets Everyone and Anonymous open them for reading, and never says who connected.
// This server:
//  - creates every instance with a protected DACL granting GENERIC_ALL to SYSTEM and BUILTIN\Administrators only
//    (kPipeSddl; ConvertStringSecurityDescriptorToSecurityDescriptorW), so nobody else can open it, nor create an
//    instance of it: on Windows a new instance of an existing pipe needs FILE_CREATE_PIPE_INSTANCE under that DACL;
//  - refuses to start if the name exists (WaitNamedPipeW) and creates the first instance with
//    FILE_FLAG_FIRST_PIPE_INSTANCE, so neither a second service nor a squatter that created the name first (to
//    receive the clients' requests) can own it;
//  - sets PIPE_REJECT_REMOTE_CLIENTS: only local processes may connect;
//  - checks each client's token as soon as it has connected and before a byte is read: ImpersonateNamedPipeClient,
//    OpenThreadToken, CheckTokenMembership against the allowed SIDs (the service passes SYSTEM and Administrators),
//    RevertToSelf. A client holding none of them is disconnected (DisconnectNamedPipe) with nothing read from it,
//    and the instance waits for the next client.
//  - hands an accepted pipe to Node as a C runtime fd made by node's own libuv (uv_open_osfhandle, exported by the
//    host executable); the service wraps it in a net.Socket, so framing and replies are the same as on Linux.
// A hand-over (src/service/hand-over/hand-over.ts; `join`): the service serving the pipe has agreed, over the pipe, to hand it
// over. The new one then checks that the pipe's server is that service (it connects as a client and asks
// GetNamedPipeServerProcessId), and creates its instances of the same pipe, with the same DACL and nMaxInstances, and
// without FILE_FLAG_FIRST_PIPE_INSTANCE: a pipe has as many servers' instances as its DACL lets create
// (FILE_CREATE_PIPE_INSTANCE), and a client connects to any instance that waits. The old service then closes its
// instances one by one (close(true), CloseInstances), handing Node a client that had connected to one, so at every
// moment a client finds an instance. Only a client that reaches an instance in the instant between its check and its
// close is closed unread; the shim offers its request again (native/shim/shim_main.cc). A pipe exists while any
// instance of it is open.
// Microsoft docs:
//   https://learn.microsoft.com/en-us/windows/win32/api/namedpipeapi/nf-namedpipeapi-createnamedpipew
//     (FILE_FLAG_FIRST_PIPE_INSTANCE; nMaxInstances: "the same number must be specified for other instances of the
//     pipe"; a further instance of an existing pipe needs FILE_CREATE_PIPE_INSTANCE)
//   https://learn.microsoft.com/en-us/windows/win32/ipc/named-pipe-instances
//   https://learn.microsoft.com/en-us/windows/win32/api/winbase/nf-winbase-getnamedpipeserverprocessid
//   https://learn.microsoft.com/en-us/windows/win32/api/namedpipeapi/nf-namedpipeapi-waitnamedpipew
//   https://learn.microsoft.com/en-us/windows/win32/api/namedpipeapi/nf-namedpipeapi-impersonatenamedpipeclient
//   https://learn.microsoft.com/en-us/windows/win32/api/securitybaseapi/nf-securitybaseapi-checktokenmembership
//   https://learn.microsoft.com/en-us/windows/win32/ipc/named-pipe-security-and-access-rights (the default DACL)
// libuv: https://docs.libuv.org/en/v1.x/fs.html#c.uv_open_osfhandle
#include <windows.h>

#include <sddl.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pipe_server.h"
#include "utf.h"

namespace hcn {
namespace {

// D: the DACL; P: protected (nothing inherited); GA to SY (LocalSystem) and BA (BUILTIN\Administrators) only.
constexpr wchar_t kPipeSddl[] = L"D:P(A;;GA;;;SY)(A;;GA;;;BA)";
// Instances waiting for a client at any time, so a burst of shims rarely sees ERROR_PIPE_BUSY (libuv keeps 4 too).
constexpr int kPending = 4;
constexpr DWORD kBufferSize = 65536;

using UvOpenOsfhandle = int (*)(HANDLE);

std::string Win32Text(const std::string& what, DWORD error) {
  return what + ": Win32 error " + std::to_string(error);
}

std::string SidText(PSID sid) {
  wchar_t* text = nullptr;
  if (!ConvertSidToStringSidW(sid, &text)) return "";
  std::string out = Utf16ToUtf8(reinterpret_cast<const char16_t*>(text));
  LocalFree(text);
  return out;
}

struct Event {
  enum Kind { kConnection, kRefused, kError } kind = kError;
  HANDLE pipe = INVALID_HANDLE_VALUE;
  long long pid = -1;
  std::string user;
  std::string message;
  UvOpenOsfhandle open_fd = nullptr;
  // The server's "closed" flag: a connection delivered after close() is closed, not handed to JS.
  std::shared_ptr<std::atomic<bool>> closed;

  static Event* New(Kind kind, HANDLE pipe, long long pid, std::string user, std::string message) {
    auto* e = new Event();
    e->kind = kind;
    e->pipe = pipe;
    e->pid = pid;
    e->user = std::move(user);
    e->message = std::move(message);
    return e;
  }
};

// What the token check found: allowed, or why not (and who it was, for the service's log).
struct Verdict {
  bool allowed = false;
  std::string user;
  std::string reason;
};

Verdict CheckClient(HANDLE pipe, const std::vector<PSID>& allowed) {
  Verdict v;
  if (!ImpersonateNamedPipeClient(pipe)) {
    v.reason = Win32Text("ImpersonateNamedPipeClient", GetLastError());
    return v;
  }
  HANDLE token = nullptr;
  // OpenAsSelf: the service's own identity opens the token; a client that connected at identification level (the
  // shim does: SECURITY_IDENTIFICATION) gives a token the service may query but never act as.
  const BOOL opened = OpenThreadToken(GetCurrentThread(), TOKEN_QUERY, TRUE, &token);
  const DWORD open_error = GetLastError();
  // Never go on as the client: if the thread cannot stop impersonating, the process must not live on.
  if (!RevertToSelf()) std::abort();
  if (!opened) {
    v.reason = Win32Text("OpenThreadToken", open_error);
    return v;
  }
  union {
    TOKEN_USER user;
    BYTE bytes[SECURITY_MAX_SID_SIZE + sizeof(TOKEN_USER)];
  } info;
  DWORD len = 0;
  if (GetTokenInformation(token, TokenUser, &info, sizeof info, &len)) v.user = SidText(info.user.User.Sid);
  for (PSID sid : allowed) {
    BOOL member = FALSE;
    if (!CheckTokenMembership(token, sid, &member)) {
      v.reason = Win32Text("CheckTokenMembership", GetLastError());
      CloseHandle(token);
      return v;
    }
    if (member) {
      v.allowed = true;
      break;
    }
  }
  CloseHandle(token);
  if (!v.allowed) v.reason = "the client's token holds none of the allowed SIDs (enabled)";
  return v;
}

// Hand-over: the pid of the process serving the pipe `name` (as a client would reach it), or an error.
bool PipeServerPid(const std::u16string& name, ULONG* pid, std::string* error) {
  const auto* wname = reinterpret_cast<const wchar_t*>(name.c_str());
  for (int attempt = 0; attempt < 50; attempt++) {
    // Identification level: the server may learn who we are, never act as us.
    HANDLE h = CreateFileW(wname, GENERIC_READ | GENERIC_WRITE, 0, nullptr, OPEN_EXISTING,
                           SECURITY_SQOS_PRESENT | SECURITY_IDENTIFICATION, nullptr);
    if (h != INVALID_HANDLE_VALUE) {
      const BOOL ok = GetNamedPipeServerProcessId(h, pid);
      const DWORD e = GetLastError();
      CloseHandle(h);  // the old service sees a client that sent nothing and went away
      if (!ok) *error = Win32Text("GetNamedPipeServerProcessId", e);
      return ok == TRUE;
    }
    const DWORD e = GetLastError();
    if (e != ERROR_PIPE_BUSY) {
      *error = Win32Text("opening " + Utf16ToUtf8(name) + " to see its server", e);
      return false;
    }
    WaitNamedPipeW(wname, 100);  // every instance busy: wait for one
  }
  *error = "every instance of " + Utf16ToUtf8(name) + " stayed busy: its server could not be checked";
  return false;
}

class PipeServer {
 public:
  // join_pid: 0, or the pid of the service that agreed to hand the existing pipe over (hand-over).
  PipeServer(std::u16string name, std::vector<PSID> allowed, UvOpenOsfhandle open_fd, ULONG join_pid)
      : name_(std::move(name)), allowed_(std::move(allowed)), open_fd_(open_fd), join_pid_(join_pid) {}

  ~PipeServer() {
    Stop();
    for (PSID sid : allowed_) LocalFree(sid);
    if (sd_ != nullptr) LocalFree(sd_);
  }

  // On the JS thread; throws (as a message) if the pipe cannot be created. Returns the DACL read back as SDDL.
  std::string Start(Napi::Env env, Napi::Function on_event) {
    if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(kPipeSddl, SDDL_REVISION_1, &sd_, nullptr)) {
      throw Napi::Error::New(env, Win32Text("ConvertStringSecurityDescriptorToSecurityDescriptorW", GetLastError()));
    }
    stop_ = CreateEventW(nullptr, TRUE, FALSE, nullptr);
    if (stop_ == nullptr) throw Napi::Error::New(env, Win32Text("CreateEventW", GetLastError()));
    if (join_pid_ != 0) {
      // Only the service that agreed: a pipe served by anyone else (it went away and another program took the name)
      // is not joined.
      ULONG server = 0;
      std::string error;
      if (!PipeServerPid(name_, &server, &error)) throw Napi::Error::New(env, "hand-over: " + error);
      if (server != join_pid_)
        throw Napi::Error::New(env, "hand-over: the pipe " + Utf16ToUtf8(name_) + " is served by pid " +
                                        std::to_string(server) + ", not by the service that agreed (pid " +
                                        std::to_string(join_pid_) + ")");
    }
    for (int i = 0; i < kPending; i++) {
      Instance& in = instances_[i];
      in.ov.hEvent = CreateEventW(nullptr, TRUE, FALSE, nullptr);
      if (in.ov.hEvent == nullptr) throw Napi::Error::New(env, Win32Text("CreateEventW", GetLastError()));
      std::string error;
      in.pipe = Create(i == 0, &error);
      if (in.pipe == INVALID_HANDLE_VALUE) throw Napi::Error::New(env, error);
      if (!Arm(&in, &error)) throw Napi::Error::New(env, error);
    }
    const std::string dacl = ReadDacl(instances_[0].pipe);
    tsfn_ = Napi::ThreadSafeFunction::New(env, on_event, "hcn:pipe-server", 0, 1);
    running_ = true;
    thread_ = std::thread([this] { Loop(); });
    return dacl;
  }

  // Stops accepting and closes the waiting instances; connections already handed to Node are Node's. After a
  // hand-over (`deliver_connected`), an instance a client has connected to is checked and handed to Node as any
  // other, not dropped: that client connected while this service still served, it is this one's to answer.
  void Stop(bool deliver_connected = false) {
    // After a hand-over, connections already posted to Node are delivered too (the flag stays down).
    if (!deliver_connected) closed_->store(true);
    if (!running_.exchange(false)) {
      closed_->store(true);
      CloseInstances(false);
      return;
    }
    SetEvent(stop_);
    thread_.join();
    CloseInstances(deliver_connected);
    tsfn_.Release();
  }

 private:
  struct Instance {
    HANDLE pipe = INVALID_HANDLE_VALUE;
    OVERLAPPED ov{};
    bool connected = false;  // a client is on it and the overlapped connect is not pending
  };

  HANDLE Create(bool first, std::string* error) {
    // Joining (hand-over): the pipe exists, its server agreed and was checked (Start); no first instance.
    first = first && join_pid_ == 0;
    const std::string taken = "the pipe " + Utf16ToUtf8(name_) +
                              " already exists: another hcn-cni service (or another program) is listening on it";
    // An existing pipe of this name (any server: WaitNamedPipeW returns at once when there is none, TRUE when an
    // instance waits, ERROR_SEM_TIMEOUT when all are busy). FILE_FLAG_FIRST_PIPE_INSTANCE below is what closes the
    // race on Windows; this check also holds where that flag is ignored (wine 8 lets a second server create it).
    if (first && (WaitNamedPipeW(reinterpret_cast<const wchar_t*>(name_.c_str()), 1) ||
                  GetLastError() == ERROR_SEM_TIMEOUT)) {
      *error = taken;
      return INVALID_HANDLE_VALUE;
    }
    SECURITY_ATTRIBUTES sa{sizeof sa, sd_, FALSE};
    const DWORD open_mode = PIPE_ACCESS_DUPLEX | FILE_FLAG_OVERLAPPED | (first ? FILE_FLAG_FIRST_PIPE_INSTANCE : 0);
    HANDLE pipe = CreateNamedPipeW(reinterpret_cast<const wchar_t*>(name_.c_str()), open_mode,
                                   PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS,
                                   PIPE_UNLIMITED_INSTANCES, kBufferSize, kBufferSize, 0, &sa);
    if (pipe == INVALID_HANDLE_VALUE) {
      const DWORD e = GetLastError();
      // FILE_FLAG_FIRST_PIPE_INSTANCE on a name that exists fails with ERROR_ACCESS_DENIED.
      *error = first && e == ERROR_ACCESS_DENIED ? taken : Win32Text("CreateNamedPipeW " + Utf16ToUtf8(name_), e);
    }
    return pipe;
  }

  // Starts waiting for a client on `in` (overlapped ConnectNamedPipe); its event fires when one is there.
  static bool Arm(Instance* in, std::string* error) {
    HANDLE event = in->ov.hEvent;
    in->ov = OVERLAPPED{};
    in->ov.hEvent = event;
    ResetEvent(event);
    in->connected = false;
    if (ConnectNamedPipe(in->pipe, &in->ov)) {
      in->connected = true;
      SetEvent(event);
      return true;
    }
    const DWORD e = GetLastError();
    if (e == ERROR_IO_PENDING) return true;
    if (e == ERROR_PIPE_CONNECTED) {  // a client came between CreateNamedPipeW and ConnectNamedPipe
      in->connected = true;
      SetEvent(event);
      return true;
    }
    *error = Win32Text("ConnectNamedPipe", e);
    return false;
  }

  static std::string ReadDacl(HANDLE pipe) {
    DWORD needed = 0;
    GetKernelObjectSecurity(pipe, DACL_SECURITY_INFORMATION, nullptr, 0, &needed);
    if (needed == 0) return "";
    std::vector<BYTE> buf(needed);
    if (!GetKernelObjectSecurity(pipe, DACL_SECURITY_INFORMATION, buf.data(), needed, &needed)) return "";
    wchar_t* text = nullptr;
    if (!ConvertSecurityDescriptorToStringSecurityDescriptorW(buf.data(), SDDL_REVISION_1, DACL_SECURITY_INFORMATION,
                                                              &text, nullptr)) {
      return "";
    }
    std::string out = Utf16ToUtf8(reinterpret_cast<const char16_t*>(text));
    LocalFree(text);
    return out;
  }

  void Post(Event* event) {
    event->open_fd = open_fd_;
    event->closed = closed_;
    if (tsfn_.NonBlockingCall(event, Deliver) != napi_ok) {
      if (event->pipe != INVALID_HANDLE_VALUE) CloseHandle(event->pipe);
      delete event;
    }
  }

  void PostError(const std::string& message) { Post(Event::New(Event::kError, INVALID_HANDLE_VALUE, -1, "", message)); }

  // On the JS thread.
  static void Deliver(Napi::Env env, Napi::Function on_event, Event* event);

  void Loop() {
    HANDLE waits[kPending + 1];
    waits[0] = stop_;
    for (;;) {
      int live = 0;
      int slot[kPending];
      for (int i = 0; i < kPending; i++) {
        if (instances_[i].pipe == INVALID_HANDLE_VALUE) continue;
        slot[live] = i;
        waits[1 + live++] = instances_[i].ov.hEvent;
      }
      const DWORD w = WaitForMultipleObjects(1 + live, waits, FALSE, INFINITE);
      if (w == WAIT_OBJECT_0) return;
      if (w < WAIT_OBJECT_0 + 1 || w > WAIT_OBJECT_0 + static_cast<DWORD>(live)) {
        PostError(Win32Text("WaitForMultipleObjects", GetLastError()));
        return;
      }
      Serve(&instances_[slot[w - WAIT_OBJECT_0 - 1]]);
    }
  }

  // A client is on `in` (or its connect failed): check it, hand it over or refuse it, and wait again.
  void Serve(Instance* in) {
    std::string error;
    if (!in->connected) {
      DWORD ignored = 0;
      if (!GetOverlappedResult(in->pipe, &in->ov, &ignored, FALSE)) {
        // The client left before we looked (ERROR_NO_DATA, ERROR_BROKEN_PIPE): reuse the instance.
        DisconnectNamedPipe(in->pipe);
        if (!Arm(in, &error)) Drop(in, error);
        return;
      }
    }
    ULONG pid = 0;
    const long long client_pid = GetNamedPipeClientProcessId(in->pipe, &pid) ? static_cast<long long>(pid) : -1;
    const Verdict verdict = CheckClient(in->pipe, allowed_);
    if (!verdict.allowed) {
      // Refused before anything was read: the client's end sees the pipe broken, with no reply.
      DisconnectNamedPipe(in->pipe);
      Post(Event::New(Event::kRefused, INVALID_HANDLE_VALUE, client_pid, verdict.user, verdict.reason));
      if (!Arm(in, &error)) Drop(in, error);
      return;
    }
    Post(Event::New(Event::kConnection, in->pipe, client_pid, verdict.user, ""));
    in->pipe = Create(false, &error);
    if (in->pipe == INVALID_HANDLE_VALUE || !Arm(in, &error)) Drop(in, error);
  }

  // An instance that cannot wait any more is closed; the server runs on with the others (and says so).
  void Drop(Instance* in, const std::string& error) {
    if (in->pipe != INVALID_HANDLE_VALUE) CloseHandle(in->pipe);
    in->pipe = INVALID_HANDLE_VALUE;
    PostError("pipe server: an instance stopped waiting for clients: " + error);
  }

  // One instance after another: its waiting connect is ended first, and only then is it known whether a client is
  // on it; such a client is handed to Node (`deliver_connected`) or disconnected unread. Deciding for each instance
  // right after its connect ended, rather than checking all of them before closing any, leaves a client only the
  // instant between that decision and the close to reach an instance that will not answer it (the shim offers its
  // request again: native/shim/shim_main.cc).
  void CloseInstances(bool deliver_connected) {
    for (Instance& in : instances_) {
      if (in.pipe != INVALID_HANDLE_VALUE) {
        if (!in.connected && in.ov.hEvent != nullptr) {
          // The pending connect must be over before its OVERLAPPED goes away; ERROR_NOT_FOUND: it already is.
          DWORD ignored = 0;
          const bool pending = CancelIoEx(in.pipe, &in.ov) || GetLastError() != ERROR_NOT_FOUND;
          in.connected = GetOverlappedResult(in.pipe, &in.ov, &ignored, pending ? TRUE : FALSE) == TRUE;
        }
        const Verdict verdict = deliver_connected && in.connected ? CheckClient(in.pipe, allowed_) : Verdict{};
        if (verdict.allowed) {
          Post(Event::New(Event::kConnection, in.pipe, -1, verdict.user, ""));
          in.pipe = INVALID_HANDLE_VALUE;
        } else {  // none, a refused one (closed unread, as Serve refuses one), or a close that is no hand-over
          DisconnectNamedPipe(in.pipe);
          CloseHandle(in.pipe);
          in.pipe = INVALID_HANDLE_VALUE;
        }
      }
      if (in.ov.hEvent != nullptr) CloseHandle(in.ov.hEvent);
      in.ov.hEvent = nullptr;
    }
    if (stop_ != nullptr) CloseHandle(stop_);
    stop_ = nullptr;
  }

  std::u16string name_;
  std::vector<PSID> allowed_;
  UvOpenOsfhandle open_fd_;
  ULONG join_pid_;
  PSECURITY_DESCRIPTOR sd_ = nullptr;
  HANDLE stop_ = nullptr;
  Instance instances_[kPending];
  Napi::ThreadSafeFunction tsfn_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::shared_ptr<std::atomic<bool>> closed_ = std::make_shared<std::atomic<bool>>(false);
};

void PipeServer::Deliver(Napi::Env env, Napi::Function on_event, Event* event) {
  std::unique_ptr<Event> owned(event);
  const bool closed = event->closed == nullptr || event->closed->load();
  if (env == nullptr || on_event.IsEmpty() || (event->kind == Event::kConnection && closed)) {
    // Nobody will take it (the server was closed meanwhile, or Node is going away): the client sees it close.
    if (event->pipe != INVALID_HANDLE_VALUE) CloseHandle(event->pipe);
    return;
  }
  Napi::Object out = Napi::Object::New(env);
  if (event->kind == Event::kConnection) {
    const int fd = event->open_fd(event->pipe);
    if (fd < 0) {
      CloseHandle(event->pipe);
      out.Set("type", "error");
      out.Set("message", "uv_open_osfhandle failed for an accepted pipe");
    } else {
      out.Set("type", "connection");
      out.Set("fd", Napi::Number::New(env, fd));
    }
  } else if (event->kind == Event::kRefused) {
    out.Set("type", "refused");
    out.Set("reason", event->message);
  } else {
    out.Set("type", "error");
    out.Set("message", event->message);
  }
  if (event->kind != Event::kError) {
    out.Set("pid", event->pid >= 0 ? Napi::Number::New(env, static_cast<double>(event->pid)) : env.Null());
    out.Set("user", event->user.empty() ? env.Null() : Napi::String::New(env, event->user));
  }
  on_event.Call({out});
}

}  // namespace

Napi::Value JsListenPipe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage =
      "listenPipe(name: string, allowedSids: string[], onEvent: (event) => void, options?: { joinPid?: number })";
  if (!info[0].IsString() || !info[1].IsArray() || !info[2].IsFunction()) throw Napi::TypeError::New(env, usage);
  ULONG join_pid = 0;
  if (info.Length() > 3 && info[3].IsObject()) {
    Napi::Value v = info[3].As<Napi::Object>().Get("joinPid");
    if (v.IsNumber()) {
      const double d = v.As<Napi::Number>().DoubleValue();
      if (!(d >= 1 && d <= 4294967295.0)) throw Napi::TypeError::New(env, "listenPipe: joinPid is not a pid");
      join_pid = static_cast<ULONG>(d);
    } else if (!v.IsUndefined()) {
      throw Napi::TypeError::New(env, usage);
    }
  }
  std::u16string name = info[0].As<Napi::String>().Utf16Value();
  Napi::Array sids = info[1].As<Napi::Array>();
  if (sids.Length() == 0) throw Napi::TypeError::New(env, "listenPipe: allowedSids is empty (nobody could connect)");
  std::vector<PSID> allowed;
  auto free_sids = [&allowed] {
    for (PSID sid : allowed) LocalFree(sid);
  };
  for (uint32_t i = 0; i < sids.Length(); i++) {
    Napi::Value v = sids.Get(i);
    PSID sid = nullptr;
    if (!v.IsString() || !ConvertStringSidToSidW(
                             reinterpret_cast<const wchar_t*>(v.As<Napi::String>().Utf16Value().c_str()), &sid)) {
      free_sids();
      throw Napi::TypeError::New(env, "listenPipe: allowedSids[" + std::to_string(i) + "] is not a SID string");
    }
    allowed.push_back(sid);
  }
  // libuv's public API, exported by node.exe (and by a single-executable built from it): it gives a C runtime fd of
  // node's own CRT, which net.Socket({ fd }) opens as a pipe; this DLL's CRT (mingw's) could not make one for it.
  auto open_fd = reinterpret_cast<UvOpenOsfhandle>(
      reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(nullptr), "uv_open_osfhandle")));
  if (open_fd == nullptr) {
    free_sids();
    throw Napi::Error::New(env, "listenPipe: the host executable does not export uv_open_osfhandle");
  }
  auto server = std::make_shared<PipeServer>(std::move(name), std::move(allowed), open_fd, join_pid);
  const std::string dacl = server->Start(env, info[2].As<Napi::Function>());
  Napi::Object handle = Napi::Object::New(env);
  handle.Set("dacl", dacl.empty() ? env.Null() : Napi::String::New(env, dacl));
  // close(handedOver?): after a hand-over, the instances a client already connected to are handed to Node first.
  handle.Set("close", Napi::Function::New(
                          env,
                          [server](const Napi::CallbackInfo& ci) {
                            server->Stop(ci.Length() > 0 && ci[0].ToBoolean().Value());
                          },
                          "close"));
  return handle;
}

}  // namespace hcn
