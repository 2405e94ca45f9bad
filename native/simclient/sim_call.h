// One simulator call: build the request line, exchange it over a kept or new connection, decode the response
// (docs/sim-protocol.md). Transport failures come back as replies too, with the RPC HRESULTs HNS clients see when
// the service is down (RPC_S_SERVER_UNAVAILABLE) or goes away mid-call (RPC_S_CALL_FAILED).
#ifndef HCN_CNI_SIMCLIENT_SIM_CALL_H_
#define HCN_CNI_SIMCLIENT_SIM_CALL_H_

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "hcn_abi.h"
#include "sim_connection.h"

namespace hcnsim {

// A request field: a string, or JSON null for a NULL pointer.
struct Field {
  const char* name;
  std::optional<std::string> value;
};

struct Reply {
  HRESULT hr = 0;
  std::optional<std::string> result;
  std::optional<std::string> error_record;
  // The service instance that answered, as text: what an HCN handle opened by the call belongs to
  // (src/sim/stale-handles.ts).
  std::optional<std::string> boot;
};

Reply Call(const char* op, std::initializer_list<Field> fields);

// A subscription (docs/sim-protocol.md, "Service notifications"): `op` on a connection of its own, never a kept one;
// when the answer is a success the connection is handed over in *connection, and the service's notification lines
// arrive on it (read them with NextLine, starting with *buffered: what came after the answer) until the service
// ends it.
Reply Subscribe(const char* op, std::unique_ptr<Connection>* connection, std::string* buffered);

// The next line (without its newline) of a stream of lines, `buffered` holding what was read past the last one.
// False when the stream ends or fails first, with the reason.
bool NextLine(Connection* connection, std::string* buffered, std::string* line, std::string* why);

// A reply made on this side of the wire, with an HNS-style error record naming the reason.
Reply LocalFailure(HRESULT hr, const std::string& why);

// The ABI argument as a request field value: UTF-8, or nullopt for NULL.
std::optional<std::string> FromWide(PCWSTR text);

// Hands `text` to the caller as a newly allocated UTF-16 string in *slot (when slot is not NULL).
bool Deliver(const std::optional<std::string>& text, PWSTR* slot);

}  // namespace hcnsim

#endif  // HCN_CNI_SIMCLIENT_SIM_CALL_H_
