// RunAuthorizer: who may call which operation.
//
// Two kinds of principal sign requests. The server's configured credentials (`credentials`,
// `access_key_id`) belong to the people and programs that run the catalog: they may do
// everything. A job run's temporary credential (granted when the run starts, revoked when it
// ends) belongs to job code, which is less trusted: it maps to its run, the run to its job, the
// job to its `Role`, and the Role to an allow-list of actions in IAM's pattern syntax ("glue:Get*",
// "logs:*"; `*` matches any run of characters, `?` one character; case-insensitive). Roles
// without a configured list get DefaultRunPolicy(). Anything else is denied.
//
// An `s3:` statement may name the resources it applies to after the action, separated by blanks,
// as IAM's Resource element does: "s3:PutObject arn:aws:s3:::lake/out/*" (the same wildcards,
// case-sensitive as ARNs are; `s3://lake/out/*` is the same resource). Without resources it
// applies to every object and bucket. The S3 API's gate (api/s3_gate.h) asks with the request's
// resource; Glue and Logs actions take no resources.
//
// Thread-safe.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"

namespace openglue::api {

// Whether `action` ("glue:GetTable") matches the IAM action pattern `pattern` ("glue:Get*").
// Case-insensitive; linear in the lengths (no backtracking blow-up).
bool ActionMatches(std::string_view pattern, std::string_view action);
// The same wildcards, case-sensitive: IAM's matching of resource ARNs.
bool ResourceMatches(std::string_view pattern, std::string_view resource);

// One allow-list entry split into its action pattern and resource patterns (empty: every
// resource). `s3://bucket/key` resources are returned as `arn:aws:s3:::bucket/key`.
struct PolicyStatement {
  std::string action;
  std::vector<std::string> resources;
};
PolicyStatement ParseStatement(std::string_view entry);
// The ARN IAM names an S3 object or bucket by: arn:aws:s3:::bucket[/key].
std::string S3ResourceArn(std::string_view bucket, std::string_view key);

// The allow-list of a run whose Role has no `role_policy`: catalog reads and writes (databases
// except DeleteDatabase, tables, table versions, partitions, partition indexes, user-defined
// functions, column statistics, connection reads), job bookmarks of its own run, workflow-run
// properties, data-quality results published as its own run and data-quality reads, and log reads. No job, trigger, crawler or workflow administration. On the object
// store: reading every object and bucket, writing and deleting objects, creating buckets; not
// deleting buckets or changing their configuration or objects' ACLs and locks.
const std::vector<std::string>& DefaultRunPolicy();

// The Role name a job's `Role` stands for. Glue takes a Role's name or its ARN: an IAM role ARN
// (arn:<partition>:iam::<account>:role/[<path>/]<name>) stands for <name>, anything else for
// itself. So a job created with the ARN iam:GetRole answers (api/identity_operations.h), as
// Airflow's GlueJobOperator does, gets the `role_policy` lines of <name>.
std::string_view RoleNameOf(std::string_view role);

// What a run credential stands for.
struct RunPrincipal {
  std::string job;
  std::string run_id;
  std::string role;
};

class RunAuthorizer {
 public:
  // `administrators`: access key ids that may do everything (the configured credentials).
  // `role_policies`: Role name -> action patterns (exact, case-sensitive Role names, as IAM).
  RunAuthorizer(std::set<std::string> administrators,
                std::map<std::string, std::vector<std::string>> role_policies);

  void AddRun(const std::string& access_key_id, RunPrincipal run);
  void RemoveRun(const std::string& access_key_id);

  // The run `access_key_id` stands for while the run is active (between AddRun and
  // RemoveRun), else nullopt.
  std::optional<RunPrincipal> FindRun(const std::string& access_key_id) const EXCLUDES(mutex_);
  // Whether `access_key_id` is one of the configured administrator credentials.
  bool IsAdministrator(const std::string& access_key_id) const {
    return administrators_.count(access_key_id) > 0;
  }

  // OK when `principal` may call `action`. An empty principal (the server runs with auth =
  // none) may do everything. Otherwise AccessDenied naming the principal and the action.
  Status Authorize(const std::string& principal, const std::string& action) const;
  // The same for an action on a resource ("s3:GetObject", "arn:aws:s3:::lake/a.csv"): a
  // statement allows it when its action matches and it names no resources or one that matches.
  Status AuthorizeResource(const std::string& principal, const std::string& action,
                           const std::string& resource) const;

  // The patterns that apply to runs of `role` (a name or an IAM role ARN, see RoleNameOf).
  const std::vector<std::string>& PolicyFor(const std::string& role) const;
  // What `principal` (a run credential) stands for and may do: nullopt for anyone else.
  struct RunPolicy {
    RunPrincipal run;
    const std::vector<std::string>* statements;
  };
  std::optional<RunPolicy> RunPolicyOf(const std::string& principal) const EXCLUDES(mutex_);
  // AuthorizeResource for a run already looked up with RunPolicyOf.
  static Status AuthorizeResourceFor(const RunPolicy& policy, const std::string& principal,
                                     const std::string& action, const std::string& resource);

 private:
  const std::set<std::string> administrators_;
  const std::map<std::string, std::vector<std::string>> role_policies_;
  mutable Mutex mutex_;
  std::map<std::string, RunPrincipal> runs_ GUARDED_BY(mutex_);
};

}  // namespace openglue::api
