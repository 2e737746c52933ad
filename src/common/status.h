// Status and Result<T>: the error currency of OpenGlue.
//
// Every fallible function returns a Status or a Result<T>. The codes map one-to-one onto the
// error names of the AWS Glue service model (the api module owns that table), so a Status can
// travel from the store up to the HTTP response without translation in between.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace openglue {

enum class StatusCode {
  kOk = 0,
  kEntityNotFound,
  kAlreadyExists,
  kInvalidInput,
  kValidation,             // a member violates the service model's constraints
  kSerialization,          // the request body is not the JSON the model describes
  kUnknownOperation,
  kConcurrentModification,
  kConcurrentRunsExceeded,
  kResourceNumberLimitExceeded,
  kOperationTimeout,
  kAccessDenied,
  kMissingAuthenticationToken,
  kIncompleteSignature,
  kInvalidSignature,
  kUnrecognizedClient,
  kEncryption,             // a stored secret cannot be sealed or opened (GlueEncryptionException)
  kIllegalWorkflowState,   // a workflow run is not in a state that allows the call
  kCrawlerRunning,         // the crawler is running (CrawlerRunningException)
  kCrawlerNotRunning,      // StopCrawler of a crawler that is not running
  kCrawlerStopping,        // StopCrawler of a crawler that is already stopping
  kNoSchedule,             // StartCrawlerSchedule of a crawler without a schedule
  kSchedulerRunning,       // StartCrawlerSchedule of a schedule already SCHEDULED
  kSchedulerNotRunning,    // StopCrawlerSchedule of a schedule that is not
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status EntityNotFound(std::string m) { return {StatusCode::kEntityNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status InvalidInput(std::string m) { return {StatusCode::kInvalidInput, std::move(m)}; }
  static Status Validation(std::string m) { return {StatusCode::kValidation, std::move(m)}; }
  static Status Serialization(std::string m) { return {StatusCode::kSerialization, std::move(m)}; }
  static Status ConcurrentModification(std::string m) {
    return {StatusCode::kConcurrentModification, std::move(m)};
  }
  static Status ResourceNumberLimitExceeded(std::string m) {
    return {StatusCode::kResourceNumberLimitExceeded, std::move(m)};
  }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Result<T> holds either a value or a non-OK Status.
[[noreturn]] void DieOnError(const Status& status);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design, as in Arrow
  Result(Status status) : status_(std::move(status)) {
    if (status_.ok()) status_ = Status::Internal("Result constructed from an OK status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  // The value. Calling these on an error is a bug in the caller, never something a client can
  // cause: it aborts with the status (as Arrow's ValueOrDie does) instead of being undefined.
  T& value() & { return CheckedValue(); }
  const T& value() const& { return CheckedValue(); }
  T&& value() && { return std::move(CheckedValue()); }
  T* operator->() { return &CheckedValue(); }
  const T* operator->() const { return &CheckedValue(); }
  T& operator*() & { return CheckedValue(); }
  const T& operator*() const& { return CheckedValue(); }

 private:
  T& CheckedValue() {
    if (!value_.has_value()) DieOnError(status_);
    return *value_;
  }
  const T& CheckedValue() const {
    if (!value_.has_value()) DieOnError(status_);
    return *value_;
  }

  Status status_;
  std::optional<T> value_;
};

// The code's short name, e.g. "EntityNotFound".
const char* StatusCodeName(StatusCode code);

// The one table from a status code to the wire: Glue's error name (`__type`, e.g.
// "EntityNotFoundException") and the HTTP status AWS answers with. Every module that reports
// an error by name (the HTTP front end, batch operations' per-item ErrorDetail, job-run stops)
// reads it here.
const char* GlueErrorName(StatusCode code);
int HttpStatusFor(StatusCode code);

// Prints `status` and aborts. For Result::value() on an error, a programming error.
[[noreturn]] void DieOnError(const Status& status);

}  // namespace openglue

#define OG_CONCAT_INNER(a, b) a##b
#define OG_CONCAT(a, b) OG_CONCAT_INNER(a, b)

#define OG_RETURN_NOT_OK(expr)                        \
  do {                                             \
    ::openglue::Status _og_status = (expr);        \
    if (!_og_status.ok()) return _og_status;       \
  } while (false)

#define OG_ASSIGN_OR_RETURN_IMPL(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                             \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#define OG_ASSIGN_OR_RETURN(lhs, rexpr) \
  OG_ASSIGN_OR_RETURN_IMPL(OG_CONCAT(_og_result_, __LINE__), lhs, rexpr)
