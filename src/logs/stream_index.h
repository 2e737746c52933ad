// StreamIndex: what the Logs API needs to know about every stream, kept in memory so that a
// request never lists the run folders: the stream names in order, and per group each stream's
// last event time and stored bytes. Describe* pages through it with work and memory bounded by
// the page size (plus a logarithmic search). Loaded from the disk once at startup; kept up to
// date by the tailer (new streams, new events, retention).
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/thread_annotations.h"
#include "logs/layout.h"

namespace openglue::logs {

class StreamIndex {
 public:
  struct Entry {
    std::string name;
    int64_t last_event = -1;  // timestamp of the stream's last event; -1 without events
  };

  // Reads every run folder under `layout` (its event files' lengths and last timestamps).
  void Load(const Layout& layout) EXCLUDES(mu_);

  // A new stream without events (no-op if known).
  void Add(const std::string& name) EXCLUDES(mu_);
  void Remove(const std::string& name) EXCLUDES(mu_);
  // The stream's events of `kind` now end with `last_event` and take `stored_bytes`.
  void Update(const std::string& name, StreamKind kind, int64_t last_event,
              uint64_t stored_bytes) EXCLUDES(mu_);

  // At most `limit` streams in name order, ascending or descending, whose names start with
  // `prefix`, strictly after `after` (in that order) when given.
  std::vector<Entry> PageByName(StreamKind kind, const std::string& prefix,
                                const std::optional<std::string>& after, bool descending,
                                size_t limit) const EXCLUDES(mu_);
  // At most `limit` streams in (last event time, name) order, strictly after `after`.
  std::vector<Entry> PageByTime(StreamKind kind,
                                const std::optional<std::pair<int64_t, std::string>>& after,
                                bool descending, size_t limit) const EXCLUDES(mu_);
  // The streams whose names start with `prefix`, in name order, at most `limit`.
  std::vector<std::string> Names(const std::string& prefix, size_t limit) const EXCLUDES(mu_);
  // Total bytes of the group's event files.
  uint64_t StoredBytes(StreamKind kind) const EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);

 private:
  struct Stats {
    int64_t last_event[kKindCount] = {-1, -1};
    uint64_t stored_bytes[kKindCount] = {0, 0};
  };
  void AddLocked(const std::string& name) REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<std::string, Stats> streams_ GUARDED_BY(mu_);
  std::set<std::pair<int64_t, std::string>> by_time_[kKindCount] GUARDED_BY(mu_);
  uint64_t stored_bytes_[kKindCount] GUARDED_BY(mu_) = {0, 0};
};

}  // namespace openglue::logs
