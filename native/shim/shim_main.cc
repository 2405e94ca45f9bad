// hcn-cni shim: what the container runtime runs as `hcn-cni` (`hcn-cni.exe`). It carries one CNI invocation —
// the environment and stdin — to the resident service (`hcn-cni-standalone serve`), writes back its stdout and
// stderr and exits with its code. When the service is absent, speaks another protocol version, or goes away before
// it has accepted the request, the request is run by the standalone executable beside the shim instead, with the
// same environment and stdin, so the runtime sees the same result either way. Without CNI_COMMAND it is the operator
// running `hcn-cni <command>`: that is the standalone executable's job, so the shim hands over at once. Before it
// sends anything the shim checks who serves the address (Connection::ServerIsTrusted); a server that is not the
// service's own account is refused, and the standalone executable runs the request instead.
// See docs/service-protocol.md.
#include <string>

#include "shim_platform.h"
#include "shim_protocol.h"

namespace hcnshim {
namespace {

// Used only when neither the service nor the standalone executable can run the request.
const char kNoPlugin[] =
    "{\"cniVersion\":\"1.1.0\",\"code\":11,\"msg\":\"hcn-cni: the service is not running and the standalone "
    "executable beside the shim could not be started\"}\n";

int Fallback(const std::string& stdin_bytes) {
  const int code = RunStandalone(stdin_bytes);
  if (code >= 0) return code;
  WriteOut(1, kNoPlugin);
  return 1;
}

// Reads a u32-length-prefixed byte string.
bool ReadBytes(Connection* c, uint32_t n, std::string* out) {
  if (n > kMaxReply) return false;
  out->assign(n, '\0');
  return n == 0 || c->ReadExact(&(*out)[0], n);
}

// How many times a request the service closed unaccepted is offered, and the pause before each offer after the first.
constexpr int kOffers = 3;
constexpr int kReofferPauseMs[kOffers - 1] = {20, 200};

// What became of offering the request on one connection.
enum class Offer { kAccepted, kClosedBeforeAccepting, kNotUsed };

// Connects, checks who serves the address, sends the request and reads the service's first answer; on anything but
// kAccepted, `why` is the one line the fallback says.
Offer OfferRequest(Connection* conn, const std::string& address, const std::string& request, std::string* why) {
  if (!conn->Open(address, why)) return Offer::kNotUsed;
  // Whoever listens at the address would get the runtime's whole environment and the configuration and choose the
  // result the runtime sees: only a server that the service's own account (or a more privileged one) runs may.
  if (!conn->ServerIsTrusted(why)) return Offer::kNotUsed;
  // Until the service accepts, nothing has run: a failure here leaves the request to be offered again or run by the
  // standalone executable.
  *why = "it closed the connection before accepting the request";
  char head[8];
  if (!conn->WriteAll(request) || !conn->ReadExact(head, sizeof head)) return Offer::kClosedBeforeAccepting;
  if (std::string(head, 4) == std::string(kMagicVersion, 4)) {
    *why = "it speaks protocol version " + std::to_string(GetU32(head + 4)) + ", this shim " +
           std::to_string(kProtocolVersion);
    return Offer::kNotUsed;
  }
  if (std::string(head, 4) != std::string(kMagicAccept, 4) || GetU32(head + 4) != kProtocolVersion) {
    *why = "it answered something that is not the service's protocol";
    return Offer::kNotUsed;
  }
  return Offer::kAccepted;
}

int Run(int argc, char** argv) {
  if (!IsCniInvocation()) return PassThrough(argc, argv);
  std::string stdin_bytes;
  ReadStdin(&stdin_bytes, kStdinLimit);
  // One byte past the limit is enough for the plugin to refuse the input (code 6), as the standalone one reads it.
  if (stdin_bytes.size() > kStdinLimit + 1) stdin_bytes.resize(kStdinLimit + 1);

  const std::string address = ServiceAddress();
  // Every way of not using the service says why on stderr (one line; stdout stays the result's), so that an operator
  // who finds the standalone executable's work in the log knows what the service did not do.
  const auto fallback = [&](const std::string& why) {
    WriteOut(2, "hcn-cni: not using the service at " + address + ": " + why + "; running hcn-cni-standalone\n");
    return Fallback(stdin_bytes);
  };
  const std::string request = EncodeRequest(EnvironmentBlock(), stdin_bytes);
  // A service that hands its address to its successor closes the connections it has not read (a Windows pipe
  // instance a client reached in the last instant: docs/service-protocol.md, "Hands over without a gap"), and the
  // successor already serves the address. Nothing has run, so the request is offered again before the standalone
  // executable runs it. The old service closes its instances one after another: an offer made at once may reach the
  // next of them, so the later offers wait for that pass to end (it takes milliseconds).
  Connection conns[kOffers];
  Connection* conn = nullptr;
  std::string why;
  Offer offer = Offer::kClosedBeforeAccepting;
  for (int i = 0; i < kOffers && offer == Offer::kClosedBeforeAccepting; i++) {
    if (i > 0) Pause(kReofferPauseMs[i - 1]);
    conn = &conns[i];
    offer = OfferRequest(conn, address, request, &why);
  }
  if (offer == Offer::kClosedBeforeAccepting) why += ", " + std::to_string(kOffers) + " times";
  if (offer != Offer::kAccepted) return fallback(why);
  // Accepted: the service now owns the verb and finishes it even if we die. What to print if the service itself dies
  // before answering (a CNI "try again later" in the request's cniVersion) comes with the acceptance, so the shim
  // needs no JSON of its own.
  char len[4];
  std::string if_service_dies;
  if (!conn->ReadExact(len, 4) || !ReadBytes(conn, GetU32(len), &if_service_dies)) return 1;

  char result[16];
  std::string out, err;
  if (!conn->ReadExact(result, sizeof result) || std::string(result, 4) != std::string(kMagicResult, 4) ||
      !ReadBytes(conn, GetU32(result + 8), &out) || !ReadBytes(conn, GetU32(result + 12), &err)) {
    WriteOut(1, if_service_dies);
    return 1;
  }
  WriteOut(2, err);
  WriteOut(1, out);
  return static_cast<int>(GetU32(result + 4));
}

}  // namespace
}  // namespace hcnshim

int main(int argc, char** argv) { return hcnshim::Run(argc, argv); }
