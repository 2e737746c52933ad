// GetWorkflowRunProperties and PutWorkflowRunProperties on the wire, scoped to the workflow run
// a job run belongs to: a job run's credential reads and writes the properties of the workflow
// run it was started in (Scheduler::WorkflowRunOfJobRun: what the scheduler recorded when it
// started the run, never the run's own --WORKFLOW_RUN_ID argument), and of no other workflow run:
// AccessDeniedException, before the workflow run is looked up. Administrators (and a server
// without auth) reach every workflow run. docs/security.md, "What a job may do".
#pragma once

#include "api/authorizer.h"
#include "api/router.h"
#include "schedule/scheduler.h"

namespace openglue::api {

// Registers the two operations on `router` in place of the scheduler's own. Borrowed: both must
// outlive the router.
void RegisterWorkflowRunProperties(Router* router, schedule::Scheduler* scheduler,
                                   const RunAuthorizer* authorizer);

}  // namespace openglue::api
