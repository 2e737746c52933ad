#include "logs/log_store.h"

#include <errno.h>
#include <string.h>

#include <cstring>
#include <filesystem>

#include "common/strings.h"
#include "logs/event_file.h"

namespace openglue::logs {

LogStore::LogStore(std::string root, const Clock* clock, const LogStoreOptions& options,
                   int64_t created_ms)
    : layout_(std::move(root)),
      tailer_(&layout_, &index_, clock, TailerOptions{options.retention_days,
                                                      options.poll_interval_ms}),
      api_(&layout_, &index_,
           LogsApiOptions{options.retention_days, options.region, options.account_id,
                          created_ms, {options.output_group, options.error_group}}) {}

LogStore::~LogStore() { tailer_.Stop(); }

std::string LogStore::StdoutPath(const std::string& run_id) {
  tailer_.EnsureStream(run_id);
  return layout_.RawPath(run_id, StreamKind::kOutput);
}

std::string LogStore::StderrPath(const std::string& run_id) {
  tailer_.EnsureStream(run_id);
  return layout_.RawPath(run_id, StreamKind::kError);
}

Result<std::unique_ptr<LogStore>> LogStore::Make(const std::string& root, const Clock* clock,
                                                 LogStoreOptions options) {
  if (clock == nullptr) return Status::InvalidInput("LogStore needs a clock");
  if (root.empty()) return Status::InvalidInput("LogStore needs a root directory");
  if (options.poll_interval_ms < 1) return Status::InvalidInput("poll_interval_ms must be >= 1");
  if (options.retention_days < 0) return Status::InvalidInput("retention_days must be >= 0");
  std::error_code ec;
  std::filesystem::create_directories(root, ec);
  if (ec || !std::filesystem::is_directory(root, ec)) {
    return Status::Internal("Cannot create the log directory '" + root + "': " + ec.message());
  }
  std::string root_dir = root;
  while (root_dir.size() > 1 && root_dir.back() == '/') root_dir.pop_back();
  // The groups' creation time: when this log directory was first used.
  std::string created_path = root_dir + "/" + kRootCreatedFile;
  std::string text;
  int64_t created = 0;
  if (!ReadSmallFile(created_path, &text) || !ParseInt64(Trim(text), &created)) {
    created = clock->NowMillis();
    if (!WriteFileAtomically(created_path, std::to_string(created))) {
      return Status::Internal("Cannot write to the log directory '" + root + "': " +
                              std::strerror(errno));
    }
  }
  std::unique_ptr<LogStore> store(new LogStore(std::move(root_dir), clock, options, created));
  store->index_.Load(store->layout_);
  return store;
}

}  // namespace openglue::logs
