// BookmarkService over a real SQLite store with a fake clock and fake jobs: counters, the merge
// of contexts, reset and rewind, history, refusals that change nothing, DeleteJob's cleanup and
// persistence across a reopen of the store.
#include "bookmarks/bookmark_service.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <set>

#include "store/sqlite_store.h"

namespace openglue::bookmarks {
namespace {

constexpr const char* kEnable = "job-bookmark-enable";

class BookmarkServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-bookmarks-XXXXXX";
    dir_ = mkdtemp(pattern);
    Open();
    jobs_.insert("orders");
    jobs_.insert("other");
  }
  void TearDown() override {
    service_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Open() {
    service_.reset();
    store_.reset();
    auto store = store::SqliteStore::Make(dir_ + "/catalog.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    JobsView view;
    view.job_exists = [this](store::Transaction*, const std::string& job) -> Status {
      if (jobs_.count(job)) return Status::OK();
      return Status::EntityNotFound("Job " + job + " not found.");
    };
    view.find_run = [this](store::Transaction*, const std::string& run_id)
        -> Result<std::optional<RunFacts>> {
      auto it = runs_.find(run_id);
      if (it == runs_.end()) return std::optional<RunFacts>();
      return std::optional<RunFacts>(it->second);
    };
    BookmarkOptions options;
    options.history_limit = history_limit_;
    auto service = BookmarkService::Make(store_.get(), &clock_, view, options);
    ASSERT_TRUE(service.ok());
    service_ = std::move(*service);
  }

  // A RUNNING run of `job` started now.
  void AddRun(const std::string& id, const std::string& job = "orders", int64_t attempt = 0,
              const std::string& option = kEnable) {
    runs_[id] = RunFacts{job, "RUNNING", attempt, option, clock_.NowSeconds()};
    clock_.Advance(1000);
  }

  Result<Json> Commit(const std::string& run_id, const Json& contexts,
                      const std::string& job = "orders", Json reads = Json::object()) {
    Json request{{"JobName", job}, {"RunId", run_id}, {"JobBookmark", DumpJson(contexts)}};
    if (!reads.empty()) request["Reads"] = reads;
    Result<Json> result = service_->CommitJobBookmark(request, Caller{});
    clock_.Advance(1000);
    return result;
  }

  Result<Json> Get(const std::string& job = "orders", const std::string& run_id = "") {
    Json request{{"JobName", job}};
    if (!run_id.empty()) request["RunId"] = run_id;
    return service_->GetJobBookmark(request, Caller{});
  }

  Json State(const Result<Json>& response) {
    return ParseJson((*response)["JobBookmarkEntry"]["JobBookmark"].get<std::string>());
  }

  Json History(const std::string& job = "orders") {
    auto history = service_->GetJobBookmarkHistory(Json{{"JobName", job}}, Caller{});
    EXPECT_TRUE(history.ok()) << history.status().ToString();
    return history.ok() ? (*history)["History"] : Json::array();
  }

  std::string dir_;
  FakeClock clock_{1700000000000};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<BookmarkService> service_;
  std::set<std::string> jobs_;
  std::map<std::string, RunFacts> runs_;
  int64_t history_limit_ = 1000;
};

TEST_F(BookmarkServiceTest, NoBookmarkIsContinuationNotFound) {
  auto missing = Get();
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kEntityNotFound);
  EXPECT_EQ(missing.status().message(), "Continuation for job orders not found");
  auto unknown = Get("nosuchjob");
  EXPECT_EQ(unknown.status().code(), StatusCode::kEntityNotFound);
}

TEST_F(BookmarkServiceTest, CountersMoveAsGlueDocuments) {
  AddRun("jr_1");
  auto first = Commit("jr_1", {{"src", {{"type", "s3"}, {"high", 1}}}});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Json entry = (*first)["JobBookmarkEntry"];
  EXPECT_EQ(entry["JobName"], "orders");
  EXPECT_EQ(entry["Version"], 1);
  EXPECT_EQ(entry["Run"], 1);
  EXPECT_EQ(entry["Attempt"], 0);
  EXPECT_EQ(entry["RunId"], "jr_1");
  EXPECT_FALSE(entry.contains("PreviousRunId"));

  AddRun("jr_2", "orders", /*attempt=*/2);
  auto second = Commit("jr_2", {{"src", {{"type", "s3"}, {"high", 2}}}});
  ASSERT_TRUE(second.ok());
  entry = (*second)["JobBookmarkEntry"];
  EXPECT_EQ(entry["Version"], 2);
  EXPECT_EQ(entry["Run"], 2);
  EXPECT_EQ(entry["Attempt"], 2);
  EXPECT_EQ(entry["RunId"], "jr_2");
  EXPECT_EQ(entry["PreviousRunId"], "jr_1");

  // A reset moves only the version; the next commit continues from it.
  auto reset = service_->ResetJobBookmark(Json{{"JobName", "orders"}}, Caller{});
  ASSERT_TRUE(reset.ok());
  EXPECT_EQ((*reset)["JobBookmarkEntry"]["Version"], 3);
  EXPECT_EQ((*reset)["JobBookmarkEntry"]["Run"], 2);
  EXPECT_EQ((*reset)["JobBookmarkEntry"]["JobBookmark"], "{}");
  AddRun("jr_3");
  auto third = Commit("jr_3", {{"src", {{"type", "s3"}, {"high", 3}}}});
  ASSERT_TRUE(third.ok());
  entry = (*third)["JobBookmarkEntry"];
  EXPECT_EQ(entry["Version"], 4);
  EXPECT_EQ(entry["Run"], 3);
  EXPECT_EQ(entry["PreviousRunId"], "jr_2");
  EXPECT_EQ(State(third), Json::parse(R"({"src": {"type": "s3", "high": 3}})"));
}

TEST_F(BookmarkServiceTest, CommitMergesContexts) {
  AddRun("jr_1");
  ASSERT_TRUE(Commit("jr_1", {{"a", {{"high", 1}}}, {"b", {{"high", 10}}}}).ok());
  AddRun("jr_2");
  ASSERT_TRUE(Commit("jr_2", {{"a", {{"high", 2}}}}).ok());
  auto current = Get();
  ASSERT_TRUE(current.ok());
  // b keeps its state; a is replaced, not merged member by member.
  EXPECT_EQ(State(current), Json::parse(R"({"a": {"high": 2}, "b": {"high": 10}})"));
  AddRun("jr_3");
  ASSERT_TRUE(Commit("jr_3", {{"c", {{"x", true}}}}).ok());
  EXPECT_EQ(State(Get()).size(), 3u);
}

TEST_F(BookmarkServiceTest, StateAsOfRunAndRewind) {
  AddRun("jr_0");  // started before any commit, committed nothing
  AddRun("jr_1");
  ASSERT_TRUE(Commit("jr_1", {{"a", {{"high", 1}}}}).ok());
  AddRun("jr_p");  // a pause run: committed nothing, read the state after jr_1
  AddRun("jr_2");
  ASSERT_TRUE(Commit("jr_2", {{"a", {{"high", 2}}}}).ok());

  EXPECT_EQ(State(Get("orders", "jr_1")), Json::parse(R"({"a": {"high": 1}})"));
  EXPECT_EQ(State(Get("orders", "jr_2")), Json::parse(R"({"a": {"high": 2}})"));
  EXPECT_EQ(State(Get("orders", "jr_p")), Json::parse(R"({"a": {"high": 1}})"));
  auto before = Get("orders", "jr_0");
  ASSERT_TRUE(before.ok());
  EXPECT_EQ((*before)["JobBookmarkEntry"]["Version"], 0);
  EXPECT_EQ(State(before), Json::object());
  auto unknown = Get("orders", "jr_nope");
  EXPECT_EQ(unknown.status().code(), StatusCode::kEntityNotFound);
  AddRun("jr_x", "other");
  EXPECT_EQ(Get("orders", "jr_x").status().code(), StatusCode::kEntityNotFound);

  // Rewind to jr_1: the state as of it, one history row naming it.
  auto rewound = service_->ResetJobBookmark(Json{{"JobName", "orders"}, {"RunId", "jr_1"}}, Caller{});
  ASSERT_TRUE(rewound.ok()) << rewound.status().ToString();
  EXPECT_EQ((*rewound)["JobBookmarkEntry"]["Version"], 3);
  EXPECT_EQ(State(Get()), Json::parse(R"({"a": {"high": 1}})"));
  Json history = History();
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[2]["Action"], "RESET");
  EXPECT_EQ(history[2]["ResetToRunId"], "jr_1");

  // Reset to nothing: GetJobBookmark has no continuation; the history keeps the row.
  ASSERT_TRUE(service_->ResetJobBookmark(Json{{"JobName", "orders"}}, Caller{}).ok());
  EXPECT_EQ(Get().status().code(), StatusCode::kEntityNotFound);
  EXPECT_EQ(History().size(), 4u);
  EXPECT_EQ(service_->ResetJobBookmark(Json{{"JobName", "nosuch"}}, Caller{}).status().code(),
            StatusCode::kEntityNotFound);
  EXPECT_EQ(service_->ResetJobBookmark(Json{{"JobName", "orders"}, {"RunId", "jr_nope"}}, Caller{})
                .status().code(),
            StatusCode::kEntityNotFound);
}

TEST_F(BookmarkServiceTest, HistoryIsOrderedAndPaged) {
  for (int i = 1; i <= 5; ++i) {
    std::string id = "jr_" + std::to_string(i);
    AddRun(id);
    ASSERT_TRUE(Commit(id, {{"a", {{"high", i}}}}, "orders",
                       Json{{"a", {{"type", "s3"}, {"objects", i}}}}).ok());
  }
  Json all = History();
  ASSERT_EQ(all.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(all[i]["Version"], i + 1);
    EXPECT_EQ(all[i]["Action"], "COMMIT");
    EXPECT_EQ(all[i]["RunId"], "jr_" + std::to_string(i + 1));
    if (i == 0) EXPECT_FALSE(all[i].contains("PreviousRunId"));
    else EXPECT_EQ(all[i]["PreviousRunId"], "jr_" + std::to_string(i));
    EXPECT_EQ(all[i]["Reads"]["a"]["objects"], i + 1);
    EXPECT_TRUE(all[i]["CommittedOn"].is_number());
    EXPECT_EQ(ParseJson(all[i]["JobBookmark"].get<std::string>())["a"]["high"], i + 1);
  }
  Json seen = Json::array();
  Json request{{"JobName", "orders"}, {"MaxResults", 2}};
  for (int pages = 0; pages < 10; ++pages) {
    auto page = service_->GetJobBookmarkHistory(request, Caller{});
    ASSERT_TRUE(page.ok());
    for (const Json& e : (*page)["History"]) seen.push_back(e["Version"]);
    if (!page->contains("NextToken")) break;
    request["NextToken"] = (*page)["NextToken"];
  }
  EXPECT_EQ(seen, Json::parse("[1,2,3,4,5]"));
  EXPECT_EQ(service_->GetJobBookmarkHistory(Json{{"JobName", "nosuch"}}, Caller{}).status().code(),
            StatusCode::kEntityNotFound);
  EXPECT_EQ(service_->GetJobBookmarkHistory(Json{{"JobName", "orders"}, {"MaxResults", 0}}, Caller{})
                .status().code(),
            StatusCode::kInvalidInput);
}

TEST_F(BookmarkServiceTest, HistoryIsBounded) {
  history_limit_ = 3;
  Open();
  AddRun("jr_early");  // commits nothing; started before all of them
  for (int i = 1; i <= 5; ++i) {
    std::string id = "jr_" + std::to_string(i);
    AddRun(id);
    ASSERT_TRUE(Commit(id, {{"a", {{"high", i}}}}).ok());
  }
  Json history = History();
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0]["Version"], 3);
  auto pruned = Get("orders", "jr_1");
  EXPECT_EQ(pruned.status().code(), StatusCode::kEntityNotFound);
  EXPECT_NE(pruned.status().message().find("no longer kept"), std::string::npos);
  EXPECT_EQ(State(Get("orders", "jr_4"))["a"]["high"], 4);
  // The state a run that committed nothing started from is gone with the rows before it.
  auto early = Get("orders", "jr_early");
  EXPECT_EQ(early.status().code(), StatusCode::kEntityNotFound);
  EXPECT_NE(early.status().message().find("no longer kept"), std::string::npos);
}

TEST_F(BookmarkServiceTest, RefusalsChangeNothing) {
  AddRun("jr_1");
  ASSERT_TRUE(Commit("jr_1", {{"a", {{"high", 1}}}}).ok());
  auto expect_unchanged = [&](const Result<Json>& refused, StatusCode code,
                              const std::string& fragment) {
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), code) << refused.status().ToString();
    EXPECT_NE(refused.status().message().find(fragment), std::string::npos)
        << refused.status().message();
    auto now = Get();
    ASSERT_TRUE(now.ok());
    EXPECT_EQ((*now)["JobBookmarkEntry"]["Version"], 1);
    EXPECT_EQ(State(now), Json::parse(R"({"a": {"high": 1}})"));
    EXPECT_EQ(History().size(), 1u);
  };
  // Duplicate: the same run again.
  expect_unchanged(Commit("jr_1", {{"a", {{"high", 9}}}}), StatusCode::kConcurrentModification,
                   "duplicate commit");
  // Late: the run has ended.
  AddRun("jr_late");
  runs_["jr_late"].state = "SUCCEEDED";
  auto late = Commit("jr_late", {{"a", {{"high", 9}}}});
  expect_unchanged(late, StatusCode::kConcurrentModification, "late commit");
  EXPECT_NE(late.status().message().find("jr_late"), std::string::npos);
  EXPECT_NE(late.status().message().find("orders"), std::string::npos);
  runs_["jr_late"].state = "STOPPING";
  expect_unchanged(Commit("jr_late", {{"a", {{"high", 9}}}}), StatusCode::kConcurrentModification,
                   "STOPPING");
  // Option not enable.
  AddRun("jr_off", "orders", 0, "");
  expect_unchanged(Commit("jr_off", {{"a", {{"high", 9}}}}), StatusCode::kInvalidInput,
                   "job-bookmark-disable");
  AddRun("jr_pause", "orders", 0, "job-bookmark-pause");
  expect_unchanged(Commit("jr_pause", {{"a", {{"high", 9}}}}), StatusCode::kInvalidInput,
                   "job-bookmark-pause");
  // Unknown run, or a run of another job.
  expect_unchanged(Commit("jr_nope", {{"a", {{"high", 9}}}}), StatusCode::kEntityNotFound, "jr_nope");
  AddRun("jr_o", "other");
  expect_unchanged(Commit("jr_o", {{"a", {{"high", 9}}}}), StatusCode::kEntityNotFound, "jr_o");
  // Malformed states.
  AddRun("jr_bad");
  auto raw = [&](Json request) { return service_->CommitJobBookmark(request, Caller{}); };
  Json base{{"JobName", "orders"}, {"RunId", "jr_bad"}};
  Json r = base;
  r["JobBookmark"] = "[1,2]";
  expect_unchanged(raw(r), StatusCode::kInvalidInput, "JSON object");
  r["JobBookmark"] = "not json";
  expect_unchanged(raw(r), StatusCode::kInvalidInput, "JSON object");
  r["JobBookmark"] = R"({"a": 5})";
  expect_unchanged(raw(r), StatusCode::kInvalidInput, "transformation_ctx 'a'");
  r["JobBookmark"] = Json::object();
  expect_unchanged(raw(r), StatusCode::kInvalidInput, "must be a string");
  expect_unchanged(raw(base), StatusCode::kInvalidInput, "JobBookmark is required");
  r["JobBookmark"] = std::string(200, '[') + std::string(200, ']');
  expect_unchanged(raw(r), StatusCode::kInvalidInput, "JSON object");
  r["JobBookmark"] = R"({"a": )" + std::string(100, '[') + std::string(100, ']') + "}";
  expect_unchanged(raw(r), StatusCode::kInvalidInput, "nested deeper");
  r["JobBookmark"] = R"({"a": {"big": ")" + std::string(4 * 1024 * 1024, 'x') + "\"}}";
  expect_unchanged(raw(r), StatusCode::kInvalidInput, "bytes");
  r["JobBookmark"] = "{}";
  r["Reads"] = Json{{"a", {{"first", std::string(300 * 1024, 'y')}}}};
  expect_unchanged(raw(r), StatusCode::kInvalidInput, "Reads");
  r["Reads"] = "x";
  expect_unchanged(raw(r), StatusCode::kInvalidInput, "Reads must be");
  r.erase("Reads");
  r["Extra"] = 1;
  expect_unchanged(raw(r), StatusCode::kInvalidInput, "Extra");
  r.erase("Extra");
  r["RunId"] = 5;
  expect_unchanged(raw(r), StatusCode::kInvalidInput, "RunId");
  // jr_bad can still commit once the request is right.
  r["RunId"] = "jr_bad";
  EXPECT_TRUE(raw(r).ok());
}

TEST_F(BookmarkServiceTest, CallersAreScoped) {
  AddRun("jr_1");
  AddRun("jr_2");
  Caller run1{Caller::Kind::kRun, "AKRUN1", "orders", "jr_1"};
  Caller admin{Caller::Kind::kAdministrator, "test", "", ""};
  Json request{{"JobName", "orders"}, {"RunId", "jr_1"}, {"JobBookmark", R"({"a": {}})"}};
  // Another run's credential, an administrator: refused before anything is read.
  Caller run2{Caller::Kind::kRun, "AKRUN2", "orders", "jr_2"};
  EXPECT_EQ(service_->CommitJobBookmark(request, run2).status().code(), StatusCode::kAccessDenied);
  EXPECT_EQ(service_->CommitJobBookmark(request, admin).status().code(), StatusCode::kAccessDenied);
  EXPECT_EQ(Get().status().code(), StatusCode::kEntityNotFound);
  auto own = service_->CommitJobBookmark(request, run1);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  // A run reads its own job's bookmark, not another's; it never resets.
  EXPECT_TRUE(service_->GetJobBookmark(Json{{"JobName", "orders"}}, run1).ok());
  auto other = service_->GetJobBookmark(Json{{"JobName", "other"}}, run1);
  EXPECT_EQ(other.status().code(), StatusCode::kAccessDenied);
  EXPECT_NE(other.status().message().find("other"), std::string::npos);
  EXPECT_EQ(service_->GetJobBookmarkHistory(Json{{"JobName", "other"}}, run1).status().code(),
            StatusCode::kAccessDenied);
  EXPECT_TRUE(service_->GetJobBookmarkHistory(Json{{"JobName", "orders"}}, run1).ok());
  EXPECT_EQ(service_->ResetJobBookmark(Json{{"JobName", "orders"}}, run1).status().code(),
            StatusCode::kAccessDenied);
  EXPECT_TRUE(service_->ResetJobBookmark(Json{{"JobName", "orders"}}, admin).ok());
}

TEST_F(BookmarkServiceTest, DeleteJobRemovesBookmarkAndHistory) {
  AddRun("jr_1");
  ASSERT_TRUE(Commit("jr_1", {{"a", {{"high", 1}}}}).ok());
  AddRun("jr_o", "other");
  ASSERT_TRUE(Commit("jr_o", {{"b", {{"high", 1}}}}, "other").ok());
  {
    auto txn = store_->BeginWrite();
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(BookmarkService::DeleteJobBookmarks(txn->get(), "orders").ok());
    ASSERT_TRUE((*txn)->Commit().ok());
  }
  EXPECT_EQ(Get().status().code(), StatusCode::kEntityNotFound);
  EXPECT_TRUE(History().empty());
  // A job of the same name starts afresh: the old run's commit is forgotten too.
  runs_["jr_1"].state = "RUNNING";
  EXPECT_TRUE(Commit("jr_1", {{"a", {{"high", 5}}}}).ok());
  EXPECT_EQ((*Get())["JobBookmarkEntry"]["Version"], 1);
  // The other job is untouched.
  EXPECT_EQ(State(Get("other"))["b"]["high"], 1);
}

TEST_F(BookmarkServiceTest, SurvivesReopen) {
  AddRun("jr_1");
  ASSERT_TRUE(Commit("jr_1", {{"a", {{"high", 1}}}}).ok());
  AddRun("jr_2", "orders", 1);
  ASSERT_TRUE(Commit("jr_2", {{"b", {{"high", 2}}}}).ok());
  Open();
  auto current = Get();
  ASSERT_TRUE(current.ok());
  Json entry = (*current)["JobBookmarkEntry"];
  EXPECT_EQ(entry["Version"], 2);
  EXPECT_EQ(entry["Run"], 2);
  EXPECT_EQ(entry["Attempt"], 1);
  EXPECT_EQ(entry["RunId"], "jr_2");
  EXPECT_EQ(entry["PreviousRunId"], "jr_1");
  EXPECT_EQ(State(current), Json::parse(R"({"a": {"high": 1}, "b": {"high": 2}})"));
  EXPECT_EQ(History().size(), 2u);
  // The duplicate check survives too.
  EXPECT_EQ(Commit("jr_2", {{"b", Json::object()}}).status().code(), StatusCode::kConcurrentModification);
}

}  // namespace
}  // namespace openglue::bookmarks
