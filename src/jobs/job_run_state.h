// JobRunState: the states of a Glue job run (the JobRunState enum of the Glue service model),
// and their names on the wire. Triggers and workflows branch on these, so code compares enum
// values; only the wire and the stored documents carry the names.
#pragma once

#include <optional>
#include <string_view>

namespace openglue::jobs {

enum class JobRunState {
  kStarting,
  kRunning,
  kStopping,
  kStopped,
  kSucceeded,
  kFailed,
  kTimeout,
  kError,
  kWaiting,
  kExpired,
};

// The wire name: "STARTING", "RUNNING", ... as in the Glue service model.
std::string_view JobRunStateName(JobRunState state);
// The state named `name` (exact, upper case), or nullopt for any other text.
std::optional<JobRunState> ParseJobRunState(std::string_view name);
// STARTING, RUNNING, STOPPING and WAITING are active; every other state is final.
bool IsActive(JobRunState state);
inline bool IsFinal(JobRunState state) { return !IsActive(state); }

}  // namespace openglue::jobs
