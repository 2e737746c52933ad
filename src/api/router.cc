#include "api/router.h"

#include "api/errors.h"
#include "common/logging.h"
#include "common/strings.h"

namespace openglue::api {

void Router::RegisterGlue(const std::string& name, Handler handler) {
  glue_[name] = std::move(handler);
}

void Router::RegisterCatalog(catalog::Catalog* catalog) {
  for (const auto& [name, method] : catalog::Catalog::Operations()) {
    auto m = method;
    RegisterGlue(name, [catalog, m](const Json& request) { return (catalog->*m)(request); });
  }
}

WireResponse Router::ErrorResponse(const Status& status) {
  WireError wire = ToWireError(status.code());
  Json body{{"__type", wire.type}, {"message", status.message()}};
  return {wire.http_status, body.dump()};
}

WireResponse Router::Handle(const std::string& target, const std::string& body) const {
  static const std::string kGluePrefix = "AWSGlue.";
  if (!StartsWith(target, kGluePrefix))
    return ErrorResponse(Status(StatusCode::kUnknownOperation,
                                target.empty() ? "Missing X-Amz-Target header"
                                               : "Unknown target '" + target + "'"));
  std::string operation = target.substr(kGluePrefix.size());
  auto it = glue_.find(operation);
  if (it == glue_.end()) {
    if (model_->HasOperation(operation))
      return ErrorResponse(Status(StatusCode::kUnknownOperation,
                                  "Operation " + operation + " is not implemented by OpenGlue yet "
                                  "(see docs/compatibility.md)"));
    return ErrorResponse(Status(StatusCode::kUnknownOperation, "Unknown operation " + operation));
  }
  Json request;
  if (Trim(body).empty()) {
    request = Json::object();
  } else {
    request = Json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (request.is_discarded())
      return ErrorResponse(Status::Serialization("The request body is not valid JSON"));
  }
  Status valid = model_->Validate(operation, &request);
  if (!valid.ok()) return ErrorResponse(valid);
  try {
    Result<Json> result = it->second(request);
    if (!result.ok()) {
      if (result.status().code() == StatusCode::kInternal)
        OG_LOG(kError, operation << " failed: " << result.status().message());
      return ErrorResponse(result.status());
    }
    return {200, result->dump(-1, ' ', false, Json::error_handler_t::replace)};
  } catch (const std::exception& e) {
    OG_LOG(kError, operation << " raised: " << e.what());
    return ErrorResponse(Status::Internal(std::string("Internal error: ") + e.what()));
  }
}

}  // namespace openglue::api
