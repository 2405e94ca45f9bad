#include "sim_call.h"

#include <memory>
#include <string_view>

#include "hresults.h"
#include "json.h"
#include "sim_address.h"
#include "sim_connection.h"
#include "sim_platform.h"
#include "sim_pool.h"
#include "utf.h"

namespace hcnsim {
namespace {

constexpr size_t kMaxLine = 64u << 20;  // the protocol's limit

// "keep": the connection may serve this process's next call (sim_pool.h).
std::string RequestLine(const char* op, std::initializer_list<Field> fields, bool keep = true) {
  std::string line = std::string("{\"v\":1,\"keep\":") + (keep ? "true" : "false") + ",\"pid\":" + std::to_string(UnixPid()) + ",\"winpid\":" + std::to_string(WindowsPid()) +
                     ",\"op\":";
  hcn::json::AppendString(&line, op);
  for (const Field& field : fields) {
    line.push_back(',');
    hcn::json::AppendString(&line, field.name);
    line.push_back(':');
    if (field.value) {
      hcn::json::AppendString(&line, *field.value);
    } else {
      line.append("null");
    }
  }
  line.append("}\n");
  return line;
}

// Reads up to the first newline. False when the stream ends or fails first: the call may or may not have been
// carried out, which is exactly RPC_S_CALL_FAILED's meaning.
bool ReadLine(Connection* connection, std::string* line, std::string* why) {
  char buffer[16384];
  for (;;) {
    const ptrdiff_t n = connection->Receive(buffer, sizeof(buffer), why);
    if (n < 0) return false;
    if (n == 0) {
      *why = line->empty() ? "the simulator closed the connection without answering"
                           : "the simulator closed the connection in the middle of its answer";
      return false;
    }
    const std::string_view chunk(buffer, static_cast<size_t>(n));
    const size_t newline = chunk.find('\n');
    line->append(chunk.substr(0, newline));
    if (newline != std::string_view::npos) return true;
    if (line->size() > kMaxLine) {
      *why = "the simulator's answer exceeds 64 MiB";
      return false;
    }
  }
}

bool OptionalString(const hcn::json::Value& object, const char* key, std::optional<std::string>* out) {
  const hcn::json::Value* value = object.Find(key);
  if (value == nullptr || value->type == hcn::json::Value::Type::kNull) return true;
  if (value->type != hcn::json::Value::Type::kString) return false;
  *out = value->string;
  return true;
}

// `*kept`: the simulator keeps the connection open for another call (an older one answers and closes).
Reply Decode(const std::string& line, bool* kept) {
  hcn::json::Value response;
  std::string error;
  if (!hcn::json::Parse(line, &response, &error)) {
    return LocalFailure(hcn::kCallFailed, "malformed answer from the simulator (" + error + ")");
  }
  const hcn::json::Value* hr = response.Find("hr");
  Reply reply;
  // hr is unsigned on the wire; a signed value is accepted too, since both name the same 32 bits.
  if (hr == nullptr || hr->type != hcn::json::Value::Type::kNumber || hr->number < -2147483648.0 ||
      hr->number > 4294967295.0 || hr->number != static_cast<double>(static_cast<int64_t>(hr->number)) ||
      !OptionalString(response, "result", &reply.result) ||
      !OptionalString(response, "errorRecord", &reply.error_record)) {
    return LocalFailure(hcn::kCallFailed, "malformed answer from the simulator: " + line.substr(0, 200));
  }
  reply.hr = static_cast<HRESULT>(static_cast<uint32_t>(static_cast<int64_t>(hr->number)));
  const hcn::json::Value* boot = response.Find("boot");
  if (boot != nullptr && boot->type == hcn::json::Value::Type::kNumber) {
    reply.boot = std::to_string(static_cast<int64_t>(boot->number));
  }
  const hcn::json::Value* keep = response.Find("keep");
  *kept = keep != nullptr && keep->type == hcn::json::Value::Type::kBool && keep->boolean;
  return reply;
}

}  // namespace

Reply LocalFailure(HRESULT hr, const std::string& why) {
  Reply reply;
  reply.hr = hr;
  std::string record = "{\"Success\":false,\"Error\":";
  hcn::json::AppendString(&record, "hcn-sim client: " + why);
  record += ",\"ErrorCode\":" + std::to_string(hcn::Unsigned(hr)) + "}";
  reply.error_record = std::move(record);
  return reply;
}

Reply Call(const char* op, std::initializer_list<Field> fields) {
  const std::optional<std::string> text = AddressFromEnvironment();
  if (!text) return LocalFailure(hcn::kServerUnavailable, "HCN_SIM is not set");
  Address address;
  std::string why;
  if (!ParseAddress(*text, &address, &why)) return LocalFailure(hcn::kServerUnavailable, why);
  std::unique_ptr<Connection> connection = TakeKept(*text);
  if (!connection) {
    connection = std::make_unique<Connection>();
    if (!connection->Open(address, &why)) return LocalFailure(hcn::kServerUnavailable, why);
  }
  // No retry on a fresh connection when a kept one fails: the line may have reached the simulator, and a call that
  // may have been carried out is RPC_S_CALL_FAILED, never a second attempt.
  std::string line;
  if (!connection->SendAll(RequestLine(op, fields), &why) || !ReadLine(connection.get(), &line, &why)) {
    return LocalFailure(hcn::kCallFailed, why);
  }
  bool kept = false;
  Reply reply = Decode(line, &kept);
  if (kept) Keep(*text, std::move(connection));
  return reply;
}

bool NextLine(Connection* connection, std::string* buffered, std::string* line, std::string* why) {
  char buffer[16384];
  for (;;) {
    const size_t newline = buffered->find('\n');
    if (newline != std::string::npos) {
      line->assign(*buffered, 0, newline);
      buffered->erase(0, newline + 1);
      return true;
    }
    if (buffered->size() > kMaxLine) {
      *why = "the simulator's line exceeds 64 MiB";
      return false;
    }
    const ptrdiff_t n = connection->Receive(buffer, sizeof(buffer), why);
    if (n < 0) return false;
    if (n == 0) {
      *why = "the simulator closed the connection";
      return false;
    }
    buffered->append(buffer, static_cast<size_t>(n));
  }
}

Reply Subscribe(const char* op, std::unique_ptr<Connection>* connection, std::string* buffered) {
  const std::optional<std::string> text = AddressFromEnvironment();
  if (!text) return LocalFailure(hcn::kServerUnavailable, "HCN_SIM is not set");
  Address address;
  std::string why;
  if (!ParseAddress(*text, &address, &why)) return LocalFailure(hcn::kServerUnavailable, why);
  auto fresh = std::make_unique<Connection>();
  if (!fresh->Open(address, &why)) return LocalFailure(hcn::kServerUnavailable, why);
  std::string line;
  if (!fresh->SendAll(RequestLine(op, {}, false), &why) || !NextLine(fresh.get(), buffered, &line, &why)) {
    return LocalFailure(hcn::kCallFailed, why);
  }
  bool kept = false;
  Reply reply = Decode(line, &kept);
  if (!hcn::Failed(reply.hr)) *connection = std::move(fresh);
  return reply;
}

std::optional<std::string> FromWide(PCWSTR text) {
  if (text == nullptr) return std::nullopt;
  return hcn::Utf16ToUtf8(hcn::View(text));
}

bool Deliver(const std::optional<std::string>& text, PWSTR* slot) {
  if (slot == nullptr || !text) return true;
  *slot = AllocWide(hcn::Utf8ToUtf16(*text));
  return *slot != nullptr;
}

}  // namespace hcnsim
