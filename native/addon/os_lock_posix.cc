#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "os_lock.h"
#include "utf.h"

namespace hcn {

LockStatus OsTryLock(const std::u16string& path, intptr_t* os_handle) {
  const std::string file = Utf16ToUtf8(path);
  // O_CLOEXEC: a child spawned while we hold the lock must not inherit (and so keep) it.
  int fd;
  do fd = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) throw LockError{"open " + file + ": " + std::strerror(errno), errno};
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file, however large it grows
  // F_OFD_SETLK, not F_SETLK: OFD locks belong to the open file description, so a second handle in this same
  // process is refused (classic POSIX locks would grant it, and silently drop both on the first close).
  int rc;
  do rc = fcntl(fd, F_OFD_SETLK, &lock);
  while (rc != 0 && errno == EINTR);
  if (rc == 0) {
    *os_handle = fd;
    return LockStatus::kLocked;
  }
  const int error = errno;
  close(fd);
  if (error == EAGAIN || error == EACCES) return LockStatus::kBusy;
  throw LockError{"fcntl(F_OFD_SETLK) " + file + ": " + std::strerror(error), error};
}

void OsUnlock(intptr_t os_handle) { close(static_cast<int>(os_handle)); }  // closing releases the OFD lock

}  // namespace hcn
