#include "bookmarks/bookmark_service.h"

#include <cstdio>
#include <set>
#include <utility>
#include <vector>

#include "common/strings.h"
#include "resource/paging.h"
#include "resource/request.h"
#include "resource/stored.h"

namespace openglue::bookmarks {
namespace {

// Store kinds.
constexpr std::string_view kCurrent = "job_bookmark";          // job -> current entry
constexpr std::string_view kHistory = "job_bookmark_history";  // job, version -> history entry
constexpr std::string_view kTimes = "job_bookmark_time";       // job, version -> {"t": seconds}
constexpr std::string_view kRunIndex = "job_bookmark_run";     // job, run id -> version

constexpr const char* kEnable = "job-bookmark-enable";
constexpr size_t kMaxNameBytes = 255;
constexpr int kMaxDepth = 64;
constexpr int64_t kDefaultPage = 100;
constexpr int64_t kMaxPage = 1000;

using resource::GetString;
using resource::ParseStored;

int64_t GetInt(const Json& object, const char* member) {
  if (!object.is_object()) return 0;
  auto it = object.find(member);
  if (it == object.end() || !it->is_number()) return 0;
  return it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>();
}

std::string Pad(int64_t version) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%020lld", static_cast<long long>(version));
  return buffer;
}

std::string Quote(const std::string& text) { return TruncateUtf8(SanitizeUtf8(text), 256); }

Status NoContinuation(const std::string& job) {
  return Status::EntityNotFound("Continuation for job " + Quote(job) + " not found");
}

// The nesting depth of a document, without recursion (a hostile document may be deep).
int Depth(const Json& root) {
  int deepest = 0;
  std::vector<std::pair<const Json*, int>> pending{{&root, 1}};
  while (!pending.empty()) {
    auto [value, depth] = pending.back();
    pending.pop_back();
    if (!value->is_structured()) continue;
    if (depth > deepest) deepest = depth;
    if (depth > kMaxDepth) return depth;
    for (const Json& child : *value)
      if (child.is_structured()) pending.emplace_back(&child, depth + 1);
  }
  return deepest;
}

// A JobName or RunId of a request: a non-empty string of at most 255 bytes, without the store's
// key separator.
Status CheckName(const Json& request, const char* member, bool required) {
  auto it = request.find(member);
  if (it == request.end()) {
    if (required) return Status::InvalidInput(std::string(member) + " is required");
    return Status::OK();
  }
  if (!it->is_string()) return Status::InvalidInput(std::string(member) + " must be a string");
  const std::string& value = it->get_ref<const std::string&>();
  if (value.empty() || value.size() > kMaxNameBytes)
    return Status::InvalidInput(std::string(member) + " must be 1 to 255 bytes long");
  if (value.find(store::kKeySep) != std::string::npos)
    return Status::InvalidInput(std::string(member) + " may not contain the character U+001F");
  return Status::OK();
}

Status CheckMembers(const Json& request, const std::set<std::string>& allowed,
                    const std::string& operation) {
  if (!request.is_object()) return Status::Serialization("The request body is not a JSON object");
  for (auto it = request.begin(); it != request.end(); ++it)
    if (!allowed.count(it.key()))
      return Status::InvalidInput(operation + " has no member '" + Quote(it.key()) + "'");
  return Status::OK();
}

// A run credential may only look at its own job.
Status CheckJobScope(const Caller& caller, const std::string& job, const std::string& action) {
  if (caller.kind != Caller::Kind::kRun || caller.job == job) return Status::OK();
  return Status(StatusCode::kAccessDenied,
                "User: " + Quote(caller.principal) + " (job run " + caller.run_id + " of job " +
                    Quote(caller.job) + ") is not authorized to perform: glue:" + action +
                    " on job " + Quote(job) + ": a run may only use its own job's bookmark");
}

// The wire JobBookmarkEntry of a stored entry (current or history row).
Json WireEntry(const std::string& job, const Json& stored) {
  Json entry{{"JobName", job},
             {"Version", GetInt(stored, "Version")},
             {"Run", GetInt(stored, "Run")},
             {"Attempt", GetInt(stored, "Attempt")}};
  std::string run_id = GetString(stored, "RunId");
  std::string previous = GetString(stored, "PreviousRunId");
  if (!previous.empty()) entry["PreviousRunId"] = previous;
  if (!run_id.empty()) entry["RunId"] = run_id;
  entry["JobBookmark"] = GetString(stored, "JobBookmark", "{}");
  return entry;
}

// The current entry of `job`, or nullopt.
Result<std::optional<Json>> LoadCurrent(store::Transaction* txn, const std::string& job) {
  OG_ASSIGN_OR_RETURN(auto text, txn->Get(kCurrent, job));
  if (!text) return std::optional<Json>();
  OG_ASSIGN_OR_RETURN(Json doc, ParseStored(*text, "bookmark of job " + Quote(job)));
  return std::optional<Json>(std::move(doc));
}

// Drops the oldest history rows of `job` beyond `limit` (<= 0: keeps every row).
Status PruneHistory(store::Transaction* txn, const std::string& job, int64_t limit) {
  if (limit <= 0) return Status::OK();
  OG_ASSIGN_OR_RETURN(int64_t rows, txn->Count(kTimes, store::PrefixOf({job})));
  if (rows <= limit) return Status::OK();
  store::ScanOptions scan;
  scan.prefix = store::PrefixOf({job});
  scan.limit = rows - limit;
  scan.keys_only = true;
  OG_ASSIGN_OR_RETURN(auto old, txn->Scan(kTimes, scan));
  for (const store::Row& row : old) {
    OG_RETURN_NOT_OK(txn->Delete(kTimes, row.key).status());
    OG_RETURN_NOT_OK(txn->Delete(kHistory, row.key).status());
  }
  return Status::OK();
}

}  // namespace

Result<std::unique_ptr<BookmarkService>> BookmarkService::Make(store::MetadataStore* store,
                                                               const Clock* clock, JobsView jobs,
                                                               BookmarkOptions options) {
  if (store == nullptr || clock == nullptr || !jobs.job_exists || !jobs.find_run)
    return Status::InvalidInput("BookmarkService needs a store, a clock and the jobs queries");
  return std::unique_ptr<BookmarkService>(
      new BookmarkService(store, clock, std::move(jobs), options));
}

Result<Json> BookmarkService::StateAsOfRun(store::Transaction* txn, const std::string& job,
                                           const std::string& run_id) {
  OG_ASSIGN_OR_RETURN(auto version, txn->Get(kRunIndex, store::MakeKey({job, run_id})));
  if (version) {
    OG_ASSIGN_OR_RETURN(auto row, txn->Get(kHistory, store::MakeKey({job, *version})));
    if (!row)
      return Status::EntityNotFound("The bookmark state of job " + Quote(job) + " as of run " +
                                    run_id + " is no longer kept (the history keeps the last " +
                                    std::to_string(options_.history_limit) + " updates)");
    OG_ASSIGN_OR_RETURN(Json doc, ParseStored(*row, "bookmark history of job " + Quote(job)));
    return WireEntry(job, doc);
  }
  OG_ASSIGN_OR_RETURN(std::optional<RunFacts> run, jobs_.find_run(txn, run_id));
  if (!run || run->job != job)
    return Status::EntityNotFound("Job run " + Quote(run_id) + " not found for job " + Quote(job) +
                                  ".");
  // The run committed nothing: the state current when it started (what it read).
  store::ScanOptions scan;
  scan.prefix = store::PrefixOf({job});
  OG_ASSIGN_OR_RETURN(auto times, txn->Scan(kTimes, scan));
  std::string chosen;
  for (const store::Row& row : times) {
    Json t = ParseJson(row.doc);
    if (!t.is_object() || !t.contains("t") || !t["t"].is_number()) continue;
    if (t["t"].get<double>() <= run->started_on) chosen = row.key;
  }
  if (chosen.empty()) {
    // Before every row kept: nothing had been committed then, unless older rows were dropped.
    if (!times.empty() && times.front().key != store::MakeKey({job, Pad(1)}))
      return Status::EntityNotFound("The bookmark state of job " + Quote(job) + " as of run " +
                                    run_id + " is no longer kept (the history keeps the last " +
                                    std::to_string(options_.history_limit) + " updates)");
    return Json{{"JobName", job}, {"Version", 0}, {"Run", 0}, {"Attempt", 0}, {"JobBookmark", "{}"}};
  }
  OG_ASSIGN_OR_RETURN(auto row, txn->Get(kHistory, chosen));
  if (!row) return Status::Internal("The bookmark history of job " + Quote(job) + " is incomplete.");
  OG_ASSIGN_OR_RETURN(Json doc, ParseStored(*row, "bookmark history of job " + Quote(job)));
  return WireEntry(job, doc);
}

Result<Json> BookmarkService::GetJobBookmark(const Json& request, const Caller& caller) {
  OG_RETURN_NOT_OK(CheckName(request, "JobName", true));
  OG_RETURN_NOT_OK(CheckName(request, "RunId", false));
  std::string job = GetString(request, "JobName");
  std::string run_id = GetString(request, "RunId");
  OG_RETURN_NOT_OK(CheckJobScope(caller, job, "GetJobBookmark"));
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  if (!run_id.empty()) {
    OG_RETURN_NOT_OK(jobs_.job_exists(txn.get(), job));
    OG_ASSIGN_OR_RETURN(Json entry, StateAsOfRun(txn.get(), job, run_id));
    return Json{{"JobBookmarkEntry", std::move(entry)}};
  }
  OG_ASSIGN_OR_RETURN(auto current, LoadCurrent(txn.get(), job));
  if (!current || (*current).value("Cleared", false)) return NoContinuation(job);
  return Json{{"JobBookmarkEntry", WireEntry(job, *current)}};
}

Result<Json> BookmarkService::ResetJobBookmark(const Json& request, const Caller& caller) {
  OG_RETURN_NOT_OK(CheckName(request, "JobName", true));
  OG_RETURN_NOT_OK(CheckName(request, "RunId", false));
  std::string job = GetString(request, "JobName");
  std::string run_id = GetString(request, "RunId");
  if (caller.kind == Caller::Kind::kRun)
    return Status(StatusCode::kAccessDenied,
                  "User: " + Quote(caller.principal) + " (job run " + caller.run_id + " of job " +
                      Quote(caller.job) + ") is not authorized to perform: glue:ResetJobBookmark: "
                      "only administrators reset bookmarks");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_RETURN_NOT_OK(jobs_.job_exists(txn.get(), job));
  std::string state = "{}";
  if (!run_id.empty()) {
    OG_ASSIGN_OR_RETURN(Json as_of, StateAsOfRun(txn.get(), job, run_id));
    state = GetString(as_of, "JobBookmark", "{}");
  }
  OG_ASSIGN_OR_RETURN(auto current, LoadCurrent(txn.get(), job));
  Json entry = current ? *current : Json::object();
  int64_t version = GetInt(entry, "Version") + 1;
  entry["Version"] = version;
  entry["JobBookmark"] = state;
  entry["Cleared"] = run_id.empty();
  for (const char* member : {"Run", "Attempt"})
    if (!entry.contains(member)) entry[member] = 0;
  double now = clock_->NowSeconds();
  Json history = entry;
  history.erase("Cleared");
  history["Action"] = "RESET";
  history["CommittedOn"] = now;
  if (!run_id.empty()) history["ResetToRunId"] = run_id;
  std::string key = store::MakeKey({job, Pad(version)});
  OG_RETURN_NOT_OK(txn->Put(kCurrent, job, DumpJson(entry)));
  OG_RETURN_NOT_OK(txn->Put(kHistory, key, DumpJson(history)));
  OG_RETURN_NOT_OK(txn->Put(kTimes, key, DumpJson(Json{{"t", now}})));
  OG_RETURN_NOT_OK(PruneHistory(txn.get(), job, options_.history_limit));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"JobBookmarkEntry", WireEntry(job, entry)}};
}

Result<Json> BookmarkService::CommitJobBookmark(const Json& request, const Caller& caller) {
  static const std::string kOp = "OpenGlueCommitJobBookmark";
  OG_RETURN_NOT_OK(CheckMembers(request, {"JobName", "RunId", "JobBookmark", "Reads"}, kOp));
  OG_RETURN_NOT_OK(CheckName(request, "JobName", true));
  OG_RETURN_NOT_OK(CheckName(request, "RunId", true));
  std::string job = GetString(request, "JobName");
  std::string run_id = GetString(request, "RunId");
  std::string what = "job " + Quote(job) + " run " + run_id;

  // Shape and size of the state and the read summary, before anything is read.
  auto bookmark_it = request.find("JobBookmark");
  if (bookmark_it == request.end()) return Status::InvalidInput("JobBookmark is required");
  if (!bookmark_it->is_string())
    return Status::InvalidInput("JobBookmark must be a string holding a JSON object");
  const std::string& text = bookmark_it->get_ref<const std::string&>();
  if (text.size() > options_.max_bookmark_bytes)
    return Status::InvalidInput("JobBookmark of " + what + " is " + std::to_string(text.size()) +
                                " bytes; at most " + std::to_string(options_.max_bookmark_bytes) +
                                " are accepted");
  Json contexts = ParseJson(text);
  if (!contexts.is_object())
    return Status::InvalidInput("JobBookmark of " + what +
                                " must be a string holding a JSON object {\"<transformation_ctx>\": "
                                "{...state...}, ...}");
  if (Depth(contexts) > kMaxDepth)
    return Status::InvalidInput("JobBookmark of " + what + " is nested deeper than " +
                                std::to_string(kMaxDepth) + " levels");
  for (auto it = contexts.begin(); it != contexts.end(); ++it) {
    if (it.key().empty())
      return Status::InvalidInput("JobBookmark of " + what + ": a transformation_ctx is empty");
    if (!it->is_object())
      return Status::InvalidInput("JobBookmark of " + what + ": the state of transformation_ctx '" +
                                  Quote(it.key()) + "' must be a JSON object");
  }
  Json reads = Json::object();
  if (auto it = request.find("Reads"); it != request.end()) {
    if (!it->is_object()) return Status::InvalidInput("Reads must be a JSON object");
    if (Depth(*it) > kMaxDepth)
      return Status::InvalidInput("Reads of " + what + " is nested deeper than " +
                                  std::to_string(kMaxDepth) + " levels");
    size_t size = DumpJson(*it).size();
    if (size > options_.max_reads_bytes)
      return Status::InvalidInput("Reads of " + what + " is " + std::to_string(size) +
                                  " bytes; at most " + std::to_string(options_.max_reads_bytes) +
                                  " are accepted");
    reads = *it;
  }

  // Only the run's own credential commits.
  bool own = caller.kind == Caller::Kind::kAnonymous ||
             (caller.kind == Caller::Kind::kRun && caller.run_id == run_id && caller.job == job);
  if (!own)
    return Status(StatusCode::kAccessDenied,
                  "User: " + Quote(caller.principal) + " is not authorized to perform: glue:" +
                      kOp + " for " + what + ": only the run's own credentials commit its "
                      "bookmark");

  // Decide and apply in one write transaction: the run's state is read where it is written.
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(std::optional<RunFacts> run, jobs_.find_run(txn.get(), run_id));
  if (!run || run->job != job)
    return Status::EntityNotFound("Job run " + run_id + " not found for job " + Quote(job) + ".");
  OG_RETURN_NOT_OK(jobs_.job_exists(txn.get(), job));
  if (run->bookmark_option != kEnable)
    return Status::InvalidInput(
        "Bookmark not committed for " + what + ": its --job-bookmark-option is " +
        (run->bookmark_option.empty() ? std::string("not set (job-bookmark-disable)")
                                      : "'" + Quote(run->bookmark_option) + "'") +
        "; only a run with job-bookmark-enable commits");
  if (run->state != "RUNNING")
    return Status::ConcurrentModification("Bookmark not committed for " + what +
                                          ": late commit, the run is " + run->state +
                                          ", not RUNNING");
  std::string run_key = store::MakeKey({job, run_id});
  OG_ASSIGN_OR_RETURN(auto committed, txn->Get(kRunIndex, run_key));
  if (committed)
    return Status::ConcurrentModification("Bookmark not committed for " + what +
                                          ": duplicate commit, the run already committed "
                                          "(bookmark version " + *committed + ")");

  OG_ASSIGN_OR_RETURN(auto current, LoadCurrent(txn.get(), job));
  Json entry = current ? *current : Json::object();
  Json state = Json::object();
  if (current && !entry.value("Cleared", false)) {
    state = ParseJson(GetString(entry, "JobBookmark", "{}"));
    if (!state.is_object())
      return Status::Internal("The stored bookmark of job " + Quote(job) + " cannot be read.");
  }
  for (auto it = contexts.begin(); it != contexts.end(); ++it) state[it.key()] = std::move(*it);
  std::string merged = DumpJson(state);
  if (merged.size() > options_.max_bookmark_bytes)
    return Status::InvalidInput("Bookmark not committed for " + what + ": the merged state would be " +
                                std::to_string(merged.size()) + " bytes; at most " +
                                std::to_string(options_.max_bookmark_bytes) + " are kept");
  int64_t version = GetInt(entry, "Version") + 1;
  std::string previous = GetString(entry, "RunId");
  entry = Json{{"Version", version},
               {"Run", GetInt(entry, "Run") + 1},
               {"Attempt", run->attempt},
               {"RunId", run_id},
               {"PreviousRunId", previous},
               {"JobBookmark", merged},
               {"Cleared", false}};
  double now = clock_->NowSeconds();
  Json history = entry;
  history.erase("Cleared");
  history["Action"] = "COMMIT";
  history["CommittedOn"] = now;
  history["Reads"] = std::move(reads);
  std::string key = store::MakeKey({job, Pad(version)});
  OG_RETURN_NOT_OK(txn->Put(kCurrent, job, DumpJson(entry)));
  OG_RETURN_NOT_OK(txn->Put(kHistory, key, DumpJson(history)));
  OG_RETURN_NOT_OK(txn->Put(kTimes, key, DumpJson(Json{{"t", now}})));
  OG_RETURN_NOT_OK(txn->Put(kRunIndex, run_key, Pad(version)));
  OG_RETURN_NOT_OK(PruneHistory(txn.get(), job, options_.history_limit));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"JobBookmarkEntry", WireEntry(job, entry)}};
}

Result<Json> BookmarkService::GetJobBookmarkHistory(const Json& request, const Caller& caller) {
  static const std::string kOp = "OpenGlueGetJobBookmarkHistory";
  OG_RETURN_NOT_OK(CheckMembers(request, {"JobName", "MaxResults", "NextToken"}, kOp));
  OG_RETURN_NOT_OK(CheckName(request, "JobName", true));
  std::string job = GetString(request, "JobName");
  int64_t page_size = kDefaultPage;
  if (auto it = request.find("MaxResults"); it != request.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 1 || it->get<int64_t>() > kMaxPage)
      return Status::InvalidInput("MaxResults must be an integer from 1 to " +
                                  std::to_string(kMaxPage));
    page_size = it->get<int64_t>();
  }
  if (auto it = request.find("NextToken"); it != request.end() && !it->is_string())
    return Status::InvalidInput("NextToken must be a string");
  OG_RETURN_NOT_OK(CheckJobScope(caller, job, kOp));
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_RETURN_NOT_OK(jobs_.job_exists(txn.get(), job));
  OG_ASSIGN_OR_RETURN(resource::Page page,
                      resource::ScanPage(txn.get(), kHistory, store::PrefixOf({job}), request,
                                         page_size));
  Json entries = Json::array();
  for (const store::Row& row : page.rows) {
    Json doc = ParseJson(row.doc);
    if (!doc.is_object())
      return Status::Internal("The stored bookmark history of job " + Quote(job) +
                              " cannot be read.");
    // As in JobBookmarkEntry, a run id that is not there yet is absent, not "".
    for (const char* member : {"RunId", "PreviousRunId"})
      if (doc.contains(member) && GetString(doc, member).empty()) doc.erase(member);
    entries.push_back(std::move(doc));
  }
  Json response{{"History", std::move(entries)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Status BookmarkService::DeleteJobBookmarks(store::Transaction* txn, const std::string& job) {
  if (job.find(store::kKeySep) != std::string::npos) return Status::OK();
  std::string prefix = store::PrefixOf({job});
  OG_RETURN_NOT_OK(txn->Delete(kCurrent, job).status());
  for (std::string_view kind : {kHistory, kTimes, kRunIndex})
    OG_RETURN_NOT_OK(txn->DeletePrefix(kind, prefix).status());
  return Status::OK();
}

}  // namespace openglue::bookmarks
