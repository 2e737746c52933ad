#include "logs/stream_index.h"

#include <algorithm>

#include "common/strings.h"
#include "logs/event_file.h"

namespace openglue::logs {
namespace {

// The smallest string greater than every string starting with `prefix`; empty if none.
std::string PrefixEnd(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xFF) prefix.pop_back();
  if (!prefix.empty()) prefix.back() = static_cast<char>(prefix.back() + 1);
  return prefix;
}

}  // namespace

void StreamIndex::Load(const Layout& layout) {
  // Reads the files without the lock, then publishes.
  std::vector<std::pair<std::string, Stats>> loaded;
  for (std::string& name : layout.ListRuns()) {
    Stats stats;
    for (int k = 0; k < kKindCount; ++k) {
      EventFile file = EventFile::Open(layout.EventsPath(name, static_cast<StreamKind>(k)));
      stats.stored_bytes[k] = file.end();
      if (file.end() > 0) stats.last_event[k] = file.TimestampAt(file.LastEventStart());
    }
    loaded.emplace_back(std::move(name), stats);
  }
  MutexLock lock(&mu_);
  for (auto& [name, stats] : loaded) {
    AddLocked(name);
    for (int k = 0; k < kKindCount; ++k) {
      Stats& s = streams_[name];
      by_time_[k].erase({s.last_event[k], name});
      stored_bytes_[k] -= s.stored_bytes[k];
      s.last_event[k] = stats.last_event[k];
      s.stored_bytes[k] = stats.stored_bytes[k];
      by_time_[k].insert({s.last_event[k], name});
      stored_bytes_[k] += s.stored_bytes[k];
    }
  }
}

void StreamIndex::AddLocked(const std::string& name) {
  auto [it, added] = streams_.emplace(name, Stats{});
  if (!added) return;
  for (int k = 0; k < kKindCount; ++k) by_time_[k].insert({-1, name});
}

void StreamIndex::Add(const std::string& name) {
  MutexLock lock(&mu_);
  AddLocked(name);
}

void StreamIndex::Remove(const std::string& name) {
  MutexLock lock(&mu_);
  auto it = streams_.find(name);
  if (it == streams_.end()) return;
  for (int k = 0; k < kKindCount; ++k) {
    by_time_[k].erase({it->second.last_event[k], name});
    stored_bytes_[k] -= it->second.stored_bytes[k];
  }
  streams_.erase(it);
}

void StreamIndex::Update(const std::string& name, StreamKind kind, int64_t last_event,
                         uint64_t stored_bytes) {
  const int k = static_cast<int>(kind);
  MutexLock lock(&mu_);
  AddLocked(name);
  Stats& s = streams_[name];
  if (s.last_event[k] != last_event) {
    by_time_[k].erase({s.last_event[k], name});
    s.last_event[k] = last_event;
    by_time_[k].insert({last_event, name});
  }
  stored_bytes_[k] += stored_bytes;
  stored_bytes_[k] -= s.stored_bytes[k];
  s.stored_bytes[k] = stored_bytes;
}

std::vector<StreamIndex::Entry> StreamIndex::PageByName(StreamKind kind,
                                                        const std::string& prefix,
                                                        const std::optional<std::string>& after,
                                                        bool descending, size_t limit) const {
  const int k = static_cast<int>(kind);
  std::vector<Entry> out;
  MutexLock lock(&mu_);
  auto take = [&](const std::string& name, const Stats& stats) {
    out.push_back(Entry{name, stats.last_event[k]});
  };
  if (!descending) {
    auto it = after && *after >= prefix ? streams_.upper_bound(*after) : streams_.lower_bound(prefix);
    for (; it != streams_.end() && out.size() < limit && StartsWith(it->first, prefix); ++it) {
      take(it->first, it->second);
    }
  } else {
    std::string end = PrefixEnd(prefix);
    auto it = end.empty() ? streams_.end() : streams_.lower_bound(end);
    if (after) {
      // Names before `cursor` are < *after.
      auto cursor = streams_.lower_bound(*after);
      if (it == streams_.end() || (cursor != streams_.end() && cursor->first < it->first)) {
        it = cursor;
      }
    }
    while (it != streams_.begin() && out.size() < limit) {
      --it;
      if (!StartsWith(it->first, prefix)) break;
      take(it->first, it->second);
    }
  }
  return out;
}

std::vector<StreamIndex::Entry> StreamIndex::PageByTime(
    StreamKind kind, const std::optional<std::pair<int64_t, std::string>>& after,
    bool descending, size_t limit) const {
  const int k = static_cast<int>(kind);
  std::vector<Entry> out;
  MutexLock lock(&mu_);
  const auto& order = by_time_[k];
  if (!descending) {
    auto it = after ? order.upper_bound(*after) : order.begin();
    for (; it != order.end() && out.size() < limit; ++it) out.push_back({it->second, it->first});
  } else {
    auto it = after ? order.lower_bound(*after) : order.end();
    while (it != order.begin() && out.size() < limit) {
      --it;
      out.push_back({it->second, it->first});
    }
  }
  return out;
}

std::vector<std::string> StreamIndex::Names(const std::string& prefix, size_t limit) const {
  std::vector<std::string> out;
  MutexLock lock(&mu_);
  for (auto it = streams_.lower_bound(prefix);
       it != streams_.end() && out.size() < limit && StartsWith(it->first, prefix); ++it) {
    out.push_back(it->first);
  }
  return out;
}

uint64_t StreamIndex::StoredBytes(StreamKind kind) const {
  MutexLock lock(&mu_);
  return stored_bytes_[static_cast<int>(kind)];
}

size_t StreamIndex::size() const {
  MutexLock lock(&mu_);
  return streams_.size();
}

}  // namespace openglue::logs
