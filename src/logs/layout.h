// Where a log store keeps its files, and the names it accepts. A run's folder holds:
//
//   <root>/<run_id>/stdout, stderr          raw output, written by the run's process
//   <root>/<run_id>/output.events           the streams' event files (logs/event_file.h)
//   <root>/<run_id>/error.events
//   <root>/<run_id>/tail.state              per stream: raw offset consumed, event-file length
//                                           and last timestamp; replaced atomically (rename)
//   <root>/<run_id>/created                 creation time of the stream (ms)
//   <root>/.created                         creation time of the groups (ms)
//
// The stream name is the JobRunId; the two log groups share the run folders.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace openglue::logs {

// A stream kind: which log group, which raw file, which event file.
enum class StreamKind { kOutput = 0, kError = 1 };
constexpr int kKindCount = 2;

struct KindInfo {
  const char* group;        // the CloudWatch log group name
  const char* raw_file;     // what the process writes
  const char* events_file;  // what the tailer makes of it
  const char* state_key;    // its entry in tail.state
};
inline constexpr KindInfo kKinds[kKindCount] = {
    {"/aws-glue/jobs/output", "stdout", "output.events", "output"},
    {"/aws-glue/jobs/error", "stderr", "error.events", "error"},
};
inline const KindInfo& Info(StreamKind kind) { return kKinds[static_cast<int>(kind)]; }

inline constexpr const char* kStateFile = "tail.state";
inline constexpr const char* kCreatedFile = "created";
inline constexpr const char* kRootCreatedFile = ".created";

// A stream name that is safe as a folder name and in every token: 1 to 512 bytes, no '/', ':',
// '*', NUL or newline, not starting with '.'.
bool ValidStreamName(std::string_view id);

class Layout {
 public:
  explicit Layout(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }
  std::string RunDir(const std::string& run_id) const { return root_ + "/" + run_id; }
  std::string RawPath(const std::string& run_id, StreamKind kind) const {
    return RunDir(run_id) + "/" + Info(kind).raw_file;
  }
  std::string EventsPath(const std::string& run_id, StreamKind kind) const {
    return RunDir(run_id) + "/" + Info(kind).events_file;
  }
  std::string StatePath(const std::string& run_id) const {
    return RunDir(run_id) + "/" + kStateFile;
  }

  // Whether the run's folder exists (false for an invalid name).
  bool StreamExists(const std::string& run_id) const;
  // Creates the run's folder and records its creation time `now_ms`; true if it was created
  // now, false if it existed (or cannot be made: logged).
  bool CreateRunDir(const std::string& run_id, int64_t now_ms) const;
  // Every run folder's name (unsorted). A full directory read: for startup and retention only.
  std::vector<std::string> ListRuns() const;
  // The stream's creation time (ms), from its "created" file or the folder's mtime.
  int64_t StreamCreationTime(const std::string& run_id) const;

 private:
  std::string root_;
};

}  // namespace openglue::logs
