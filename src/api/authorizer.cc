#include "api/authorizer.h"

#include <cctype>

#include "common/strings.h"

namespace openglue::api {
namespace {

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool Blank(char c) { return c == ' ' || c == '\t'; }

// Greedy wildcard matching with one backtrack point (the last '*'): O(|pattern| * |text|) at
// worst, never exponential.
bool WildcardMatches(std::string_view pattern, std::string_view action, bool fold_case) {
  auto same = [fold_case](char x, char y) { return fold_case ? Lower(x) == Lower(y) : x == y; };
  size_t p = 0, a = 0, star = std::string_view::npos, resume = 0;
  while (a < action.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || same(pattern[p], action[a]))) {
      ++p;
      ++a;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = a;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      a = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace

bool ActionMatches(std::string_view pattern, std::string_view action) {
  return WildcardMatches(pattern, action, true);
}

bool ResourceMatches(std::string_view pattern, std::string_view resource) {
  return WildcardMatches(pattern, resource, false);
}

std::string S3ResourceArn(std::string_view bucket, std::string_view key) {
  std::string arn = "arn:aws:s3:::" + std::string(bucket);
  if (!key.empty()) arn += "/" + std::string(key);
  return arn;
}

PolicyStatement ParseStatement(std::string_view entry) {
  PolicyStatement statement;
  size_t i = 0;
  auto next = [&]() -> std::string_view {
    while (i < entry.size() && Blank(entry[i])) ++i;
    size_t begin = i;
    while (i < entry.size() && !Blank(entry[i])) ++i;
    return entry.substr(begin, i - begin);
  };
  statement.action = std::string(next());
  for (std::string_view resource = next(); !resource.empty(); resource = next()) {
    if (resource.substr(0, 5) == "s3://")
      statement.resources.push_back("arn:aws:s3:::" + std::string(resource.substr(5)));
    else
      statement.resources.emplace_back(resource);
  }
  return statement;
}

const std::vector<std::string>& DefaultRunPolicy() {
  static const std::vector<std::string> kPolicy = {
      // Databases: everything but DeleteDatabase (a run must not drop what others use).
      "glue:CreateDatabase", "glue:GetDatabase", "glue:GetDatabases", "glue:UpdateDatabase",
      // Tables and their versions.
      "glue:CreateTable", "glue:GetTable", "glue:GetTables", "glue:UpdateTable",
      "glue:DeleteTable", "glue:BatchDeleteTable", "glue:SearchTables", "glue:GetTableVersion",
      "glue:GetTableVersions", "glue:DeleteTableVersion", "glue:BatchDeleteTableVersion",
      // Partitions and partition indexes.
      "glue:CreatePartition", "glue:BatchCreatePartition", "glue:GetPartition",
      "glue:GetPartitions", "glue:BatchGetPartition", "glue:UpdatePartition",
      "glue:BatchUpdatePartition", "glue:DeletePartition", "glue:BatchDeletePartition",
      "glue:CreatePartitionIndex", "glue:GetPartitionIndexes", "glue:DeletePartitionIndex",
      // User-defined functions.
      "glue:CreateUserDefinedFunction", "glue:GetUserDefinedFunction",
      "glue:GetUserDefinedFunctions", "glue:UpdateUserDefinedFunction",
      "glue:DeleteUserDefinedFunction",
      // Column statistics.
      "glue:GetColumnStatisticsForTable", "glue:UpdateColumnStatisticsForTable",
      "glue:DeleteColumnStatisticsForTable", "glue:GetColumnStatisticsForPartition",
      "glue:UpdateColumnStatisticsForPartition", "glue:DeleteColumnStatisticsForPartition",
      // Connections: read only.
      "glue:GetConnection", "glue:GetConnections",
      // The run's own bookmark. The bookmark handlers check that the run asks for its own job.
      "glue:GetJobBookmark", "glue:OpenGlueGetJobBookmarkHistory",
      "glue:OpenGlueCommitJobBookmark",
      // Data quality: a run's evaluation publishes its result (recorded as the run's own: the
      // publish handler fills in or checks JobName and JobRunId) and reads rulesets and results.
      "glue:OpenGluePublishDataQualityResult", "glue:GetDataQualityResult",
      "glue:ListDataQualityResults", "glue:BatchGetDataQualityResult",
      "glue:GetDataQualityRuleset", "glue:ListDataQualityRulesets",
      // A rule recommendation run reports the ruleset it recommends (bound to its own run by the
      // handler; job runs are refused there).
      "glue:OpenGluePutDataQualityRecommendation",
      // Workflow-run properties (a job started by a workflow shares state through them).
      "glue:GetWorkflowRunProperties", "glue:PutWorkflowRunProperties",
      // Logs: read.
      "logs:GetLogEvents", "logs:FilterLogEvents", "logs:DescribeLogStreams",
      "logs:DescribeLogGroups",
      // The object store: read everything, write and delete objects, make buckets. Never a
      // job's code, whatever the policy (the gate's and the run's mount view's own rule).
      "s3:GetObject*", "s3:GetBucket*", "s3:ListBucket*", "s3:ListAllMyBuckets",
      "s3:ListMultipartUploadParts", "s3:PutObject", "s3:PutObjectTagging", "s3:DeleteObject",
      "s3:DeleteObjectTagging", "s3:AbortMultipartUpload", "s3:CreateBucket",
  };
  return kPolicy;
}

RunAuthorizer::RunAuthorizer(std::set<std::string> administrators,
                             std::map<std::string, std::vector<std::string>> role_policies)
    : administrators_(std::move(administrators)), role_policies_(std::move(role_policies)) {}

void RunAuthorizer::AddRun(const std::string& access_key_id, RunPrincipal run) {
  MutexLock lock(&mutex_);
  runs_[access_key_id] = std::move(run);
}

void RunAuthorizer::RemoveRun(const std::string& access_key_id) {
  MutexLock lock(&mutex_);
  runs_.erase(access_key_id);
}

std::optional<RunPrincipal> RunAuthorizer::FindRun(const std::string& access_key_id) const {
  MutexLock lock(&mutex_);
  auto it = runs_.find(access_key_id);
  if (it == runs_.end()) return std::nullopt;
  return it->second;
}

std::string_view RoleNameOf(std::string_view role) {
  // arn : partition : iam : (region, empty) : account : role/path/name
  if (!StartsWith(role, "arn:")) return role;
  std::vector<std::string> parts = Split(role, ':');
  if (parts.size() != 6 || parts[2] != "iam" || !parts[3].empty() || !StartsWith(parts[5], "role/"))
    return role;
  std::string_view name = role.substr(role.rfind('/') + 1);
  return name.empty() ? role : name;
}

const std::vector<std::string>& RunAuthorizer::PolicyFor(const std::string& role) const {
  auto it = role_policies_.find(std::string(RoleNameOf(role)));
  return it == role_policies_.end() ? DefaultRunPolicy() : it->second;
}

std::optional<RunAuthorizer::RunPolicy> RunAuthorizer::RunPolicyOf(const std::string& principal) const {
  std::optional<RunPrincipal> run = FindRun(principal);
  if (!run) return std::nullopt;
  const std::vector<std::string>* statements = &PolicyFor(run->role);
  return RunPolicy{std::move(*run), statements};
}

Status RunAuthorizer::AuthorizeResource(const std::string& principal, const std::string& action,
                                        const std::string& resource) const {
  if (principal.empty() || administrators_.count(principal)) return Status::OK();
  std::optional<RunPolicy> policy = RunPolicyOf(principal);
  if (!policy)
    return Status(StatusCode::kAccessDenied,
                  "User: " + principal + " is not authorized to perform: " + action + " on resource: " + resource);
  return AuthorizeResourceFor(*policy, principal, action, resource);
}

Status RunAuthorizer::AuthorizeResourceFor(const RunPolicy& policy, const std::string& principal,
                                           const std::string& action, const std::string& resource) {
  for (const std::string& entry : *policy.statements) {
    PolicyStatement statement = ParseStatement(entry);
    if (!ActionMatches(statement.action, action)) continue;
    if (statement.resources.empty()) return Status::OK();
    for (const std::string& pattern : statement.resources)
      if (ResourceMatches(pattern, resource)) return Status::OK();
  }
  const RunPrincipal& run = policy.run;
  return Status(StatusCode::kAccessDenied,
                "User: " + principal + " (job run " + run.run_id + " of job " + run.job + ", role '" +
                    run.role + "') is not authorized to perform: " + action + " on resource: " + resource);
}

Status RunAuthorizer::Authorize(const std::string& principal, const std::string& action) const {
  if (principal.empty() || administrators_.count(principal)) return Status::OK();
  RunPrincipal run;
  {
    MutexLock lock(&mutex_);
    auto it = runs_.find(principal);
    if (it == runs_.end())
      return Status(StatusCode::kAccessDenied,
                    "User: " + principal + " is not authorized to perform: " + action);
    run = it->second;
  }
  for (const std::string& pattern : PolicyFor(run.role))
    if (ActionMatches(ParseStatement(pattern).action, action)) return Status::OK();
  return Status(StatusCode::kAccessDenied,
                "User: " + principal + " (job run " + run.run_id + " of job " + run.job +
                    ", role '" + run.role + "') is not authorized to perform: " + action);
}

}  // namespace openglue::api
