#include "common/status.h"

#include <cstdio>
#include <cstdlib>

namespace openglue {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kEntityNotFound: return "EntityNotFound";
    case StatusCode::kAlreadyExists: return "AlreadyExists";
    case StatusCode::kInvalidInput: return "InvalidInput";
    case StatusCode::kValidation: return "Validation";
    case StatusCode::kSerialization: return "Serialization";
    case StatusCode::kUnknownOperation: return "UnknownOperation";
    case StatusCode::kConcurrentModification: return "ConcurrentModification";
    case StatusCode::kConcurrentRunsExceeded: return "ConcurrentRunsExceeded";
    case StatusCode::kResourceNumberLimitExceeded: return "ResourceNumberLimitExceeded";
    case StatusCode::kOperationTimeout: return "OperationTimeout";
    case StatusCode::kAccessDenied: return "AccessDenied";
    case StatusCode::kMissingAuthenticationToken: return "MissingAuthenticationToken";
    case StatusCode::kIncompleteSignature: return "IncompleteSignature";
    case StatusCode::kInvalidSignature: return "InvalidSignature";
    case StatusCode::kUnrecognizedClient: return "UnrecognizedClient";
    case StatusCode::kEncryption: return "Encryption";
    case StatusCode::kIllegalWorkflowState: return "IllegalWorkflowState";
    case StatusCode::kCrawlerRunning: return "CrawlerRunning";
    case StatusCode::kCrawlerNotRunning: return "CrawlerNotRunning";
    case StatusCode::kCrawlerStopping: return "CrawlerStopping";
    case StatusCode::kNoSchedule: return "NoSchedule";
    case StatusCode::kSchedulerRunning: return "SchedulerRunning";
    case StatusCode::kSchedulerNotRunning: return "SchedulerNotRunning";
    case StatusCode::kInternal: return "Internal";
  }
  return "Unknown";
}

namespace {

struct WireName {
  const char* type;
  int http_status;
};

WireName ToWire(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return {"", 200};
    case StatusCode::kEntityNotFound: return {"EntityNotFoundException", 400};
    case StatusCode::kAlreadyExists: return {"AlreadyExistsException", 400};
    case StatusCode::kInvalidInput: return {"InvalidInputException", 400};
    case StatusCode::kValidation: return {"ValidationException", 400};
    case StatusCode::kSerialization: return {"SerializationException", 400};
    case StatusCode::kUnknownOperation: return {"UnknownOperationException", 400};
    case StatusCode::kConcurrentModification: return {"ConcurrentModificationException", 400};
    case StatusCode::kConcurrentRunsExceeded: return {"ConcurrentRunsExceededException", 400};
    case StatusCode::kResourceNumberLimitExceeded: return {"ResourceNumberLimitExceededException", 400};
    case StatusCode::kOperationTimeout: return {"OperationTimeoutException", 400};
    case StatusCode::kAccessDenied: return {"AccessDeniedException", 400};
    case StatusCode::kMissingAuthenticationToken: return {"MissingAuthenticationTokenException", 403};
    case StatusCode::kIncompleteSignature: return {"IncompleteSignatureException", 400};
    case StatusCode::kInvalidSignature: return {"InvalidSignatureException", 403};
    case StatusCode::kUnrecognizedClient: return {"UnrecognizedClientException", 403};
    case StatusCode::kEncryption: return {"GlueEncryptionException", 400};
    case StatusCode::kIllegalWorkflowState: return {"IllegalWorkflowStateException", 400};
    case StatusCode::kCrawlerRunning: return {"CrawlerRunningException", 400};
    case StatusCode::kCrawlerNotRunning: return {"CrawlerNotRunningException", 400};
    case StatusCode::kCrawlerStopping: return {"CrawlerStoppingException", 400};
    case StatusCode::kNoSchedule: return {"NoScheduleException", 400};
    case StatusCode::kSchedulerRunning: return {"SchedulerRunningException", 400};
    case StatusCode::kSchedulerNotRunning: return {"SchedulerNotRunningException", 400};
    case StatusCode::kInternal: return {"InternalServiceException", 500};
  }
  return {"InternalServiceException", 500};
}

}  // namespace

const char* GlueErrorName(StatusCode code) { return ToWire(code).type; }
int HttpStatusFor(StatusCode code) { return ToWire(code).http_status; }

void DieOnError(const Status& status) {
  std::fprintf(stderr, "openglue: Result::value() on an error: %s\n", status.ToString().c_str());
  std::abort();
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace openglue
