#include "catalog/connection_cipher.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>

#include "common/secret_file.h"
#include "common/strings.h"

namespace openglue::catalog {
namespace {

constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;
constexpr std::string_view kVersion = "v1";

Status EncryptionError(std::string message) {
  return Status(StatusCode::kEncryption, std::move(message));
}

std::string KeyIdFor(const std::string& key) {
  static constexpr std::string_view kLabel = "openglue connection key id";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(kLabel.data()), kLabel.size(), digest, &length);
  static const char* kHex = "0123456789abcdef";
  std::string id;
  for (unsigned int i = 0; i < 8 && i < length; ++i) {
    id.push_back(kHex[digest[i] >> 4]);
    id.push_back(kHex[digest[i] & 15]);
  }
  return id;
}

struct CipherContext {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  ~CipherContext() { EVP_CIPHER_CTX_free(ctx); }
};

}  // namespace

ConnectionCipher::ConnectionCipher(std::string key) : key_(std::move(key)), key_id_(KeyIdFor(key_)) {}

ConnectionCipher::~ConnectionCipher() { OPENSSL_cleanse(key_.data(), key_.size()); }

Result<std::unique_ptr<ConnectionCipher>> ConnectionCipher::FromKey(std::string_view key) {
  if (key.size() != kKeyBytes)
    return Status::InvalidInput("a connection key must be exactly " + std::to_string(kKeyBytes) + " bytes");
  return std::unique_ptr<ConnectionCipher>(new ConnectionCipher(std::string(key)));
}

std::unique_ptr<ConnectionCipher> ConnectionCipher::Generate(Random* random) {
  std::string key(kKeyBytes, '\0');
  random->Fill(key.data(), key.size());
  return std::unique_ptr<ConnectionCipher>(new ConnectionCipher(std::move(key)));
}

Result<std::unique_ptr<ConnectionCipher>> ConnectionCipher::FromFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::InvalidInput("cannot read the connection key file " + path + ": " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::InvalidInput("the connection key file " + path + " is not a regular file");
  }
  std::string key;
  char buf[64];
  ssize_t n;
  // Reads at most one byte past the key, enough to tell a longer file.
  while (key.size() <= kKeyBytes && (n = read(fd, buf, sizeof(buf))) > 0) key.append(buf, n);
  int read_errno = errno;
  close(fd);
  if (n < 0) {
    OPENSSL_cleanse(key.data(), key.size());
    return Status::InvalidInput("cannot read the connection key file " + path + ": " + std::strerror(read_errno));
  }
  if (key.size() != kKeyBytes) {
    OPENSSL_cleanse(key.data(), key.size());
    return Status::InvalidInput("the connection key file " + path + " must hold exactly " +
                                std::to_string(kKeyBytes) + " bytes (make one with `head -c 32 "
                                "/dev/urandom > FILE`; a different key cannot open passwords "
                                "already stored)");
  }
  auto cipher = std::unique_ptr<ConnectionCipher>(new ConnectionCipher(key));
  OPENSSL_cleanse(key.data(), key.size());
  return cipher;
}

Status ConnectionCipher::Save(const std::string& path) const {
  OG_ASSIGN_OR_RETURN(bool made, CreateSecretFile(path, key_));
  if (!made) return Status::InvalidInput("the connection key file " + path + " already exists");
  return Status::OK();
}

Result<std::string> ConnectionCipher::Seal(std::string_view plaintext, std::string_view context,
                                           Random* random) const {
  std::string out(kNonceBytes + plaintext.size() + kTagBytes, '\0');
  auto* bytes = reinterpret_cast<unsigned char*>(out.data());
  random->Fill(bytes, kNonceBytes);
  CipherContext c;
  int len = 0;
  bool ok = c.ctx != nullptr &&
            EVP_EncryptInit_ex(c.ctx, EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
            EVP_EncryptInit_ex(c.ctx, nullptr, nullptr,
                               reinterpret_cast<const unsigned char*>(key_.data()), bytes) == 1 &&
            EVP_EncryptUpdate(c.ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(context.data()),
                              static_cast<int>(context.size())) == 1 &&
            EVP_EncryptUpdate(c.ctx, bytes + kNonceBytes, &len,
                              reinterpret_cast<const unsigned char*>(plaintext.data()),
                              static_cast<int>(plaintext.size())) == 1;
  int final_len = 0;
  ok = ok && EVP_EncryptFinal_ex(c.ctx, bytes + kNonceBytes + len, &final_len) == 1 &&
       static_cast<size_t>(len + final_len) == plaintext.size() &&
       EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_GET_TAG, kTagBytes,
                           bytes + kNonceBytes + plaintext.size()) == 1;
  if (!ok) return Status::Internal("AES-256-GCM encryption failed in OpenSSL");
  return std::string(kVersion) + ":" + key_id_ + ":" + Base64Encode(out);
}

std::string ConnectionCipher::KeyIdOf(std::string_view sealed) {
  if (sealed.size() < kVersion.size() + 18 || sealed.substr(0, kVersion.size()) != kVersion ||
      sealed[kVersion.size()] != ':' || sealed[kVersion.size() + 17] != ':')
    return "";
  return std::string(sealed.substr(kVersion.size() + 1, 16));
}

Result<std::string> ConnectionCipher::Open(std::string_view sealed, std::string_view context) const {
  std::string id = KeyIdOf(sealed);
  if (id.empty()) return EncryptionError("a stored secret is not in a form this server reads");
  if (id != key_id_)
    return EncryptionError("a stored secret was encrypted with connection key " + id +
                           ", but this server's key is " + key_id_ +
                           " (the connection key file was replaced)");
  std::string raw;
  if (!Base64Decode(sealed.substr(kVersion.size() + 18), &raw) || raw.size() < kNonceBytes + kTagBytes)
    return EncryptionError("a stored secret is corrupt");
  size_t text_size = raw.size() - kNonceBytes - kTagBytes;
  auto* bytes = reinterpret_cast<unsigned char*>(raw.data());
  std::string plaintext(text_size, '\0');
  CipherContext c;
  int len = 0;
  bool ok = c.ctx != nullptr &&
            EVP_DecryptInit_ex(c.ctx, EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
            EVP_DecryptInit_ex(c.ctx, nullptr, nullptr,
                               reinterpret_cast<const unsigned char*>(key_.data()), bytes) == 1 &&
            EVP_DecryptUpdate(c.ctx, nullptr, &len, reinterpret_cast<const unsigned char*>(context.data()),
                              static_cast<int>(context.size())) == 1 &&
            EVP_DecryptUpdate(c.ctx, reinterpret_cast<unsigned char*>(plaintext.data()), &len,
                              bytes + kNonceBytes, static_cast<int>(text_size)) == 1 &&
            EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_TAG, kTagBytes,
                                bytes + kNonceBytes + text_size) == 1;
  int final_len = 0;
  ok = ok && EVP_DecryptFinal_ex(c.ctx, reinterpret_cast<unsigned char*>(plaintext.data()) + len,
                                 &final_len) == 1;
  if (!ok) {
    OPENSSL_cleanse(plaintext.data(), plaintext.size());
    return EncryptionError("a stored secret failed authentication (altered, or moved from another "
                           "connection)");
  }
  return plaintext;
}

}  // namespace openglue::catalog
