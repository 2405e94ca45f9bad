// HcnRegisterServiceCallback / HcnUnregisterServiceCallback against hcn-sim. A registration is a connection of its
// own to the simulator (docs/sim-protocol.md, "Service notifications") read by a thread of its own, which calls the
// callback once per notification line, as computenetwork.dll calls it on a thread of its own. HCN's notification
// types are mingw-w64's computenetwork.h HCN_NOTIFICATIONS (MicrosoftDocs/Virtualization-Documentation
// virtualization/api/hcn/Reference/HCN_NOTIFICATIONS.md); which of them hcn-sim sends, and when, is
// src/sim/service-callbacks.ts's.
#include <memory>
#include <string>
#include <thread>

#include "hresults.h"
#include "json.h"
#include "sim_call.h"
#include "sim_connection.h"
#include "sim_export.h"
#include "utf.h"

namespace {

struct Registration {
  HCN_NOTIFICATION_CALLBACK callback = nullptr;
  void* context = nullptr;
  std::unique_ptr<hcnsim::Connection> connection;
  std::string buffered;
  std::thread reader;
  bool orphaned = false;  // unregistered from inside its own callback: the reader frees it when it ends
};

// {"notification": N, "status": HRESULT, "data": text|null}; anything else is skipped.
void Notify(const Registration& r, const std::string& line) {
  hcn::json::Value value;
  std::string error;
  if (!hcn::json::Parse(line, &value, &error)) return;
  const hcn::json::Value* type = value.Find("notification");
  const hcn::json::Value* status = value.Find("status");
  const hcn::json::Value* data = value.Find("data");
  if (type == nullptr || type->type != hcn::json::Value::Type::kNumber) return;
  const bool has_status = status != nullptr && status->type == hcn::json::Value::Type::kNumber;
  const HRESULT hr = has_status ? static_cast<HRESULT>(static_cast<uint32_t>(static_cast<int64_t>(status->number))) : 0;
  std::u16string text;
  const bool has_data = data != nullptr && data->type == hcn::json::Value::Type::kString;
  if (has_data) text = hcn::Utf8ToUtf16(data->string);
  // NotificationData is the caller's only for the call (hcsshim's notificationWatcher copies it at once).
  r.callback(static_cast<DWORD>(type->number), r.context, hr,
             has_data ? reinterpret_cast<PCWSTR>(text.c_str()) : nullptr);
}

void Read(Registration* r) {
  std::string line, why;
  while (hcnsim::NextLine(r->connection.get(), &r->buffered, &line, &why)) {
    Notify(*r, line);
    if (r->orphaned) break;
  }
  if (r->orphaned) delete r;
}

}  // namespace

HCNSIM_V2_API HRESULT WINAPI HcnRegisterServiceCallback(HCN_NOTIFICATION_CALLBACK Callback, void* Context,
                                                        HCN_CALLBACK* CallbackHandle) {
  if (CallbackHandle == nullptr) return hcn::kPointer;
  *CallbackHandle = nullptr;
  if (Callback == nullptr) return hcn::kPointer;
  auto r = std::make_unique<Registration>();
  r->callback = Callback;
  r->context = Context;
  // The function has no error record: only the HRESULT says why a registration failed.
  const hcnsim::Reply reply = hcnsim::Subscribe("HcnRegisterServiceCallback", &r->connection, &r->buffered);
  if (hcn::Failed(reply.hr)) return reply.hr;
  if (!r->connection) return hcn::kUnexpected;
  r->reader = std::thread(Read, r.get());
  *CallbackHandle = r.release();
  return hcn::kOk;
}

// Once it returns, the callback is not called again (it may still be running when the callback itself unregisters).
HCNSIM_V2_API HRESULT WINAPI HcnUnregisterServiceCallback(HCN_CALLBACK CallbackHandle) {
  if (CallbackHandle == nullptr) return hcn::kHandle;
  auto* r = static_cast<Registration*>(CallbackHandle);
  r->connection->Shutdown();
  if (r->reader.get_id() == std::this_thread::get_id()) {
    r->orphaned = true;
    r->reader.detach();
    return hcn::kOk;
  }
  r->reader.join();
  delete r;
  return hcn::kOk;
}
