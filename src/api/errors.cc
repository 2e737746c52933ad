#include "api/errors.h"

namespace openglue::api {

WireError ToWireError(StatusCode code) {
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
    case StatusCode::kInternal: return {"InternalServiceException", 500};
  }
  return {"InternalServiceException", 500};
}

}  // namespace openglue::api
