// GetConnection and GetConnections on the wire, with passwords scoped to the runs that need
// them: a job run's credential reads a connection's password (HidePassword false, the
// default) only when its job lists that connection in `Connections`, as a Glue job is given
// the connections it is attached to. For any other connection GetConnection is
// AccessDeniedException and GetConnections hides that connection's password. Administrators
// (and a server without auth) read every password. docs/security.md, "What a job may do".
#pragma once

#include "api/authorizer.h"
#include "api/router.h"
#include "catalog/catalog.h"
#include "jobs/job_service.h"

namespace openglue::api {

// Registers the two operations on `router` in place of the catalog's own. Borrowed: all must
// outlive the router.
void RegisterConnectionReads(Router* router, catalog::Catalog* catalog, jobs::JobService* jobs,
                             const RunAuthorizer* authorizer);

}  // namespace openglue::api
