// Run secrets that are never stored: a job run's secret access key is
// HMAC-SHA256(server key, access key id), so the metadata store keeps only the access key id and
// a restarted server derives the same secret again for the runs it re-adopts.
//
// The server key is 32 bytes from the CSPRNG, kept in <data_dir>/server.key (mode 0600, created
// on first start), unless the operator gives one (config `server_key` or OPENGLUE_SERVER_KEY).
#pragma once

#include <string>

#include "common/random.h"
#include "common/status.h"

namespace openglue::api {

class RunSecrets {
 public:
  // `configured_key`: used as is when not empty. Otherwise reads `key_path`, creating it (0600,
  // random bytes from `random`) when missing. InvalidInput when the file cannot be read or
  // written, or holds fewer than 32 bytes.
  static Result<RunSecrets> Make(const std::string& key_path, const std::string& configured_key,
                                 Random* random);

  // The secret of `access_key_id`: 40 lowercase hex digits. Thread-safe (immutable).
  std::string SecretFor(const std::string& access_key_id) const;

 private:
  explicit RunSecrets(std::string key) : key_(std::move(key)) {}
  std::string key_;
};

}  // namespace openglue::api
