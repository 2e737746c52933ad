#include "api/run_secrets.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>

#include "common/secret_file.h"

namespace openglue::api {
namespace {

constexpr size_t kKeyBytes = 32;

Result<std::string> ReadKey(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Status::InvalidInput("cannot read " + path + ": " + std::strerror(errno));
  std::string key;
  char buf[256];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0 && key.size() < 4096) key.append(buf, n);
  close(fd);
  if (key.size() < kKeyBytes)
    return Status::InvalidInput(path + " holds fewer than " + std::to_string(kKeyBytes) +
                                " bytes; remove it to have a new key made (running jobs then "
                                "lose their credentials)");
  return key;
}

}  // namespace

Result<RunSecrets> RunSecrets::Make(const std::string& key_path,
                                    const std::string& configured_key, Random* random) {
  if (!configured_key.empty()) return RunSecrets(configured_key);
  std::string fresh(kKeyBytes, '\0');
  random->Fill(fresh.data(), fresh.size());
  OG_ASSIGN_OR_RETURN(bool made, CreateSecretFile(key_path, fresh));
  if (made) return RunSecrets(std::move(fresh));
  // An older key file may have been made with looser permissions: tighten them.
  chmod(key_path.c_str(), 0600);
  OG_ASSIGN_OR_RETURN(std::string key, ReadKey(key_path));
  return RunSecrets(std::move(key));
}

std::string RunSecrets::SecretFor(const std::string& access_key_id) const {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(access_key_id.data()), access_key_id.size(), digest,
       &length);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length && out.size() < 40; ++i) {
    out.push_back(kHex[digest[i] >> 4]);
    out.push_back(kHex[digest[i] & 15]);
  }
  return out;
}

}  // namespace openglue::api
