// Fuzz target: the crawler's Parquet and ORC path (ClassifyObject on an object starting with PAR1
// or ORC: the footer checks of storage/columnar_footer.h, then Arrow's footer decoding behind
// them) on any bytes a job may write into the store must return a Result, never crash, hang or
// allocate what the tail declares. The input is the whole object; other inputs are left to
// inference_fuzz.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "crawler/classify.h"
#include "storage/object_store.h"

namespace {

// One object, read by ranges as the crawler reads a store.
class OneObject : public openglue::storage::ObjectStore {
 public:
  explicit OneObject(std::string_view data) : data_(data) {}
  openglue::Status CreateBucket(std::string_view) override { return openglue::Status::Internal("read-only"); }
  openglue::Result<openglue::storage::ListResult> List(const openglue::storage::ListRequest&) override {
    return openglue::Status::Internal("read-only");
  }
  openglue::Result<openglue::storage::ObjectInfo> Stat(std::string_view, std::string_view) override {
    return Info();
  }
  openglue::Result<std::string> Read(std::string_view, std::string_view, int64_t offset, int64_t length) override {
    if (offset < 0 || offset > static_cast<int64_t>(data_.size())) return openglue::Status::InvalidInput("offset");
    size_t n = length < 0 ? std::string_view::npos : static_cast<size_t>(length);
    return std::string(data_.substr(static_cast<size_t>(offset), n));
  }
  openglue::Status Write(std::string_view, std::string_view, std::string_view) override {
    return openglue::Status::Internal("read-only");
  }
  openglue::Status Delete(std::string_view, std::string_view) override { return openglue::Status::Internal("read-only"); }
  openglue::storage::ObjectInfo Info() const {
    openglue::storage::ObjectInfo info;
    info.key = "fuzz";
    info.size = static_cast<int64_t>(data_.size());
    return info;
  }

 private:
  std::string_view data_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (bytes.substr(0, 4) != "PAR1" && bytes.substr(0, 3) != "ORC") return 0;
  OneObject store(bytes);
  openglue::crawler::FooterBudget budget(openglue::crawler::kCrawlFooterBudget);
  (void)openglue::crawler::ClassifyObject(&store, "bucket", store.Info(), {}, &budget);
  return 0;
}
