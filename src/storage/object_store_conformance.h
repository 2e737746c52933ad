// The ObjectStore conformance suite: the behaviour every implementation shares, as one
// parameterized GoogleTest suite (Arrow does the same for its filesystems).
//
// An implementation's test instantiates it with a factory:
//
//   INSTANTIATE_TEST_SUITE_P(Local, ObjectStoreConformance, ::testing::Values(
//       ObjectStoreFactory{"local", [] { return MakeMyStore(); }}), ObjectStoreFactory::Name);
//
// Each test gets a fresh store from the factory and a bucket of its own ("og-conf-<random>")
// created through CreateBucket, so the suite also runs against a shared S3 server.
// A factory may return a Status with code kUnknownOperation to skip (e.g. no server reachable);
// its message is shown as the reason.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "storage/object_store.h"

namespace openglue::storage {

struct ObjectStoreFactory {
  std::string name;  // the instantiation's test-name suffix ([A-Za-z0-9_] only)
  std::function<Result<std::unique_ptr<ObjectStore>>()> make;
  // The store holds keys with "..", "." and empty segments as ordinary keys (S3) rather than
  // refusing them with InvalidInput (LocalObjectStore). Either way they stay ordinary keys.
  bool holds_dot_segments = false;

  static std::string Name(const ::testing::TestParamInfo<ObjectStoreFactory>& info) {
    return info.param.name;
  }
};

class ObjectStoreConformance : public ::testing::TestWithParam<ObjectStoreFactory> {
 protected:
  void SetUp() override;

  // Writes `data` at `key` in bucket_, failing the test on error.
  void Put(const std::string& key, const std::string& data);
  // Every key of bucket_ (paging with `page` entries per request) and every common prefix.
  void ListAll(const std::string& prefix, const std::string& delimiter, int page,
               std::vector<std::string>* keys, std::vector<std::string>* prefixes);

  std::unique_ptr<ObjectStore> store_;
  std::string bucket_;
};

}  // namespace openglue::storage
