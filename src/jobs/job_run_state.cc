#include "jobs/job_run_state.h"

#include <array>
#include <utility>

namespace openglue::jobs {
namespace {

constexpr std::array<std::pair<JobRunState, std::string_view>, 10> kNames = {{
    {JobRunState::kStarting, "STARTING"},
    {JobRunState::kRunning, "RUNNING"},
    {JobRunState::kStopping, "STOPPING"},
    {JobRunState::kStopped, "STOPPED"},
    {JobRunState::kSucceeded, "SUCCEEDED"},
    {JobRunState::kFailed, "FAILED"},
    {JobRunState::kTimeout, "TIMEOUT"},
    {JobRunState::kError, "ERROR"},
    {JobRunState::kWaiting, "WAITING"},
    {JobRunState::kExpired, "EXPIRED"},
}};

}  // namespace

std::string_view JobRunStateName(JobRunState state) {
  for (const auto& [value, name] : kNames)
    if (value == state) return name;
  return "ERROR";  // unreachable: every enumerator is in the table
}

std::optional<JobRunState> ParseJobRunState(std::string_view name) {
  for (const auto& [value, text] : kNames)
    if (text == name) return value;
  return std::nullopt;
}

bool IsActive(JobRunState state) {
  switch (state) {
    case JobRunState::kStarting:
    case JobRunState::kRunning:
    case JobRunState::kStopping:
    case JobRunState::kWaiting:
      return true;
    default:
      return false;
  }
}

}  // namespace openglue::jobs
