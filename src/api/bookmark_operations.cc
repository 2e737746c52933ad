#include "api/bookmark_operations.h"

#include <optional>

#include "jobs/job_service.h"

namespace openglue::api {

bookmarks::JobsView BookmarkJobsView() {
  bookmarks::JobsView view;
  view.job_exists = [](store::Transaction* txn, const std::string& job) {
    return jobs::JobExists(txn, {"job", job});
  };
  view.find_run = [](store::Transaction* txn, const std::string& run_id)
      -> Result<std::optional<bookmarks::RunFacts>> {
    OG_ASSIGN_OR_RETURN(std::optional<jobs::JobRunFacts> run, jobs::FindJobRun(txn, run_id));
    if (!run) return std::optional<bookmarks::RunFacts>();
    bookmarks::RunFacts facts{run->job, run->state, run->attempt, "", run->started_on};
    auto option = run->arguments.find("--job-bookmark-option");
    if (option != run->arguments.end() && option->is_string())
      facts.bookmark_option = option->get<std::string>();
    return std::optional<bookmarks::RunFacts>(std::move(facts));
  };
  return view;
}

bookmarks::Caller BookmarkCaller(const RunAuthorizer* authorizer, const std::string& principal) {
  bookmarks::Caller caller;
  caller.principal = principal;
  if (principal.empty()) {
    caller.kind = bookmarks::Caller::Kind::kAnonymous;
    return caller;
  }
  caller.kind = bookmarks::Caller::Kind::kAdministrator;
  if (authorizer == nullptr || authorizer->IsAdministrator(principal)) return caller;
  if (std::optional<RunPrincipal> run = authorizer->FindRun(principal)) {
    caller.kind = bookmarks::Caller::Kind::kRun;
    caller.job = run->job;
    caller.run_id = run->run_id;
  }
  return caller;
}

const std::vector<std::string>& BookmarkExtensionOperations() {
  static const std::vector<std::string> kNames = {"OpenGlueCommitJobBookmark",
                                                  "OpenGlueGetJobBookmarkHistory"};
  return kNames;
}

void RegisterBookmarks(Router* router, bookmarks::BookmarkService* service,
                       const RunAuthorizer* authorizer) {
  using bookmarks::BookmarkService;
  auto bind = [service, authorizer](Result<Json> (BookmarkService::*method)(
                  const Json&, const bookmarks::Caller&)) {
    return [service, authorizer, method](const Json& request, const std::string& principal) {
      return (service->*method)(request, BookmarkCaller(authorizer, principal));
    };
  };
  router->RegisterGlueWithPrincipal("GetJobBookmark", bind(&BookmarkService::GetJobBookmark));
  router->RegisterGlueWithPrincipal("ResetJobBookmark", bind(&BookmarkService::ResetJobBookmark));
  router->RegisterExtension("OpenGlueCommitJobBookmark",
                            bind(&BookmarkService::CommitJobBookmark));
  router->RegisterExtension("OpenGlueGetJobBookmarkHistory",
                            bind(&BookmarkService::GetJobBookmarkHistory));
}

}  // namespace openglue::api
