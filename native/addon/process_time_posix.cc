#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "process_time.h"

namespace hcn {

std::optional<std::string> ProcessStartTime(int64_t pid) {
  if (pid <= 0) return std::nullopt;
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ESRCH) return std::nullopt;
    throw std::runtime_error("open " + path + ": " + std::strerror(errno));
  }
  char buffer[1024];
  const ssize_t n = read(fd, buffer, sizeof(buffer) - 1);
  const int read_error = errno;
  close(fd);
  if (n < 0) {
    if (read_error == ESRCH) return std::nullopt;  // the process went away between open and read
    throw std::runtime_error("read " + path + ": " + std::strerror(read_error));
  }
  const std::string stat(buffer, static_cast<size_t>(n));
  // The command name (field 2) is in parentheses and may itself contain ") ", so fields are counted from the
  // last ')'. After it come field 3 (state) ... field 22 (starttime, clock ticks since boot).
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) throw std::runtime_error("unexpected format in " + path);
  std::string fields[20];
  size_t pos = paren + 1;
  for (std::string& field : fields) {
    while (pos < stat.size() && stat[pos] == ' ') ++pos;
    const size_t end = stat.find(' ', pos);
    field = stat.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? stat.size() : end;
  }
  const std::string& state = fields[0];
  if (state == "Z" || state == "X" || state == "x") return std::nullopt;  // exited, not yet (or no longer) reaped
  const std::string& start_time = fields[19];
  if (start_time.empty() || start_time.find_first_not_of("0123456789") != std::string::npos) {
    throw std::runtime_error("unexpected format in " + path);
  }
  return start_time;
}

}  // namespace hcn
