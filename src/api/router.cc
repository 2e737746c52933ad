#include "api/router.h"

#include <algorithm>

#include "api/query_protocol.h"
#include "common/logging.h"
#include "common/strings.h"

namespace openglue::api {

void Router::RegisterGlue(const std::string& name, Handler handler) {
  PrincipalHandler wrapped;
  if (handler)
    wrapped = [handler = std::move(handler)](const Json& request, const std::string&) {
      return handler(request);
    };
  glue_[name] = {std::move(wrapped), false};
}

void Router::RegisterGlueWithPrincipal(const std::string& name, PrincipalHandler handler) {
  glue_[name] = {std::move(handler), false};
}

void Router::RegisterExtension(const std::string& name, PrincipalHandler handler) {
  glue_[name] = {std::move(handler), true};
}

void Router::RegisterQuery(const std::string& action, QueryOperation operation) {
  query_[action] = std::move(operation);
}

std::vector<std::string> Router::ExtensionOperations() const {
  std::vector<std::string> names;
  for (const auto& [name, operation] : glue_)
    if (operation.extension) names.push_back(name);
  return names;
}

void Router::RegisterCatalog(catalog::Catalog* catalog) {
  for (const auto& [name, method] : catalog::Catalog::Operations()) {
    auto m = method;
    RegisterGlue(name, [catalog, m](const Json& request) { return (catalog->*m)(request); });
  }
  // GetTable is the hottest read: its body comes serialized, from a cache of unchanged tables.
  glue_["GetTable"].serialized = [catalog](const Json& request) {
    return catalog->GetTableResponse(request);
  };
}

void Router::RegisterJobs(jobs::JobService* jobs) {
  for (const auto& [name, method] : jobs::JobService::Operations()) {
    auto m = method;
    RegisterGlue(name, [jobs, m, op = name](const Json& request) -> Result<Json> {
      // Job names starting with "openglue:" belong to OpenGlue's own runs (the data-quality
      // runs are module runs of the job service under such names): the job API neither creates
      // such a job nor shows, starts or stops their runs; their own operations do.
      for (const char* member : {"Name", "JobName"}) {
        if (!request.contains(member) || !request[member].is_string()) continue;
        const std::string& value = request[member].get_ref<const std::string&>();
        if (value.rfind(jobs::kReservedJobPrefix, 0) != 0) continue;
        if (op == "CreateJob")
          return Status::InvalidInput("Job names starting with \"" +
                                      std::string(jobs::kReservedJobPrefix) +
                                      "\" are reserved for OpenGlue's own runs.");
        return Status::EntityNotFound("Job " + value + " not found.");
      }
      return (jobs->*m)(request);
    });
  }
}

void Router::RegisterLogs(logs::LogStore* logs) {
  log_stores_.push_back(logs);
  const std::vector<logs::LogStore*>* stores = &log_stores_;
  // Several stores serve disjoint groups: a request goes to the first that knows its group;
  // DescribeLogGroups lists the groups of all, by name.
  auto route = [stores](Result<Json> (logs::LogStore::*method)(const Json&)) {
    return [stores, method](const Json& r) -> Result<Json> {
      Result<Json> result = Status::EntityNotFound("The specified log group does not exist.");
      for (logs::LogStore* store : *stores) {
        result = (store->*method)(r);
        if (result.ok() || result.status().code() != StatusCode::kEntityNotFound ||
            result.status().message() != "The specified log group does not exist.")
          break;
      }
      return result;
    };
  };
  logs_["DescribeLogGroups"] = [stores](const Json& r) -> Result<Json> {
    if (stores->size() == 1) return stores->front()->DescribeLogGroups(r);
    Json groups = Json::array();
    for (logs::LogStore* store : *stores) {
      OG_ASSIGN_OR_RETURN(Json page, store->DescribeLogGroups(r));
      for (Json& group : page["logGroups"]) groups.push_back(std::move(group));
    }
    std::sort(groups.begin(), groups.end(), [](const Json& a, const Json& b) {
      return a.value("logGroupName", "") < b.value("logGroupName", "");
    });
    return Json{{"logGroups", std::move(groups)}};
  };
  logs_["DescribeLogStreams"] = route(&logs::LogStore::DescribeLogStreams);
  logs_["GetLogEvents"] = route(&logs::LogStore::GetLogEvents);
  logs_["FilterLogEvents"] = route(&logs::LogStore::FilterLogEvents);
}

namespace {

WireResponse LogsErrorResponse(const Status& status) {
  const char* type = "ServiceUnavailableException";
  int http_status = 500;
  switch (status.code()) {
    case StatusCode::kEntityNotFound: type = "ResourceNotFoundException"; http_status = 400; break;
    case StatusCode::kInvalidInput:
    case StatusCode::kValidation: type = "InvalidParameterException"; http_status = 400; break;
    case StatusCode::kSerialization: type = "SerializationException"; http_status = 400; break;
    case StatusCode::kAccessDenied: type = "AccessDeniedException"; http_status = 400; break;
    default: break;
  }
  Json body{{"__type", type}, {"message", status.message()}};
  return {http_status, DumpJson(body)};
}

// JSON null for a member means the member is absent (as AWS treats it): removes every
// null-valued object member, at any depth. Iterative, so a deeply nested document cannot
// exhaust the stack. Nulls inside lists are kept for the model to refuse.
void StripNullMembers(Json* document) {
  std::vector<Json*> pending{document};
  while (!pending.empty()) {
    Json* value = pending.back();
    pending.pop_back();
    if (value->is_object()) {
      for (auto it = value->begin(); it != value->end();) {
        if (it->is_null()) {
          it = value->erase(it);
        } else {
          if (it->is_structured()) pending.push_back(&*it);
          ++it;
        }
      }
    } else if (value->is_array()) {
      for (Json& element : *value) {
        if (element.is_structured()) pending.push_back(&element);
      }
    }
  }
}

// A client-supplied X-Amz-Target quoted in an error message: valid UTF-8, bounded.
std::string QuoteTarget(const std::string& target) { return TruncateUtf8(target, 256); }

}  // namespace

WireResponse Router::ErrorResponse(const Status& status) {
  Json body{{"__type", GlueErrorName(status.code())}, {"message", status.message()}};
  return {HttpStatusFor(status.code()), DumpJson(body)};
}

WireResponse Router::Handle(const std::string& target, const std::string& body,
                            const std::string& principal) const {
  static const std::string kGluePrefix = "AWSGlue.";
  static const std::string kLogsPrefix = "Logs_20140328.";
  if (StartsWith(target, kLogsPrefix)) return HandleLogs(target.substr(kLogsPrefix.size()), body, principal);
  if (!StartsWith(target, kGluePrefix))
    return ErrorResponse(Status(StatusCode::kUnknownOperation,
                                target.empty() ? "Missing X-Amz-Target header"
                                               : "Unknown target '" + QuoteTarget(target) + "'"));
  std::string operation = target.substr(kGluePrefix.size());
  auto it = glue_.find(operation);
  if (it == glue_.end()) {
    operation = QuoteTarget(operation);
    if (model_->HasOperation(operation))
      return ErrorResponse(Status(StatusCode::kUnknownOperation,
                                  "Operation " + operation + " is not implemented by OpenGlue yet "
                                  "(see docs/compatibility.md)"));
    return ErrorResponse(Status(StatusCode::kUnknownOperation, "Unknown operation " + operation));
  }
  if (authorizer_) {
    Status allowed = authorizer_(principal, "glue:" + operation);
    if (!allowed.ok()) return ErrorResponse(allowed);
  }
  Json request;
  if (Trim(body).empty()) {
    request = Json::object();
  } else {
    request = Json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (request.is_discarded())
      return ErrorResponse(Status::Serialization("The request body is not valid JSON"));
  }
  StripNullMembers(&request);
  if (it->second.extension) {
    if (!request.is_object())
      return ErrorResponse(Status::Serialization("The request body is not a JSON object"));
  } else {
    Status valid = model_->Validate(operation, &request);
    if (!valid.ok()) return ErrorResponse(valid);
  }
  try {
    if (it->second.serialized) {
      Result<std::string> body = it->second.serialized(request);
      if (!body.ok()) {
        if (body.status().code() == StatusCode::kInternal)
          OG_LOG(kError, operation << " failed: " << body.status().message());
        return ErrorResponse(body.status());
      }
      return {200, std::move(*body)};
    }
    Result<Json> result = it->second.handler(request, principal);
    if (!result.ok()) {
      if (result.status().code() == StatusCode::kInternal)
        OG_LOG(kError, operation << " failed: " << result.status().message());
      return ErrorResponse(result.status());
    }
    return {200, DumpJson(*result)};
  } catch (const std::exception& e) {
    // The exception's text stays in the server's log; the client learns only that it failed.
    OG_LOG(kError, operation << " raised: " << SanitizeUtf8(e.what()));
    return ErrorResponse(Status::Internal("An internal error occurred while handling " + operation));
  }
}

WireResponse Router::HandleLogs(const std::string& operation, const std::string& body,
                                const std::string& principal) const {
  auto it = logs_.find(operation);
  if (it == logs_.end())
    return ErrorResponse(Status(StatusCode::kUnknownOperation,
                                "Logs operation " + QuoteTarget(operation) +
                                    " is not implemented by OpenGlue"));
  if (authorizer_) {
    Status allowed = authorizer_(principal, "logs:" + operation);
    if (!allowed.ok()) return LogsErrorResponse(allowed);
  }
  Json request = Trim(body).empty() ? Json::object()
                                    : Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded() || !request.is_object())
    return LogsErrorResponse(Status::Serialization("The request body is not a JSON object"));
  StripNullMembers(&request);
  // The same model-driven validation as Glue's: a wrong type is a SerializationException, a
  // value outside the model's limits (filterPattern over 1,024 characters, limit, lengths,
  // enums) an InvalidParameterException, before the handler sees the request.
  if (logs_model_ != nullptr && logs_model_->HasOperation(operation)) {
    Status valid = logs_model_->Validate(operation, &request);
    if (!valid.ok()) return LogsErrorResponse(valid);
  }
  try {
    Result<Json> result = it->second(request);
    if (!result.ok()) return LogsErrorResponse(result.status());
    return {200, DumpJson(*result)};
  } catch (const std::exception& e) {
    OG_LOG(kError, "Logs " << operation << " raised: " << SanitizeUtf8(e.what()));
    return LogsErrorResponse(Status::Internal("An internal error occurred while handling " +
                                              operation));
  }
}

namespace {

WireResponse QueryErrorXml(const QueryError& error, const std::string& message,
                        const std::string& xmlns) {
  std::string body = "<ErrorResponse";
  if (!xmlns.empty()) body += " xmlns=\"" + XmlEscape(xmlns) + "\"";
  body += "><Error><Type>";
  body += error.http_status >= 500 ? "Receiver" : "Sender";
  body += "</Type><Code>";
  body += error.code;
  body += "</Code><Message>" + XmlEscape(message) + "</Message></Error></ErrorResponse>";
  return {error.http_status, std::move(body), "text/xml"};
}

}  // namespace

WireResponse Router::QueryErrorResponse(const Status& status, const std::string& xmlns) {
  return QueryErrorXml(QueryErrorFor(status.code()), status.message(), xmlns);
}

WireResponse Router::HandleQuery(const std::string& body, const std::string& principal) const {
  Result<QueryParams> params = ParseQueryForm(body);
  if (!params.ok()) return QueryErrorResponse(params.status());
  auto field = [&](const char* name) -> std::string {
    auto it = params->find(name);
    return it == params->end() ? "" : it->second;
  };
  std::string action = field("Action");
  if (action.empty())
    return QueryErrorXml({"MissingAction", 400}, "The request must contain the parameter Action", "");
  std::string version = field("Version");
  auto it = query_.find(action);
  if (it == query_.end() || version != it->second.version)
    return QueryErrorResponse(Status(StatusCode::kUnknownOperation,
                                     "Could not find operation " + QuoteTarget(action) +
                                         " for version " + QuoteTarget(version) +
                                         " (OpenGlue serves iam:GetRole and "
                                         "sts:GetCallerIdentity; docs/airflow.md)"));
  const QueryOperation& operation = it->second;
  if (operation.authorize && authorizer_) {
    Status allowed = authorizer_(principal, operation.service + ":" + action);
    if (!allowed.ok()) return QueryErrorResponse(allowed, operation.xmlns);
  }
  try {
    Result<std::string> result = operation.handler(*params, principal);
    if (!result.ok()) return QueryErrorResponse(result.status(), operation.xmlns);
    std::string xmlns = XmlEscape(operation.xmlns);
    return {200,
            "<" + action + "Response xmlns=\"" + xmlns + "\"><" + action + "Result>" + *result +
                "</" + action + "Result></" + action + "Response>",
            "text/xml"};
  } catch (const std::exception& e) {
    OG_LOG(kError, operation.service << ":" << action << " raised: " << SanitizeUtf8(e.what()));
    return QueryErrorResponse(Status::Internal("An internal error occurred while handling " + action),
                              operation.xmlns);
  }
}

}  // namespace openglue::api
