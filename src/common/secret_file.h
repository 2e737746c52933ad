// A new file holding a secret (a key), readable by its owner only.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace openglue {

// Creates `path` with mode 0600 (O_EXCL: never an existing file, never through a symbolic link),
// writes `bytes` and syncs them. Returns true when the file was made, false when `path` already
// exists (it is left as it is); InvalidInput naming the path on any other failure, after which no
// partial file is left behind.
Result<bool> CreateSecretFile(const std::string& path, std::string_view bytes);

}  // namespace openglue
