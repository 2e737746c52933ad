#include "common/status.h"

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
    case StatusCode::kInternal: return "Internal";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(StatusCodeName(code_)) + ": " + message_;
}

}  // namespace openglue
