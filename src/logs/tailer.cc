#include "logs/tailer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/json.h"
#include "common/logging.h"
#include "logs/event_file.h"

namespace openglue::logs {
namespace {

constexpr size_t kRawChunkBytes = 1024 * 1024;      // one read of a raw output file
constexpr uint64_t kMaxRawBytesPerPoll = 64 << 20;  // per stream, so one noisy run cannot stall
constexpr size_t kEventFlushBytes = 1024 * 1024;    // events are written in batches this large
constexpr int64_t kMillisPerDay = 86400000;
constexpr auto kRetentionInterval = std::chrono::seconds(60);

}  // namespace

// ---------------------------------------------------------------------------------------------
// Bookkeeping (under mu_)

Tailer::Claim* Tailer::ClaimRun(const std::string& run_id, bool urgent, RunTail* tail,
                                bool* cached) {
  MutexLock lock(&mu_);
  for (auto it = busy_.find(run_id); it != busy_.end(); it = busy_.find(run_id)) {
    if (urgent) it->second->cut_short = true;
    released_.Wait(&mu_);
  }
  Claim* claim = (busy_[run_id] = std::make_unique<Claim>()).get();
  auto it = tails_.find(run_id);
  *cached = it != tails_.end();
  if (*cached) *tail = it->second;
  return claim;
}

void Tailer::Release(const std::string& run_id, const RunTail* keep) {
  MutexLock lock(&mu_);
  if (keep != nullptr && followed_.count(run_id)) {
    tails_[run_id] = *keep;
  } else {
    tails_.erase(run_id);
  }
  busy_.erase(run_id);
  released_.SignalAll();
}

void Tailer::EnsureStream(const std::string& run_id) {
  if (!ValidStreamName(run_id)) return;
  layout_->CreateRunDir(run_id, clock_->NowMillis());
  index_->Add(run_id);
}

void Tailer::Follow(const std::string& run_id) {
  if (!ValidStreamName(run_id)) {
    OG_LOG(kWarn, "log store: not following invalid run id '" << run_id << "'");
    return;
  }
  EnsureStream(run_id);
  MutexLock lock(&mu_);
  followed_.insert(run_id);
}

void Tailer::Finish(const std::string& run_id) {
  if (!ValidStreamName(run_id)) return;
  {
    MutexLock lock(&mu_);
    followed_.erase(run_id);
  }
  RunTail tail;
  bool cached = false;
  Claim* claim = ClaimRun(run_id, /*urgent=*/true, &tail, &cached);
  (void)claim;
  if (!layout_->StreamExists(run_id)) {
    Release(run_id, nullptr);
    return;
  }
  if (!cached) tail = LoadTail(run_id);
  bool changed = false;
  for (int k = 0; k < kKindCount; ++k) {
    changed |= TailStream(run_id, static_cast<StreamKind>(k), &tail, true, nullptr);
  }
  if (changed || !tail.finished) {
    tail.finished = true;
    SaveTail(run_id, tail);
  }
  IndexTail(run_id, tail);
  Release(run_id, nullptr);
}

void Tailer::Start() {
  MutexLock lock(&mu_);
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void Tailer::Stop() {
  std::thread thread;
  {
    MutexLock lock(&mu_);
    if (!thread_.joinable()) return;
    stop_ = true;
    thread = std::move(thread_);
  }
  wake_.SignalAll();
  thread.join();
}

void Tailer::PollOnce() {
  TailFollowed();
  DeleteExpired();
}

void Tailer::Run() {
  auto next_retention = std::chrono::steady_clock::now();
  for (;;) {
    {
      MutexLock lock(&mu_);
      if (!stop_) wake_.WaitFor(&mu_, std::chrono::milliseconds(options_.poll_interval_ms));
      if (stop_) return;
    }
    TailFollowed();
    if (std::chrono::steady_clock::now() >= next_retention) {
      DeleteExpired();
      next_retention = std::chrono::steady_clock::now() + kRetentionInterval;
    }
  }
}

void Tailer::TailFollowed() {
  std::vector<std::string> ids;
  {
    MutexLock lock(&mu_);
    ids.assign(followed_.begin(), followed_.end());
    for (auto it = tails_.begin(); it != tails_.end();) {
      it = followed_.count(it->first) || busy_.count(it->first) ? std::next(it) : tails_.erase(it);
    }
  }
  // One run at a time: decided under the lock, its files read and written without it.
  for (const std::string& run_id : ids) {
    {
      MutexLock lock(&mu_);
      // Finished meanwhile, or someone else is on it (Finish or retention): skip this round.
      if (!followed_.count(run_id) || busy_.count(run_id)) continue;
    }
    RunTail tail;
    bool cached = false;
    Claim* claim = ClaimRun(run_id, /*urgent=*/false, &tail, &cached);
    if (!cached) {
      if (!layout_->StreamExists(run_id)) EnsureStream(run_id);
      tail = LoadTail(run_id);
      IndexTail(run_id, tail);
      if (tail.finished) {
        {
          MutexLock lock(&mu_);
          followed_.erase(run_id);
        }
        Release(run_id, nullptr);
        continue;
      }
    }
    bool changed = false;
    for (int k = 0; k < kKindCount; ++k) {
      changed |= TailStream(run_id, static_cast<StreamKind>(k), &tail, false, &claim->cut_short);
    }
    if (changed) {
      SaveTail(run_id, tail);
      IndexTail(run_id, tail);
    }
    Release(run_id, &tail);
  }
}

void Tailer::DeleteExpired() {
  if (options_.retention_days <= 0) return;
  const int64_t cutoff =
      clock_->NowMillis() - static_cast<int64_t>(options_.retention_days) * kMillisPerDay;
  for (const std::string& run_id : layout_->ListRuns()) {
    {
      MutexLock lock(&mu_);
      if (followed_.count(run_id) || busy_.count(run_id)) continue;
    }
    std::string dir = layout_->RunDir(run_id);
    struct stat st;
    if (stat(dir.c_str(), &st) != 0) continue;
    int64_t newest = MtimeMillis(st);
    if (DIR* d = opendir(dir.c_str())) {
      while (struct dirent* entry = readdir(d)) {
        if (entry->d_name[0] == '.') continue;  // ".." is the root, touched by every run
        if (fstatat(dirfd(d), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
          newest = std::max(newest, MtimeMillis(st));
        }
      }
      closedir(d);
    }
    if (newest >= cutoff) continue;
    {
      MutexLock lock(&mu_);
      if (followed_.count(run_id) || busy_.count(run_id)) continue;
      busy_[run_id] = std::make_unique<Claim>();
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec) {
      OG_LOG(kWarn, "log store: cannot delete " << dir << ": " << ec.message());
    } else {
      index_->Remove(run_id);
      OG_LOG(kInfo, "log store: deleted the logs of " << run_id << " (retention "
                                                      << options_.retention_days << " days)");
    }
    Release(run_id, nullptr);
  }
}

// ---------------------------------------------------------------------------------------------
// Files (the caller holds the run's claim, not mu_)

Tailer::RunTail Tailer::LoadTail(const std::string& run_id) {
  RunTail tail;
  std::string text;
  if (ReadSmallFile(layout_->StatePath(run_id), &text)) {
    Json state = ParseJson(text);
    if (state.is_object()) {
      if (state.contains("finished") && state["finished"].is_boolean()) {
        tail.finished = state["finished"].get<bool>();
      }
      for (int k = 0; k < kKindCount; ++k) {
        auto it = state.find(kKinds[k].state_key);
        if (it == state.end() || !it->is_object()) continue;
        StreamTail& s = tail.streams[k];
        auto num = [&](const char* key, auto* out) {
          auto f = it->find(key);
          if (f != it->end() && f->is_number_unsigned()) {  // never negative
            *out = f->template get<std::decay_t<decltype(*out)>>();
          }
        };
        num("raw_offset", &s.raw_offset);
        num("events_length", &s.events_length);
        num("last_timestamp", &s.last_timestamp);
      }
    }
  }
  for (int k = 0; k < kKindCount; ++k) {
    StreamTail& s = tail.streams[k];
    std::string path = layout_->EventsPath(run_id, static_cast<StreamKind>(k));
    struct stat st;
    uint64_t size = stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    if (size > s.events_length) {
      // Events appended after the last recorded state (the server stopped in between): they
      // are made again from the raw file, so drop them rather than duplicate them.
      if (truncate(path.c_str(), static_cast<off_t>(s.events_length)) != 0) {
        OG_LOG(kWarn, "log store: cannot truncate " << path << ": " << std::strerror(errno));
      }
    } else if (size < s.events_length) {
      // The event file lost its tail (e.g. a crash of the machine): keep what is whole.
      EventFile file = EventFile::Open(path);
      OG_LOG(kWarn, "log store: " << path << " is shorter than recorded; some events of "
                                  << run_id << " are lost");
      if (file.end() < size && truncate(path.c_str(), static_cast<off_t>(file.end())) != 0) {
        OG_LOG(kWarn, "log store: cannot truncate " << path);
      }
      s.events_length = file.end();
    }
  }
  return tail;
}

void Tailer::SaveTail(const std::string& run_id, const RunTail& tail) {
  Json state = {{"finished", tail.finished}};
  for (int k = 0; k < kKindCount; ++k) {
    const StreamTail& s = tail.streams[k];
    state[kKinds[k].state_key] = {{"raw_offset", s.raw_offset},
                                  {"events_length", s.events_length},
                                  {"last_timestamp", s.last_timestamp}};
  }
  if (!WriteFileAtomically(layout_->StatePath(run_id), DumpJson(state))) {
    OG_LOG(kWarn, "log store: cannot write the tail state of " << run_id << ": "
                                                                << std::strerror(errno));
  }
}

void Tailer::IndexTail(const std::string& run_id, const RunTail& tail) {
  for (int k = 0; k < kKindCount; ++k) {
    const StreamTail& s = tail.streams[k];
    index_->Update(run_id, static_cast<StreamKind>(k),
                   s.events_length > 0 ? s.last_timestamp : -1, s.events_length);
  }
}

bool Tailer::TailStream(const std::string& run_id, StreamKind kind, RunTail* tail, bool final,
                        const std::atomic<bool>* cut_short) {
  StreamTail& st = tail->streams[static_cast<int>(kind)];
  std::string raw_path = layout_->RawPath(run_id, kind);
  Fd raw(open(raw_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!raw.valid()) return false;
  struct stat sb;
  if (fstat(raw.get(), &sb) != 0) return false;
  uint64_t size = static_cast<uint64_t>(sb.st_size);
  bool changed = false;
  if (size < st.raw_offset) {
    OG_LOG(kWarn, "log store: " << raw_path << " shrank; continuing from its end");
    st.raw_offset = size;
    changed = true;
  }
  if (size == st.raw_offset) return changed;

  std::string events_path = layout_->EventsPath(run_id, kind);
  Fd events(open(events_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  if (!events.valid()) {
    OG_LOG(kWarn, "log store: cannot open " << events_path << ": " << std::strerror(errno));
    return changed;
  }
  // Every event read in this pass is stamped with the time of the read; a stream's timestamps
  // never go backwards (the clock may), which keeps the event files sorted.
  const int64_t ts = std::max(clock_->NowMillis(), st.last_timestamp);
  std::string out;
  // Process output is any bytes: AppendEvents sanitizes them to UTF-8 (never an error).
  auto emit = [&](std::string_view message) { AppendEvents(ts, message, &out); };
  auto emit_line = [&](std::string_view line) {
    while (line.size() > kMaxEventBytes) {
      size_t cut = PieceLength(line);
      emit(line.substr(0, cut));
      line.remove_prefix(cut);
    }
    emit(line);
  };
  uint64_t pos = st.raw_offset;  // consumed: everything before it is in `out` or on disk
  auto flush = [&]() {
    if (out.empty()) return true;
    if (!WriteFull(events.get(), out.data(), out.size())) {
      OG_LOG(kWarn, "log store: cannot write " << events_path << ": " << std::strerror(errno));
      // Leave the file as the state describes it (no half event).
      if (ftruncate(events.get(), static_cast<off_t>(st.events_length)) != 0) {
        OG_LOG(kWarn, "log store: cannot truncate " << events_path);
      }
      out.clear();
      return false;
    }
    st.events_length += out.size();
    st.raw_offset = pos;
    st.last_timestamp = ts;
    changed = true;
    out.clear();
    return true;
  };

  std::string chunk(static_cast<size_t>(std::min<uint64_t>(kRawChunkBytes, size - pos)), '\0');
  const uint64_t stop_at = final ? size : std::min(size, pos + kMaxRawBytesPerPoll);
  bool ok = true;
  while (pos < stop_at) {
    if (cut_short != nullptr && cut_short->load()) break;  // Finish takes over from here
    size_t n = static_cast<size_t>(std::min<uint64_t>(chunk.size(), size - pos));
    ssize_t got = PreadFull(raw.get(), chunk.data(), n, pos);
    if (got <= 0) break;
    std::string_view data(chunk.data(), static_cast<size_t>(got));
    const bool at_end = pos + static_cast<uint64_t>(got) >= size;
    size_t i = 0;
    while (i < data.size()) {
      const void* nl = memchr(data.data() + i, '\n', data.size() - i);
      if (nl != nullptr) {
        size_t j = static_cast<size_t>(static_cast<const char*>(nl) - data.data());
        emit_line(data.substr(i, j - i));
        i = j + 1;
        continue;
      }
      // A line without its newline yet: whole events can be cut from it already (the same
      // cuts a complete line gets); the rest waits, unless the process has ended.
      std::string_view rest = data.substr(i);
      while (rest.size() > kMaxEventBytes) {
        size_t cut = PieceLength(rest);
        emit(rest.substr(0, cut));
        rest.remove_prefix(cut);
        i += cut;
      }
      if (at_end && final && !rest.empty()) {
        emit(rest);
        i += rest.size();
      }
      break;
    }
    if (i == 0) break;  // only the start of a line is left
    pos += i;
    if (out.size() >= kEventFlushBytes && !flush()) {
      ok = false;
      break;
    }
  }
  if (ok) flush();
  return changed;
}

}  // namespace openglue::logs
