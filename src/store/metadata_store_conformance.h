// The MetadataStore conformance suite: the contract of store/metadata_store.h as tests, run on
// every implementation (SQLite now, PostgreSQL later), as Arrow runs one suite on each of its
// filesystems.
//
// To run it on an implementation, in that implementation's *_test.cc:
//
//   INSTANTIATE_TEST_SUITE_P(Sqlite, MetadataStoreConformance,
//       ::testing::Values(MetadataStoreFactory{"sqlite", [](const std::string& dir) { ... }}));
//
// The factory opens the store kept under `dir` (a fresh empty directory per test, removed after
// it). Opening the same `dir` again must give a store that sees every committed write: that is
// how durability across a restart is checked.
//
// Files named *_conformance.cc are built into their module's test binary, not its library.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "store/metadata_store.h"

namespace openglue::store {

struct MetadataStoreFactory {
  std::string name;
  std::function<Result<std::unique_ptr<MetadataStore>>(const std::string& dir)> open;
};

inline std::string PrintToString(const MetadataStoreFactory& factory) { return factory.name; }

class MetadataStoreConformance : public ::testing::TestWithParam<MetadataStoreFactory> {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Closes and reopens the store over the same directory.
  void Reopen();
  std::unique_ptr<Transaction> Write();
  std::unique_ptr<Transaction> Read();
  // The document at (kind, key) as a fresh reader sees it, or "<absent>".
  std::string ReadDoc(std::string_view kind, std::string_view key);

  std::string dir_;
  std::unique_ptr<MetadataStore> store_;
};

}  // namespace openglue::store
