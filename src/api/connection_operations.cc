#include "api/connection_operations.h"

#include <optional>
#include <set>
#include <string>

namespace openglue::api {
namespace {

bool WantsPassword(const Json& request) {
  auto it = request.find("HidePassword");
  return it == request.end() || !it->is_boolean() || !it->get<bool>();
}

// The connections the run's job lists in Connections.Connections.
Result<std::set<std::string>> JobConnections(jobs::JobService* jobs, const std::string& job) {
  OG_ASSIGN_OR_RETURN(Json answer, jobs->GetJob(Json{{"JobName", job}}));
  std::set<std::string> names;
  const Json& listed = answer["Job"].value("Connections", Json::object()).value("Connections", Json::array());
  for (const Json& name : listed)
    if (name.is_string()) names.insert(name.get<std::string>());
  return names;
}

}  // namespace

void RegisterConnectionReads(Router* router, catalog::Catalog* catalog, jobs::JobService* jobs,
                             const RunAuthorizer* authorizer) {
  // The run a principal stands for, when it is a run's credential.
  auto run_of = [authorizer](const std::string& principal) -> std::optional<RunPrincipal> {
    if (principal.empty() || authorizer->IsAdministrator(principal)) return std::nullopt;
    return authorizer->FindRun(principal);
  };
  router->RegisterGlueWithPrincipal("GetConnection", [=](const Json& request, const std::string& principal)
                                                         -> Result<Json> {
    std::optional<RunPrincipal> run = run_of(principal);
    if (run && WantsPassword(request)) {
      std::string name = request.value("Name", std::string());
      OG_ASSIGN_OR_RETURN(std::set<std::string> listed, JobConnections(jobs, run->job));
      if (!listed.count(name))
        return Status(StatusCode::kAccessDenied,
                      "User: " + principal + " (job run " + run->run_id + " of job " + run->job +
                          ") may read the password of connection " + name +
                          " only when the job lists it in Connections; call GetConnection with "
                          "HidePassword=true for its other properties");
    }
    return catalog->GetConnection(request);
  });
  router->RegisterGlueWithPrincipal("GetConnections", [=](const Json& request, const std::string& principal)
                                                          -> Result<Json> {
    std::optional<RunPrincipal> run = run_of(principal);
    OG_ASSIGN_OR_RETURN(Json answer, catalog->GetConnections(request));
    if (!run || !WantsPassword(request)) return answer;
    OG_ASSIGN_OR_RETURN(std::set<std::string> listed, JobConnections(jobs, run->job));
    for (Json& connection : answer["ConnectionList"]) {
      std::string name = connection.value("Name", std::string());
      if (listed.count(name)) continue;
      Json hidden_request{{"Name", name}, {"HidePassword", true}};
      if (request.contains("CatalogId")) hidden_request["CatalogId"] = request["CatalogId"];
      OG_ASSIGN_OR_RETURN(Json hidden, catalog->GetConnection(hidden_request));
      connection = std::move(hidden["Connection"]);
    }
    return answer;
  });
}

}  // namespace openglue::api
