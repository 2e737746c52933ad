// ConnectionCipher: encryption at rest of the secret properties of Glue connections (PASSWORD,
// ENCRYPTED_PASSWORD and the Kafka passwords).
//
// AES-256-GCM (OpenSSL EVP) under one 32-byte server key. Each value is sealed with a fresh
// 96-bit random nonce and with associated data naming where it belongs (catalog id, connection
// name, property key), so a sealed value copied to another connection or property in the store
// does not open. A sealed value is the text "v1:<key id>:<base64(nonce | ciphertext | tag)>";
// the key id (16 hex digits of HMAC-SHA256(key, "openglue connection key id")) names the key
// without revealing it, so a server started with the wrong key file can say so.
//
// The key lives in a file of exactly 32 bytes, mode 0600: <data_dir>/connection.key, made on
// first start, or a file the operator names (config `connection_key_file`).
//
// Thread-safe after construction (immutable; the Random given to Seal must be thread-safe,
// as SystemRandom is).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/random.h"
#include "common/status.h"

namespace openglue::catalog {

class ConnectionCipher {
 public:
  static constexpr size_t kKeyBytes = 32;

  // Reads the key from `path`: InvalidInput naming the file when it is missing, unreadable, or
  // not exactly 32 bytes. Never echoes the file's contents.
  static Result<std::unique_ptr<ConnectionCipher>> FromFile(const std::string& path);
  // A new key from `random` (not yet saved anywhere).
  static std::unique_ptr<ConnectionCipher> Generate(Random* random);
  // A cipher over `key` (32 bytes; InvalidInput otherwise). For tests.
  static Result<std::unique_ptr<ConnectionCipher>> FromKey(std::string_view key);

  ~ConnectionCipher();
  ConnectionCipher(const ConnectionCipher&) = delete;
  ConnectionCipher& operator=(const ConnectionCipher&) = delete;

  // Writes the key to `path`, which must not exist yet (created 0600, fsynced).
  // InvalidInput when it cannot be created or written.
  Status Save(const std::string& path) const;

  // The key's public name: 16 lowercase hex digits.
  const std::string& key_id() const { return key_id_; }

  // Seals `plaintext` bound to `context`. Internal only if OpenSSL fails.
  Result<std::string> Seal(std::string_view plaintext, std::string_view context, Random* random) const;
  // Opens a value made by Seal with the same `context`. kEncryption when the value is
  // malformed, was sealed under another key (the message names both key ids) or for another
  // context, or was altered.
  Result<std::string> Open(std::string_view sealed, std::string_view context) const;
  // The key id a sealed value names ("" when it is malformed).
  static std::string KeyIdOf(std::string_view sealed);

 private:
  explicit ConnectionCipher(std::string key);
  std::string key_;
  std::string key_id_;
};

}  // namespace openglue::catalog
