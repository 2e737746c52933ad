// BookmarkService: job bookmark state, per job, kept in the MetadataStore.
//
// A job's bookmark is one current entry (Glue's JobBookmarkEntry: Version, Run, Attempt, RunId,
// PreviousRunId and JobBookmark, a JSON string holding an object transformation_ctx -> state
// object) plus a history: one row per update (a run's commit or a reset), each holding the state
// right after it, so the state as of a run can be addressed by its RunId.
//
// Operations (request -> response documents):
//   GetJobBookmark {JobName, RunId?}            Glue's; the current state, or the state as of a run
//   ResetJobBookmark {JobName, RunId?}          Glue's; to nothing, or rewind to the state of a run
//   OpenGlueCommitJobBookmark {JobName, RunId, JobBookmark, Reads?}
//                                               a run's commit (extension, validated here)
//   OpenGlueGetJobBookmarkHistory {JobName, MaxResults?, NextToken?}
//                                               the history, oldest first (extension)
// Glue's two are validated against the service model by the api module before they arrive; the
// extension operations are not in the model and are validated here with Glue error names.
//
// Counters: Version + 1 on every update (commit or reset); Run + 1 on every commit; Attempt =
// the committing run's Attempt; RunId = the run that last committed, PreviousRunId = the RunId
// before it. A reset keeps Run, Attempt, RunId and PreviousRunId.
//
// A commit is applied in one store transaction with its history row, and only when, read inside
// that same transaction, the run exists for the job, its effective --job-bookmark-option is
// job-bookmark-enable (else InvalidInput), it is RUNNING (else ConcurrentModification: late) and
// it has not committed before (else ConcurrentModification: duplicate). A refused request
// changes nothing. The new JobBookmark is merged into the current state: contexts it does not
// name keep their state.
//
// Who may do what (the caller is decided by the api module from the request's principal):
// a run credential only reads its own job (AccessDenied otherwise) and never resets; a commit
// must come from the credential of the committing run itself (or from anyone when the server
// runs without auth).
//
// Thread-safe: the service keeps no state of its own; every operation is one store transaction
// (writers are serialized by the store), so concurrent commits of one job apply one after another.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/json.h"
#include "common/status.h"
#include "store/metadata_store.h"

namespace openglue::bookmarks {

// What the service needs to know about a job run, read in the caller's transaction.
struct RunFacts {
  std::string job;
  std::string state;            // the JobRunState name: "RUNNING", "SUCCEEDED", ...
  int64_t attempt = 0;          // 0 for a first attempt, 1, 2, ... for retries
  std::string bookmark_option;  // the effective --job-bookmark-option, "" when not set
  double started_on = 0;        // epoch seconds
};

// The jobs the bookmarks belong to are owned by another module (jobs, beside this one); the
// server wires these two queries to it.
struct JobsView {
  // OK when the job exists, EntityNotFound (with a message) otherwise.
  std::function<Status(store::Transaction* txn, const std::string& job)> job_exists;
  // The run with this id, nullopt when there is none.
  std::function<Result<std::optional<RunFacts>>(store::Transaction* txn, const std::string& run_id)>
      find_run;
};

// Who sent a request.
struct Caller {
  enum class Kind {
    kAnonymous,      // the server runs without auth (principal "")
    kAdministrator,  // a configured credential (or any other non-run principal)
    kRun,            // a job run's credential
  };
  Kind kind = Kind::kAnonymous;
  std::string principal;  // the access key id ("" for kAnonymous)
  std::string job;        // kRun: the run's job
  std::string run_id;     // kRun: the run
};

struct BookmarkOptions {
  // The most a commit's JobBookmark string, and the merged state, may hold.
  size_t max_bookmark_bytes = 4 * 1024 * 1024;
  // The most a commit's Reads object may hold (serialized).
  size_t max_reads_bytes = 256 * 1024;
  // History rows kept per job (the oldest are dropped beyond it); a past state older than that
  // is no longer addressable. <= 0: keep every row.
  int64_t history_limit = 1000;
};

class BookmarkService {
 public:
  // Borrowed: store and clock, which must outlive the service. InvalidInput when a part is missing.
  static Result<std::unique_ptr<BookmarkService>> Make(store::MetadataStore* store,
                                                       const Clock* clock, JobsView jobs,
                                                       BookmarkOptions options = {});

  // {JobName, RunId?} -> {JobBookmarkEntry}. EntityNotFound ("Continuation for job <name> not
  // found") when the job has no bookmark (never committed, reset to nothing, or no such job);
  // with RunId, EntityNotFound when the job never had that run, else the state right after that
  // run's commit, or (a run that committed nothing) the state current when it started, which is
  // Version 0 and "{}" when nothing had been committed then. AccessDenied: a run asking for
  // another job.
  Result<Json> GetJobBookmark(const Json& request, const Caller& caller);
  // {JobName, RunId?} -> {JobBookmarkEntry}. Without RunId the state becomes empty ("{}") and
  // GetJobBookmark answers EntityNotFound until the next commit; with RunId the state becomes
  // the state as of that run (see GetJobBookmark). One history row (Action RESET). Errors:
  // EntityNotFound (no such job, or a run the job never had), AccessDenied (a run credential).
  Result<Json> ResetJobBookmark(const Json& request, const Caller& caller);
  // OpenGlueCommitJobBookmark: see the file comment. Errors: InvalidInput (malformed request,
  // JobBookmark not a JSON object string of objects, sizes over the limits, option not enable),
  // AccessDenied (not the run's own credential), EntityNotFound (no such run for the job),
  // ConcurrentModification (late or duplicate).
  Result<Json> CommitJobBookmark(const Json& request, const Caller& caller);
  // OpenGlueGetJobBookmarkHistory: {History: [...], NextToken?}, ascending Version. Each entry:
  // {Version, Run, Attempt, RunId, PreviousRunId, Action, CommittedOn, JobBookmark, Reads
  // (COMMIT), ResetToRunId (RESET with RunId)}. Errors: InvalidInput (malformed request or
  // token), EntityNotFound (no such job), AccessDenied (a run asking for another job).
  Result<Json> GetJobBookmarkHistory(const Json& request, const Caller& caller);

  // Removes the job's bookmark, its history and its run index inside `txn` (DeleteJob's own).
  static Status DeleteJobBookmarks(store::Transaction* txn, const std::string& job);

 private:
  BookmarkService(store::MetadataStore* store, const Clock* clock, JobsView jobs,
                  BookmarkOptions options)
      : store_(store), clock_(clock), jobs_(std::move(jobs)), options_(options) {}

  // The entry (wire shape, JobBookmark a string) for the state as of `run_id` of `job`: the
  // history row of that run's commit, else the last row before the run started, else Version 0
  // with "{}". EntityNotFound when the job never had that run.
  Result<Json> StateAsOfRun(store::Transaction* txn, const std::string& job,
                            const std::string& run_id);

  store::MetadataStore* const store_;
  const Clock* const clock_;
  const JobsView jobs_;
  const BookmarkOptions options_;
};

}  // namespace openglue::bookmarks
