// IAM's GetRole and STS's GetCallerIdentity, over the AWS query protocol (Router::RegisterQuery):
// what clients built on boto3 ask before they call Glue. Apache Airflow's GlueJobOperator turns
// `iam_role_name` into the job's Role ARN with iam:GetRole, and its tag updates learn the account
// with sts:GetCallerIdentity (docs/airflow.md).
//
// OpenGlue has no IAM: a Role is a name (docs/security.md). Every valid role name is a Role,
// whose runs may do what its `role_policy` lines allow, or the default run policy. GetRole
// answers for each with arn:aws:iam::<account>:role/<name>, and a job whose `Role` is that ARN
// has that Role (RoleNameOf, api/authorizer.h). GetCallerIdentity names the configured
// credentials as the account's root user and a run's credential as its Role's assumed-role
// session, the run id.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "api/authorizer.h"
#include "api/router.h"

namespace openglue::api {

struct IdentityOptions {
  std::string account_id = "000000000000";
  // Every Role's CreateDate (milliseconds since the epoch): when the server started.
  int64_t created_millis = 0;
  // The Role names with `role_policy` lines (GetRole's Description says which policy applies).
  std::set<std::string> configured_roles;
  // Tells a run's credential from an administrator's; may be null (every caller is root).
  const RunAuthorizer* authorizer = nullptr;
};

// Registers iam:GetRole and sts:GetCallerIdentity on `router`. GetRole is authorized as
// "iam:GetRole" (administrators only, under the default run policy); GetCallerIdentity needs no
// permission, as in AWS. `options.authorizer` is borrowed and must outlive the router.
void RegisterIdentity(Router* router, IdentityOptions options);

}  // namespace openglue::api
