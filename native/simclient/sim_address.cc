#include "sim_address.h"

namespace hcnsim {

bool ParseAddress(std::string_view text, Address* out, std::string* why) {
  const std::string quoted = "HCN_SIM=\"" + std::string(text) + "\"";
  if (text.substr(0, 5) == "unix:") {
    out->scheme = Address::Scheme::kUnix;
    out->path = std::string(text.substr(5));
    if (out->path.empty() || out->path.front() != '/') {
      *why = quoted + " is malformed: a unix: address needs an absolute path";
      return false;
    }
    return true;
  }
  if (text.substr(0, 4) == "tcp:") {
    const std::string_view rest = text.substr(4);
    const size_t colon = rest.rfind(':');
    out->scheme = Address::Scheme::kTcp;
    out->host = std::string(rest.substr(0, colon == std::string_view::npos ? 0 : colon));
    out->port = colon == std::string_view::npos ? "" : std::string(rest.substr(colon + 1));
    unsigned long port = 0;
    bool digits = !out->port.empty() && out->port.size() <= 5;
    for (const char c : out->port) {
      digits = digits && c >= '0' && c <= '9';
      port = port * 10 + static_cast<unsigned long>(c - '0');
    }
    if ((out->host != "127.0.0.1" && out->host != "localhost") || !digits || port == 0 || port > 65535) {
      *why = quoted + " is malformed: expected tcp:127.0.0.1:PORT or tcp:localhost:PORT";
      return false;
    }
    return true;
  }
  *why = quoted + " is malformed: expected unix:/path or tcp:127.0.0.1:PORT";
  return false;
}

}  // namespace hcnsim
