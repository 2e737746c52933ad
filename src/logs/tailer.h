// Tailer: turns a run's raw output files into event files, and deletes streams past retention.
//
// A run's process writes its raw stdout/stderr files itself. The tailer reads each followed
// run's new complete lines, stamps them with the time of the read (never earlier than the
// stream's previous event) and appends them to the stream's event file; a background thread
// polls every poll_interval_ms. Exactly-once across restarts: after appending it records
// (raw offset, event-file length) together in tail.state, and when it resumes a run it
// truncates the event file back to the recorded length, so events written after the last record
// are made again from the raw file, never twice.
//
// Locking: one mutex guards only the bookkeeping (which runs are followed, which are being
// worked on, their cached tail states). A poll decides under it which run to work on, marks the
// run busy, and reads and writes files without it, one run at a time; so Follow, Finish of
// another run and API reads never wait for a poll's I/O. Finish of a run that a poll is working
// on asks the poll to stop at its next 1 MiB chunk and then drains the rest itself.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/thread_annotations.h"
#include "logs/layout.h"
#include "logs/stream_index.h"

namespace openglue::logs {

struct TailerOptions {
  int retention_days = 30;     // 0 = keep forever
  int poll_interval_ms = 100;  // how often followed files are tailed
};

class Tailer {
 public:
  // Borrows all three; they must outlive the tailer.
  Tailer(const Layout* layout, StreamIndex* index, const Clock* clock, TailerOptions options)
      : layout_(layout), index_(index), clock_(clock), options_(options) {}
  ~Tailer() { Stop(); }

  // Creates the run's folder (and indexes the stream) if it does not exist yet.
  void EnsureStream(const std::string& run_id);
  // Starts following the run (idempotent, never waits for a poll); a no-op for a finished run.
  void Follow(const std::string& run_id) EXCLUDES(mu_);
  // Drains what is left (a last line without a newline becomes an event too) and stops
  // following. When it returns every byte the process wrote is an event.
  void Finish(const std::string& run_id) EXCLUDES(mu_);

  void Start() EXCLUDES(mu_);
  void Stop() EXCLUDES(mu_);
  // Tails every followed run once, then deletes the streams past retention (never a followed
  // one): one round of the background thread's work, synchronously.
  void PollOnce() EXCLUDES(mu_);

 private:
  struct StreamTail {
    uint64_t raw_offset = 0;     // bytes of the raw file turned into events
    uint64_t events_length = 0;  // length of the event file holding exactly those events
    int64_t last_timestamp = 0;
  };
  struct RunTail {
    StreamTail streams[kKindCount];
    bool finished = false;
  };
  // A run some thread is working on; the others leave its files alone.
  struct Claim {
    std::atomic<bool> cut_short{false};  // set by Finish: stop at the next chunk
  };

  // Claims `run_id` (waiting for another claim on it to end, asking it to cut short when
  // `urgent`) and hands back its cached tail state if any.
  Claim* ClaimRun(const std::string& run_id, bool urgent, RunTail* tail, bool* cached)
      EXCLUDES(mu_);
  void Release(const std::string& run_id, const RunTail* keep) EXCLUDES(mu_);

  // Reads the run's tail state and makes its event files agree with it. Unlocked (claimed).
  RunTail LoadTail(const std::string& run_id);
  void SaveTail(const std::string& run_id, const RunTail& tail);
  // Turns new complete lines of one raw file into events (with `final`, also a last line
  // without a newline, and no per-poll cap). Returns whether the state changed.
  bool TailStream(const std::string& run_id, StreamKind kind, RunTail* tail, bool final,
                  const std::atomic<bool>* cut_short);
  void IndexTail(const std::string& run_id, const RunTail& tail);

  void TailFollowed() EXCLUDES(mu_);
  void DeleteExpired() EXCLUDES(mu_);
  void Run() EXCLUDES(mu_);

  const Layout* const layout_;
  StreamIndex* const index_;
  const Clock* const clock_;
  const TailerOptions options_;

  Mutex mu_;
  CondVar wake_;      // the background thread's sleep; signalled by Stop
  CondVar released_;  // signalled when a claim ends
  std::set<std::string> followed_ GUARDED_BY(mu_);
  std::map<std::string, std::unique_ptr<Claim>> busy_ GUARDED_BY(mu_);
  std::map<std::string, RunTail> tails_ GUARDED_BY(mu_);  // cached states of followed runs
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_ GUARDED_BY(mu_);
};

}  // namespace openglue::logs
