// The job bookmark operations on the wire: Glue's GetJobBookmark and ResetJobBookmark, and the
// OpenGlue extension operations OpenGlueCommitJobBookmark and OpenGlueGetJobBookmarkHistory
// (bookmarks/bookmark_service.h has their contracts). The api module knows who signed a
// request; this file turns the principal into the bookmarks module's Caller: "" (no auth) is
// anonymous, a configured credential an administrator, an active run's credential its run.
#pragma once

#include "api/authorizer.h"
#include "api/router.h"
#include "bookmarks/bookmark_service.h"

namespace openglue::api {

// The Caller that `principal` stands for. `authorizer` may be null (every non-empty principal
// is then an administrator).
bookmarks::Caller BookmarkCaller(const RunAuthorizer* authorizer, const std::string& principal);

// The jobs module's answers to the bookmarks module's questions (jobs::JobExists and
// jobs::FindJobRun; the bookmark option is the run's effective --job-bookmark-option).
bookmarks::JobsView BookmarkJobsView();

// Registers the four operations on `router`. Borrowed: service and authorizer (may be null)
// must outlive the router.
void RegisterBookmarks(Router* router, bookmarks::BookmarkService* service,
                       const RunAuthorizer* authorizer);

// The names of the extension operations RegisterBookmarks adds (for `openglue operations`).
const std::vector<std::string>& BookmarkExtensionOperations();

}  // namespace openglue::api
