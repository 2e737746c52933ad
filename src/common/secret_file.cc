#include "common/secret_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace openglue {

Result<bool> CreateSecretFile(const std::string& path, std::string_view bytes) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    return Status::InvalidInput("cannot create " + path + ": " + std::strerror(errno));
  }
  bool ok = write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  ok = fsync(fd) == 0 && ok;
  ok = close(fd) == 0 && ok;
  if (!ok) {
    unlink(path.c_str());
    return Status::InvalidInput("cannot write " + path);
  }
  return true;
}

}  // namespace openglue
