// Tokens: GetLogEvents returns "f/<offset>" and "b/<offset>", byte offsets of event boundaries in
// the stream's event file. FilterLogEvents returns "<timestamp>:<offset>:<stream>", the merge
// position (timestamp, stream, offset) just after the last event it examined. DescribeLogStreams
// returns "n:<stream>" or "t:<lastEventTimestamp>:<stream>"; DescribeLogGroups the last group's
// name. Stream names cannot contain ':' (the CloudWatch model forbids it), so these parse back
// unambiguously.
#include "logs/logs_api.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/strings.h"
#include "logs/event_file.h"
#include "logs/filter_pattern.h"

namespace openglue::logs {
namespace {

constexpr int64_t kMaxEventsLimit = 10000;
constexpr int64_t kMaxDescribeLimit = 50;
constexpr uint64_t kFilterScanBytes = 32 << 20;  // events one FilterLogEvents call examines

// --- request members (the model has checked them on the wire; these guard direct callers) ---

Status CheckRequest(const Json& request) {
  if (request.is_object() || request.is_null()) return Status::OK();
  return Status::InvalidInput("The request must be a JSON object");
}

const Json* Member(const Json& request, const char* key) {
  if (!request.is_object()) return nullptr;
  auto it = request.find(key);
  if (it == request.end() || it->is_null()) return nullptr;
  return &*it;
}

Status GetString(const Json& request, const char* key, std::optional<std::string>* out) {
  const Json* v = Member(request, key);
  if (v == nullptr) return Status::OK();
  if (!v->is_string()) return Status::InvalidInput(std::string(key) + " must be a string");
  *out = v->get<std::string>();
  return Status::OK();
}

Status GetInt(const Json& request, const char* key, std::optional<int64_t>* out) {
  const Json* v = Member(request, key);
  if (v == nullptr) return Status::OK();
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Status::InvalidInput(std::string(key) + " is out of range");
    }
    *out = static_cast<int64_t>(u);
  } else if (v->is_number_integer()) {
    *out = v->get<int64_t>();
  } else if (v->is_number_float() && v->get<double>() == std::trunc(v->get<double>()) &&
             std::abs(v->get<double>()) < 9.0e18) {
    *out = static_cast<int64_t>(v->get<double>());
  } else {
    return Status::InvalidInput(std::string(key) + " must be an integer");
  }
  return Status::OK();
}

Status GetBool(const Json& request, const char* key, std::optional<bool>* out) {
  const Json* v = Member(request, key);
  if (v == nullptr) return Status::OK();
  if (!v->is_boolean()) return Status::InvalidInput(std::string(key) + " must be a boolean");
  *out = v->get<bool>();
  return Status::OK();
}

Status GetLimit(const Json& request, int64_t max, int64_t* out) {
  std::optional<int64_t> limit;
  OG_RETURN_NOT_OK(GetInt(request, "limit", &limit));
  if (limit && (*limit < 1 || *limit > max)) {
    return Status::InvalidInput("limit must be between 1 and " + std::to_string(max));
  }
  *out = limit.value_or(max);
  return Status::OK();
}

Status GetTime(const Json& request, const char* key, std::optional<int64_t>* out) {
  OG_RETURN_NOT_OK(GetInt(request, key, out));
  if (*out && **out < 0) return Status::InvalidInput(std::string(key) + " must not be negative");
  return Status::OK();
}

Status InvalidToken() { return Status::InvalidInput("The specified nextToken is invalid."); }
Status NoSuchGroup() { return Status::EntityNotFound("The specified log group does not exist."); }
Status NoSuchStream() { return Status::EntityNotFound("The specified log stream does not exist."); }

}  // namespace

Result<StreamKind> LogsApi::RequestGroup(const Json& request) const {
  std::optional<std::string> name, identifier;
  OG_RETURN_NOT_OK(GetString(request, "logGroupName", &name));
  OG_RETURN_NOT_OK(GetString(request, "logGroupIdentifier", &identifier));
  if (name && identifier) {
    return Status::InvalidInput("LogGroup name and LogGroup identifier are mutually exclusive");
  }
  if (!name && !identifier) {
    return Status::InvalidInput("Either logGroupName or logGroupIdentifier must be specified");
  }
  std::string group = name ? *name : *identifier;
  if (identifier && StartsWith(group, "arn:")) {
    size_t at = group.find(":log-group:");
    if (at == std::string::npos) return NoSuchGroup();
    group = group.substr(at + 11);
    if (group.size() >= 2 && group.compare(group.size() - 2, 2, ":*") == 0) {
      group.resize(group.size() - 2);
    }
  }
  for (int k = 0; k < kKindCount; ++k) {
    if (!options_.groups[k].empty() && group == options_.groups[k]) return static_cast<StreamKind>(k);
  }
  return NoSuchGroup();
}

std::string LogsApi::GroupArn(StreamKind kind) const {
  return "arn:aws:logs:" + options_.region + ":" + options_.account_id + ":log-group:" +
         Group(kind);
}

Result<Json> LogsApi::DescribeLogGroups(const Json& request) const {
  OG_RETURN_NOT_OK(CheckRequest(request));
  std::optional<std::string> prefix, pattern, token;
  OG_RETURN_NOT_OK(GetString(request, "logGroupNamePrefix", &prefix));
  OG_RETURN_NOT_OK(GetString(request, "logGroupNamePattern", &pattern));
  OG_RETURN_NOT_OK(GetString(request, "nextToken", &token));
  if (prefix && pattern) {
    return Status::InvalidInput("LogGroup name prefix and LogGroup name pattern are mutually "
                                "exclusive parameters.");
  }
  int64_t limit = 0;
  OG_RETURN_NOT_OK(GetLimit(request, kMaxDescribeLimit, &limit));

  std::vector<StreamKind> selected;
  for (StreamKind kind : {StreamKind::kError, StreamKind::kOutput}) {  // sorted by group name
    std::string name = Group(kind);
    if (name.empty()) continue;
    if (prefix && !StartsWith(name, *prefix)) continue;
    if (pattern && name.find(*pattern) == std::string::npos) continue;
    if (token && name <= *token) continue;
    selected.push_back(kind);
  }
  Json groups = Json::array();
  size_t count = 0;
  for (; count < selected.size() && static_cast<int64_t>(count) < limit; ++count) {
    StreamKind kind = selected[count];
    Json group = {{"logGroupName", Group(kind)},
                  {"creationTime", options_.groups_created_ms},
                  {"arn", GroupArn(kind) + ":*"}};
    if (!pattern) {
      if (options_.retention_days > 0) group["retentionInDays"] = options_.retention_days;
      group["metricFilterCount"] = 0;
      group["storedBytes"] = index_->StoredBytes(kind);
      group["logGroupClass"] = "STANDARD";
      group["logGroupArn"] = GroupArn(kind);
    }
    groups.push_back(std::move(group));
  }
  Json response = {{"logGroups", std::move(groups)}};
  if (count < selected.size()) response["nextToken"] = Group(selected[count - 1]);
  return response;
}

Result<Json> LogsApi::DescribeLogStreams(const Json& request) const {
  OG_RETURN_NOT_OK(CheckRequest(request));
  OG_ASSIGN_OR_RETURN(StreamKind kind, RequestGroup(request));
  std::optional<std::string> prefix, order_by, token;
  std::optional<bool> descending_opt;
  OG_RETURN_NOT_OK(GetString(request, "logStreamNamePrefix", &prefix));
  OG_RETURN_NOT_OK(GetString(request, "orderBy", &order_by));
  OG_RETURN_NOT_OK(GetString(request, "nextToken", &token));
  OG_RETURN_NOT_OK(GetBool(request, "descending", &descending_opt));
  int64_t limit = 0;
  OG_RETURN_NOT_OK(GetLimit(request, kMaxDescribeLimit, &limit));
  if (order_by && *order_by != "LastEventTime" && *order_by != "LogStreamName") {
    return Status::InvalidInput("orderBy must be LogStreamName or LastEventTime");
  }
  const bool by_time = order_by && *order_by == "LastEventTime";
  if (by_time && prefix) {
    return Status::InvalidInput("Cannot order by LastEventTime with a logStreamNamePrefix.");
  }
  const bool descending = descending_opt.value_or(false);
  const size_t page = static_cast<size_t>(limit);

  // One more than a page, to know whether there is a next one.
  std::vector<StreamIndex::Entry> entries;
  if (by_time) {
    std::optional<std::pair<int64_t, std::string>> after;
    if (token) {
      size_t colon = token->find(':', 2);
      if (!StartsWith(*token, "t:") || colon == std::string::npos) return InvalidToken();
      std::string ts = token->substr(2, colon - 2);
      int64_t last = -1;
      if (ts != "-1" && !ParseInt64(ts, &last)) return InvalidToken();
      after.emplace(last, token->substr(colon + 1));
    }
    entries = index_->PageByTime(kind, after, descending, page + 1);
  } else {
    std::optional<std::string> after;
    if (token) {
      if (!StartsWith(*token, "n:")) return InvalidToken();
      after = token->substr(2);
    }
    entries = index_->PageByName(kind, prefix.value_or(""), after, descending, page + 1);
  }
  const bool more = entries.size() > page;
  if (more) entries.resize(page);

  Json streams = Json::array();
  for (const StreamIndex::Entry& entry : entries) {
    const std::string& name = entry.name;
    EventFile file = EventFile::Open(layout_->EventsPath(name, kind));
    Json stream = {{"logStreamName", name},
                   {"creationTime", layout_->StreamCreationTime(name)},
                   {"arn", GroupArn(kind) + ":log-stream:" + name},
                   {"storedBytes", file.end()}};
    if (file.end() > 0) {
      int64_t last = file.TimestampAt(file.LastEventStart());
      stream["firstEventTimestamp"] = file.TimestampAt(0);
      stream["lastEventTimestamp"] = last;
      stream["lastIngestionTime"] = last;
    }
    streams.push_back(std::move(stream));
  }
  Json response = {{"logStreams", std::move(streams)}};
  if (more && !entries.empty()) {
    const StreamIndex::Entry& last = entries.back();
    response["nextToken"] =
        by_time ? "t:" + std::to_string(last.last_event) + ":" + last.name : "n:" + last.name;
  }
  return response;
}

Result<Json> LogsApi::GetLogEvents(const Json& request) const {
  OG_RETURN_NOT_OK(CheckRequest(request));
  OG_ASSIGN_OR_RETURN(StreamKind kind, RequestGroup(request));
  std::optional<std::string> stream, token;
  std::optional<int64_t> start_time, end_time;
  std::optional<bool> start_from_head;
  OG_RETURN_NOT_OK(GetString(request, "logStreamName", &stream));
  OG_RETURN_NOT_OK(GetString(request, "nextToken", &token));
  OG_RETURN_NOT_OK(GetTime(request, "startTime", &start_time));
  OG_RETURN_NOT_OK(GetTime(request, "endTime", &end_time));
  OG_RETURN_NOT_OK(GetBool(request, "startFromHead", &start_from_head));
  int64_t limit = 0;
  OG_RETURN_NOT_OK(GetLimit(request, kMaxEventsLimit, &limit));
  if (!stream) return Status::InvalidInput("logStreamName is required");
  if (!layout_->StreamExists(*stream)) return NoSuchStream();

  EventFile file = EventFile::Open(layout_->EventsPath(*stream, kind));
  const uint64_t lo = start_time ? file.LowerBound(*start_time) : 0;
  const uint64_t hi = std::max(lo, end_time ? file.LowerBound(*end_time) : file.end());

  bool forward = start_from_head.value_or(false);
  uint64_t at = 0;
  if (token) {
    if (token->size() < 3 || (*token)[1] != '/' || ((*token)[0] != 'f' && (*token)[0] != 'b')) {
      return InvalidToken();
    }
    int64_t offset = 0;
    if (!ParseInt64(std::string_view(*token).substr(2), &offset)) return InvalidToken();
    // An offset past the end can only be stale (the events after it were dropped): clamp it.
    at = std::min<uint64_t>(static_cast<uint64_t>(offset), file.end());
    if (!file.IsBoundary(at)) return InvalidToken();
    forward = (*token)[0] == 'f';
  }

  std::vector<Event> events;
  std::string next_forward, next_backward;
  if (forward) {
    uint64_t from = token ? std::max(at, lo) : lo;
    events = ReadForward(file, from, hi, static_cast<size_t>(limit), kMaxResponseBytes);
    if (events.empty()) {
      // At the end: the same token again, which is how clients know to stop.
      next_forward = token ? *token : "f/" + std::to_string(from);
      next_backward = "b/" + std::to_string(token ? at : from);
    }
  } else {
    uint64_t to = token ? std::min(at, hi) : hi;
    events = ReadBackward(file, lo, std::max(lo, to), static_cast<size_t>(limit),
                          kMaxResponseBytes);
    if (events.empty()) {
      next_backward = token ? *token : "b/" + std::to_string(to);
      next_forward = "f/" + std::to_string(token ? at : to);
    }
  }
  if (!events.empty()) {
    next_forward = "f/" + std::to_string(events.back().next);
    next_backward = "b/" + std::to_string(events.front().offset);
  }
  Json list = Json::array();
  for (Event& ev : events) {
    list.push_back({{"timestamp", ev.timestamp},
                    {"message", std::move(ev.message)},
                    {"ingestionTime", ev.timestamp}});
  }
  return Json{{"events", std::move(list)},
              {"nextForwardToken", next_forward},
              {"nextBackwardToken", next_backward}};
}

Result<Json> LogsApi::FilterLogEvents(const Json& request) const {
  OG_RETURN_NOT_OK(CheckRequest(request));
  OG_ASSIGN_OR_RETURN(StreamKind kind, RequestGroup(request));
  std::optional<std::string> prefix, pattern_text, token;
  std::optional<int64_t> start_time, end_time;
  OG_RETURN_NOT_OK(GetString(request, "logStreamNamePrefix", &prefix));
  OG_RETURN_NOT_OK(GetString(request, "filterPattern", &pattern_text));
  OG_RETURN_NOT_OK(GetString(request, "nextToken", &token));
  OG_RETURN_NOT_OK(GetTime(request, "startTime", &start_time));
  OG_RETURN_NOT_OK(GetTime(request, "endTime", &end_time));
  int64_t limit = 0;
  OG_RETURN_NOT_OK(GetLimit(request, kMaxEventsLimit, &limit));
  std::optional<std::set<std::string>> names;
  if (const Json* list = Member(request, "logStreamNames")) {
    if (!list->is_array() || list->empty() || list->size() > 100) {
      return Status::InvalidInput("logStreamNames must be a list of 1 to 100 stream names");
    }
    names.emplace();
    for (const Json& name : *list) {
      if (!name.is_string()) return Status::InvalidInput("logStreamNames must hold strings");
      names->insert(name.get<std::string>());
    }
  }
  if (names && prefix) {
    return Status::InvalidInput(
        "logStreamNames and logStreamNamePrefix are mutually exclusive parameters.");
  }
  // Parsed (and its length checked) before any stream is touched.
  OG_ASSIGN_OR_RETURN(FilterPattern pattern, FilterPattern::Parse(pattern_text.value_or("")));

  // The resume position: the (timestamp, stream, offset) just after the last event examined.
  bool resume = false;
  int64_t cursor_ts = 0;
  int64_t cursor_next = 0;
  std::string cursor_stream;
  if (token) {
    size_t a = token->find(':');
    size_t b = a == std::string::npos ? a : token->find(':', a + 1);
    if (b == std::string::npos || !ParseInt64(std::string_view(*token).substr(0, a), &cursor_ts) ||
        !ParseInt64(std::string_view(*token).substr(a + 1, b - a - 1), &cursor_next)) {
      return InvalidToken();
    }
    cursor_stream = token->substr(b + 1);
    if (!ValidStreamName(cursor_stream)) return InvalidToken();
    resume = true;
  }

  struct Source {
    std::string name;
    EventFile file;
    std::unique_ptr<ForwardReader> reader;
    EventView current;
    bool done = true;
  };
  std::vector<std::string> candidates;
  if (names) {
    for (const std::string& name : *names) {  // sorted
      if (layout_->StreamExists(name)) candidates.push_back(name);
    }
  } else {
    candidates = index_->Names(prefix.value_or(""), std::numeric_limits<size_t>::max());
  }
  std::vector<Source> sources;
  sources.reserve(candidates.size());
  for (std::string& name : candidates) {
    Source source;
    source.name = std::move(name);
    source.file = EventFile::Open(layout_->EventsPath(source.name, kind));
    sources.push_back(std::move(source));
  }
  for (Source& source : sources) {
    const EventFile& file = source.file;
    if (file.end() == 0) continue;
    uint64_t from = start_time ? file.LowerBound(*start_time) : 0;
    // endTime is inclusive here (unlike GetLogEvents).
    uint64_t to = end_time && *end_time < std::numeric_limits<int64_t>::max()
                      ? file.LowerBound(*end_time + 1)
                      : file.end();
    if (resume) {
      uint64_t after;
      if (source.name < cursor_stream) {
        after = file.LowerBound(cursor_ts + 1);
      } else if (source.name > cursor_stream) {
        after = file.LowerBound(cursor_ts);
      } else {
        after = std::min<uint64_t>(static_cast<uint64_t>(cursor_next), file.end());
        if (!file.IsBoundary(after)) return InvalidToken();
      }
      from = std::max(from, after);
    }
    if (from >= to) continue;
    source.reader = std::make_unique<ForwardReader>(&file, from, to, 16 * 1024);
    source.done = !source.reader->Next(&source.current);
  }

  // Merge by (timestamp, stream name, offset); sources are sorted by name.
  auto later = [&](size_t a, size_t b) {
    const EventView& x = sources[a].current;
    const EventView& y = sources[b].current;
    return std::tie(x.timestamp, a, x.offset) > std::tie(y.timestamp, b, y.offset);
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(later)> heap(later);
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!sources[i].done) heap.push(i);
  }
  Json events = Json::array();
  size_t count = 0;
  size_t bytes = 0;
  uint64_t scanned = 0;
  std::string last_position;
  while (!heap.empty()) {
    size_t i = heap.top();
    Source& source = sources[i];
    const EventView& ev = source.current;
    const bool match = pattern.Matches(ev.message);
    if (match && !Fits(count, bytes, ev.message.size(), kMaxResponseBytes)) break;
    heap.pop();
    if (match) {
      events.push_back({{"logStreamName", source.name},
                        {"timestamp", ev.timestamp},
                        {"message", SanitizeUtf8(ev.message)},
                        {"ingestionTime", ev.timestamp},
                        {"eventId", source.name + ":" + std::to_string(ev.offset)}});
      ++count;
      bytes += ev.message.size() + kEventOverheadBytes;
    }
    scanned += ev.next - ev.offset;
    last_position =
        std::to_string(ev.timestamp) + ":" + std::to_string(ev.next) + ":" + source.name;
    if (source.reader->Next(&source.current)) {
      heap.push(i);
    } else {
      source.done = true;
    }
    if (static_cast<int64_t>(count) >= limit || scanned >= kFilterScanBytes) break;
  }
  Json searched = Json::array();
  for (const Source& source : sources) {
    searched.push_back({{"logStreamName", source.name}, {"searchedCompletely", source.done}});
  }
  Json response = {{"events", std::move(events)}, {"searchedLogStreams", std::move(searched)}};
  if (!heap.empty()) response["nextToken"] = last_position;
  return response;
}

}  // namespace openglue::logs
