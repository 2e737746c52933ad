// LogsApi: the CloudWatch Logs operations OpenGlue serves (Logs_20140328: DescribeLogGroups,
// DescribeLogStreams, GetLogEvents, FilterLogEvents) over the event files and the stream index.
//
// Requests and responses use CloudWatch's shapes (camelCase members). The api module validates
// each request against botocore's `logs` service model first (types, lengths, ranges, enums:
// SerializationException / InvalidParameterException); the checks here are what the model cannot
// say (mutually exclusive members, tokens, known groups) plus a type guard for direct callers.
// Errors: EntityNotFound for an unknown group or stream (ResourceNotFoundException on the wire),
// InvalidInput (InvalidParameterException).
//
// Bounded per request: Describe* pages through the in-memory index (work and memory grow with
// the page, not the number of streams); GetLogEvents holds one response (<= 1 MB, 10,000
// events); FilterLogEvents examines at most 32 MiB of events per call and resumes by token.
// Every message is sanitized to UTF-8 on the way out.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "common/json.h"
#include "common/status.h"
#include "logs/layout.h"
#include "logs/stream_index.h"

namespace openglue::logs {

struct LogsApiOptions {
  int retention_days = 30;  // shown as the groups' retentionInDays (0: none)
  std::string region = "us-east-1";
  std::string account_id = "000000000000";
  int64_t groups_created_ms = 0;  // the groups' creationTime
  // Each kind's group name ("" = not served); LogStoreOptions documents them.
  std::string groups[kKindCount] = {kKinds[0].group, kKinds[1].group};
};

class LogsApi {
 public:
  // Borrows `layout` and `index`.
  LogsApi(const Layout* layout, const StreamIndex* index, LogsApiOptions options)
      : layout_(layout), index_(index), options_(std::move(options)) {}

  Result<Json> DescribeLogGroups(const Json& request) const;
  Result<Json> DescribeLogStreams(const Json& request) const;
  Result<Json> GetLogEvents(const Json& request) const;
  Result<Json> FilterLogEvents(const Json& request) const;

 private:
  std::string GroupArn(StreamKind kind) const;
  const std::string& Group(StreamKind kind) const { return options_.groups[static_cast<int>(kind)]; }
  // Which stream kind the request's group is: logGroupName or logGroupIdentifier (name or ARN).
  Result<StreamKind> RequestGroup(const Json& request) const;

  const Layout* const layout_;
  const StreamIndex* const index_;
  const LogsApiOptions options_;
};

}  // namespace openglue::logs
