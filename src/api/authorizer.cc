#include "api/authorizer.h"

#include <cctype>

#include "common/strings.h"

namespace openglue::api {
namespace {

char Lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

}  // namespace

bool ActionMatches(std::string_view pattern, std::string_view action) {
  // Greedy wildcard matching with one backtrack point (the last '*'): O(|pattern| * |action|)
  // at worst, never exponential.
  size_t p = 0, a = 0, star = std::string_view::npos, resume = 0;
  while (a < action.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || Lower(pattern[p]) == Lower(action[a]))) {
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
      // Workflow-run properties (a job started by a workflow shares state through them).
      "glue:GetWorkflowRunProperties", "glue:PutWorkflowRunProperties",
      // Logs: read.
      "logs:GetLogEvents", "logs:FilterLogEvents", "logs:DescribeLogStreams",
      "logs:DescribeLogGroups",
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

const std::vector<std::string>& RunAuthorizer::PolicyFor(const std::string& role) const {
  auto it = role_policies_.find(role);
  return it == role_policies_.end() ? DefaultRunPolicy() : it->second;
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
    if (ActionMatches(pattern, action)) return Status::OK();
  return Status(StatusCode::kAccessDenied,
                "User: " + principal + " (job run " + run.run_id + " of job " + run.job +
                    ", role '" + run.role + "') is not authorized to perform: " + action);
}

}  // namespace openglue::api
