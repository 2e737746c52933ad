#include "api/workflow_operations.h"

#include <optional>
#include <string>

namespace openglue::api {
namespace {

// OK when `principal` may reach the properties of workflow run (`request` Name, RunId) for
// `action`.
Status CheckWorkflowRunReach(schedule::Scheduler* scheduler, const RunAuthorizer* authorizer,
                             const std::string& principal, const Json& request,
                             const std::string& action) {
  if (principal.empty() || authorizer->IsAdministrator(principal)) return Status::OK();
  std::optional<RunPrincipal> run = authorizer->FindRun(principal);
  // Not a run's credential: the router's authorizer refused it already.
  if (!run)
    return Status(StatusCode::kAccessDenied,
                  "User: " + principal + " is not authorized to perform: " + action);
  std::string workflow = request.value("Name", std::string());
  std::string run_id = request.value("RunId", std::string());
  OG_ASSIGN_OR_RETURN(std::optional<schedule::WorkflowRunRef> own,
                      scheduler->WorkflowRunOfJobRun(run->job, run->run_id));
  if (own && own->workflow == workflow && own->run_id == run_id) return Status::OK();
  return Status(StatusCode::kAccessDenied,
                "User: " + principal + " (job run " + run->run_id + " of job " + run->job +
                    ") is not authorized to perform: " + action + " on workflow run " + run_id +
                    " of workflow " + workflow + ": a job run reaches only the properties of the "
                    "workflow run it was started in, and this one was started " +
                    (own ? "in workflow run " + own->run_id + " of workflow " + own->workflow
                         : std::string("outside any workflow run")));
}

}  // namespace

void RegisterWorkflowRunProperties(Router* router, schedule::Scheduler* scheduler,
                                   const RunAuthorizer* authorizer) {
  router->RegisterGlueWithPrincipal(
      "GetWorkflowRunProperties",
      [=](const Json& request, const std::string& principal) -> Result<Json> {
        OG_RETURN_NOT_OK(CheckWorkflowRunReach(scheduler, authorizer, principal, request,
                                               "glue:GetWorkflowRunProperties"));
        return scheduler->GetWorkflowRunProperties(request);
      });
  router->RegisterGlueWithPrincipal(
      "PutWorkflowRunProperties",
      [=](const Json& request, const std::string& principal) -> Result<Json> {
        OG_RETURN_NOT_OK(CheckWorkflowRunReach(scheduler, authorizer, principal, request,
                                               "glue:PutWorkflowRunProperties"));
        return scheduler->PutWorkflowRunProperties(request);
      });
}

}  // namespace openglue::api
