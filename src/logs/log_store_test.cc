#include "logs/log_store.h"

#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/strings.h"

namespace openglue::logs {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOut = "/aws-glue/jobs/output";
constexpr const char* kErr = "/aws-glue/jobs/error";
constexpr int64_t kT0 = 1'700'000'000'000;
constexpr size_t kMaxEventBytes = 256 * 1024 - 26;

class LogStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/og_log_store_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = std::string(tmpl) + "/logs";
    store_ = Open();
  }
  void TearDown() override {
    store_.reset();
    std::error_code ec;
    fs::remove_all(fs::path(root_).parent_path(), ec);
  }

  std::unique_ptr<LogStore> Open(LogStoreOptions options = {}) {
    Result<std::unique_ptr<LogStore>> store = LogStore::Make(root_, &clock_, options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  void Append(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << text;
  }
  void AppendOut(const std::string& run, const std::string& text) {
    Append(store_->StdoutPath(run), text);
  }

  Json Get(Json request) {
    Result<Json> r = store_->GetLogEvents(request);
    EXPECT_TRUE(r.ok()) << r.status().ToString() << " for " << request.dump();
    return r.ok() ? *r : Json::object();
  }
  Json Filter(Json request) {
    Result<Json> r = store_->FilterLogEvents(request);
    EXPECT_TRUE(r.ok()) << r.status().ToString() << " for " << request.dump();
    return r.ok() ? *r : Json::object();
  }

  static std::vector<std::string> Messages(const Json& response) {
    std::vector<std::string> out;
    for (const Json& ev : response["events"]) out.push_back(ev["message"].get<std::string>());
    return out;
  }
  static std::vector<int64_t> Timestamps(const Json& response) {
    std::vector<int64_t> out;
    for (const Json& ev : response["events"]) out.push_back(ev["timestamp"].get<int64_t>());
    return out;
  }
  // Every event of a stream, from the head, following forward tokens to the end.
  std::vector<std::string> AllMessages(const std::string& run, const char* group = kOut) {
    std::vector<std::string> all;
    Json request = {{"logGroupName", group}, {"logStreamName", run}, {"startFromHead", true}};
    for (int page = 0; page < 100000; ++page) {
      Json response = Get(request);
      for (auto& m : Messages(response)) all.push_back(std::move(m));
      if (request.contains("nextToken") && response["nextForwardToken"] == request["nextToken"]) {
        break;
      }
      request["nextToken"] = response["nextForwardToken"];
    }
    return all;
  }

  FakeClock clock_{kT0};
  std::string root_;
  std::unique_ptr<LogStore> store_;
};

using Strings = std::vector<std::string>;

TEST_F(LogStoreTest, LinesBecomeEventsInOrderWithIncreasingTimestamps) {
  store_->Follow("jr_1");
  AppendOut("jr_1", "one\ntwo\n");
  Append(store_->StderrPath("jr_1"), "oops\n");
  store_->PollOnce();
  clock_.Advance(1000);
  AppendOut("jr_1", "three\nfour");  // "four" has no newline yet
  store_->PollOnce();
  clock_.Advance(1000);
  store_->PollOnce();

  Json r = Get({{"logGroupName", kOut}, {"logStreamName", "jr_1"}, {"startFromHead", true}});
  EXPECT_EQ(Messages(r), (Strings{"one", "two", "three"}));
  EXPECT_EQ(Timestamps(r), (std::vector<int64_t>{kT0, kT0, kT0 + 1000}));
  EXPECT_EQ(r["events"][0]["ingestionTime"], kT0);
  EXPECT_EQ(AllMessages("jr_1", kErr), (Strings{"oops"}));

  // The partial last line becomes an event only when the run finishes.
  clock_.Advance(1000);
  store_->Finish("jr_1");
  r = Get({{"logGroupName", kOut}, {"logStreamName", "jr_1"}, {"startFromHead", true}});
  EXPECT_EQ(Messages(r), (Strings{"one", "two", "three", "four"}));
  EXPECT_EQ(Timestamps(r).back(), kT0 + 3000);

  // Finished: following again does not resurrect anything, and nothing is repeated.
  store_->Follow("jr_1");
  store_->PollOnce();
  store_->Finish("jr_1");
  EXPECT_EQ(AllMessages("jr_1"), (Strings{"one", "two", "three", "four"}));
}

TEST_F(LogStoreTest, TimestampsNeverGoBackwards) {
  store_->Follow("jr_1");
  AppendOut("jr_1", "a\n");
  store_->PollOnce();
  clock_.Advance(-5000);  // the wall clock stepped back
  AppendOut("jr_1", "b\n");
  store_->PollOnce();
  Json r = Get({{"logGroupName", kOut}, {"logStreamName", "jr_1"}, {"startFromHead", true}});
  EXPECT_EQ(Timestamps(r), (std::vector<int64_t>{kT0, kT0}));
}

TEST_F(LogStoreTest, FinishWithoutFollowDrainsEverything) {
  AppendOut("jr_2", "x\ny\nlast");
  store_->Finish("jr_2");
  EXPECT_EQ(AllMessages("jr_2"), (Strings{"x", "y", "last"}));
}

TEST_F(LogStoreTest, RestartResumesWithoutDuplicatesOrLosses) {
  store_->Follow("jr_1");
  AppendOut("jr_1", "1\n2\n");
  store_->PollOnce();
  std::string out_path = store_->StdoutPath("jr_1");
  store_.reset();  // the server stops

  // Meanwhile the run writes more, and the old tailer had appended an event for "3" but died
  // before recording it (the event file is ahead of the recorded state).
  Append(out_path, "3\n4\n");
  Append(root_ + "/jr_1/output.events", std::to_string(kT0) + "\t3\n");

  clock_.Advance(1000);
  store_ = Open();
  store_->Follow("jr_1");
  store_->PollOnce();
  EXPECT_EQ(AllMessages("jr_1"), (Strings{"1", "2", "3", "4"}));
  store_.reset();
  store_ = Open();
  store_->Follow("jr_1");
  Append(out_path, "5\n");
  store_->PollOnce();
  store_->Finish("jr_1");
  EXPECT_EQ(AllMessages("jr_1"), (Strings{"1", "2", "3", "4", "5"}));
}

TEST_F(LogStoreTest, GetLogEventsPagesForwardAndBackwardWithCloudWatchTokens) {
  store_->Follow("jr_1");
  for (int i = 0; i < 25; ++i) {
    AppendOut("jr_1", "line " + std::to_string(i) + "\n");
    store_->PollOnce();
    clock_.Advance(10);
  }
  auto range = [](int from, int to) {
    Strings out;
    for (int i = from; i < to; ++i) out.push_back("line " + std::to_string(i));
    return out;
  };
  Json base = {{"logGroupName", kOut}, {"logStreamName", "jr_1"}, {"limit", 10}};

  // Without a token or startFromHead: the last `limit` events.
  Json last = Get(base);
  EXPECT_EQ(Messages(last), range(15, 25));

  // Forward from the head, then the end rule: the same token comes back.
  Json request = base;
  request["startFromHead"] = true;
  Json page = Get(request);
  EXPECT_EQ(Messages(page), range(0, 10));
  request["nextToken"] = page["nextForwardToken"];
  page = Get(request);
  EXPECT_EQ(Messages(page), range(10, 20));
  request["nextToken"] = page["nextForwardToken"];
  page = Get(request);
  EXPECT_EQ(Messages(page), range(20, 25));
  request["nextToken"] = page["nextForwardToken"];
  page = Get(request);
  EXPECT_TRUE(page["events"].empty());
  EXPECT_EQ(page["nextForwardToken"], request["nextToken"]);
  std::string end_token = page["nextForwardToken"];
  EXPECT_EQ(end_token.substr(0, 2), "f/");

  // New output shows up behind the end token.
  AppendOut("jr_1", "line 25\n");
  store_->PollOnce();
  page = Get(request);
  EXPECT_EQ(Messages(page), range(25, 26));
  EXPECT_NE(page["nextForwardToken"], request["nextToken"]);

  // Backward from the default page to the head, then the same backward token at the start.
  request = base;
  request["nextToken"] = last["nextBackwardToken"];
  page = Get(request);
  EXPECT_EQ(Messages(page), range(5, 15));
  request["nextToken"] = page["nextBackwardToken"];
  page = Get(request);
  EXPECT_EQ(Messages(page), range(0, 5));
  request["nextToken"] = page["nextBackwardToken"];
  page = Get(request);
  EXPECT_TRUE(page["events"].empty());
  EXPECT_EQ(page["nextBackwardToken"], request["nextToken"]);
  EXPECT_EQ(page["nextBackwardToken"], "b/0");

  // A backward page's forward token continues right after it.
  request = base;
  request["nextToken"] = last["nextBackwardToken"];
  page = Get(request);
  request["nextToken"] = page["nextForwardToken"];
  EXPECT_EQ(Messages(Get(request)), range(15, 25));

  // Empty stream: tokens exist, and following the forward one ends at once.
  store_->Follow("jr_empty");
  Json empty = Get({{"logGroupName", kOut}, {"logStreamName", "jr_empty"}});
  EXPECT_TRUE(empty["events"].empty());
  Json again = Get({{"logGroupName", kOut},
                    {"logStreamName", "jr_empty"},
                    {"nextToken", empty["nextForwardToken"]}});
  EXPECT_EQ(again["nextForwardToken"], empty["nextForwardToken"]);
}

TEST_F(LogStoreTest, TimeRanges) {
  store_->Follow("jr_1");
  AppendOut("jr_1", "a\nb\n");
  store_->PollOnce();
  clock_.Advance(1000);
  AppendOut("jr_1", "c\n");
  store_->PollOnce();
  clock_.Advance(1000);
  AppendOut("jr_1", "d\n");
  store_->PollOnce();

  Json base = {{"logGroupName", kOut}, {"logStreamName", "jr_1"}, {"startFromHead", true}};
  Json r = base;
  r["startTime"] = kT0 + 1000;
  EXPECT_EQ(Messages(Get(r)), (Strings{"c", "d"}));
  r["startTime"] = kT0 + 1;
  EXPECT_EQ(Messages(Get(r)), (Strings{"c", "d"}));
  r = base;
  r["endTime"] = kT0 + 2000;  // exclusive for GetLogEvents
  EXPECT_EQ(Messages(Get(r)), (Strings{"a", "b", "c"}));
  r["startTime"] = kT0 + 1000;
  EXPECT_EQ(Messages(Get(r)), (Strings{"c"}));
  r.erase("startFromHead");  // backward (the default) honours the range too
  EXPECT_EQ(Messages(Get(r)), (Strings{"c"}));
  r["startTime"] = kT0 + 5000;
  r["endTime"] = kT0 + 6000;
  EXPECT_TRUE(Get(r)["events"].empty());

  // FilterLogEvents' endTime is inclusive.
  Json f = Filter({{"logGroupName", kOut}, {"startTime", kT0 + 1}, {"endTime", kT0 + 1000}});
  EXPECT_EQ(Messages(f), (Strings{"c"}));
  f = Filter({{"logGroupName", kOut}, {"endTime", kT0 + 1000}});
  EXPECT_EQ(Messages(f), (Strings{"a", "b", "c"}));
}

TEST_F(LogStoreTest, FilterLogEventsMatchesTermsAcrossStreams) {
  store_->Follow("jr_a");
  store_->Follow("jr_b");
  AppendOut("jr_b", "ERROR disk full\n");
  store_->PollOnce();
  clock_.Advance(1);
  AppendOut("jr_a", "INFO ok\n");
  AppendOut("jr_b", "WARN disk slow\n");
  store_->PollOnce();
  clock_.Advance(1);
  AppendOut("jr_a", "ERROR network down\n");
  store_->PollOnce();

  auto filter = [&](const std::string& pattern) {
    return Messages(Filter({{"logGroupName", kOut}, {"filterPattern", pattern}}));
  };
  // Interleaved by time, then by stream name.
  EXPECT_EQ(filter(""), (Strings{"ERROR disk full", "INFO ok", "WARN disk slow",
                                 "ERROR network down"}));
  EXPECT_EQ(filter("ERROR"), (Strings{"ERROR disk full", "ERROR network down"}));
  EXPECT_EQ(filter("ERROR disk"), (Strings{"ERROR disk full"}));
  EXPECT_EQ(filter("disk ERROR"), (Strings{"ERROR disk full"}));
  EXPECT_EQ(filter("\"disk full\""), (Strings{"ERROR disk full"}));
  EXPECT_EQ(filter("\"full disk\""), Strings{});
  EXPECT_EQ(filter("error"), Strings{});  // case-sensitive, like CloudWatch
  EXPECT_EQ(filter("?WARN ?INFO"), (Strings{"INFO ok", "WARN disk slow"}));
  EXPECT_EQ(filter("ERROR -network"), (Strings{"ERROR disk full"}));

  Json r = Filter({{"logGroupName", kOut}, {"logStreamNames", {"jr_a"}}});
  EXPECT_EQ(Messages(r), (Strings{"INFO ok", "ERROR network down"}));
  EXPECT_EQ(r["events"][0]["logStreamName"], "jr_a");
  EXPECT_EQ(r["events"][0]["timestamp"], kT0 + 1);
  EXPECT_EQ(r["events"][0]["ingestionTime"], kT0 + 1);
  EXPECT_TRUE(r["events"][0]["eventId"].is_string());
  EXPECT_FALSE(r.contains("nextToken"));
  ASSERT_EQ(r["searchedLogStreams"].size(), 1u);
  EXPECT_EQ(r["searchedLogStreams"][0]["searchedCompletely"], true);
  r = Filter({{"logGroupName", kOut}, {"logStreamNamePrefix", "jr_b"}});
  EXPECT_EQ(Messages(r), (Strings{"ERROR disk full", "WARN disk slow"}));

  Result<Json> bad =
      store_->FilterLogEvents({{"logGroupName", kOut}, {"filterPattern", "{ $.a = 1 }"}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidInput);
  bad = store_->FilterLogEvents({{"logGroupName", kOut}, {"filterPattern", "\"open"}});
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidInput);
}

TEST_F(LogStoreTest, FilterLogEventsPagesWithoutRepeatsOrGaps) {
  Strings expected;
  for (int round = 0; round < 4; ++round) {
    for (const char* run : {"jr_a", "jr_b", "jr_c"}) {
      store_->Follow(run);
      for (int k = 0; k < 3; ++k) {
        std::string line =
            std::string(run) + " r" + std::to_string(round) + " k" + std::to_string(k);
        AppendOut(run, line + "\n");
        expected.push_back(line);
      }
    }
    store_->PollOnce();
    clock_.Advance(round % 2 == 0 ? 0 : 7);  // some rounds share a timestamp
  }
  // The merged order: timestamp, then stream name, then position.
  Json all = Filter({{"logGroupName", kOut}});
  Strings merged = Messages(all);
  ASSERT_EQ(merged.size(), expected.size());
  for (int limit : {1, 2, 5}) {
    Strings paged;
    std::set<std::string> tokens;
    Json request = {{"logGroupName", kOut}, {"limit", limit}};
    for (int page = 0; page < 1000; ++page) {
      Json r = Filter(request);
      for (auto& m : Messages(r)) paged.push_back(std::move(m));
      if (!r.contains("nextToken")) break;
      EXPECT_TRUE(tokens.insert(r["nextToken"].get<std::string>()).second) << "token repeated";
      request["nextToken"] = r["nextToken"];
    }
    EXPECT_EQ(paged, merged) << "limit " << limit;
  }
}

TEST_F(LogStoreTest, FollowingAGrowingStreamLikeAwsLogsTail) {
  // `aws logs tail --follow` polls FilterLogEvents from the last timestamp it saw and drops
  // the event ids it has already printed.
  store_->Follow("jr_1");
  std::set<std::string> seen;
  Strings printed;
  int64_t since = kT0 - 60000;
  auto poll = [&] {
    Json request = {{"logGroupName", kOut}, {"startTime", since}, {"interleaved", true}};
    for (;;) {
      Json r = Filter(request);
      for (const Json& ev : r["events"]) {
        if (!seen.insert(ev["eventId"].get<std::string>()).second) continue;
        printed.push_back(ev["message"]);
        since = std::max<int64_t>(since, ev["timestamp"]);
      }
      if (!r.contains("nextToken")) break;
      request["nextToken"] = r["nextToken"];
    }
  };
  Strings expected;
  for (int i = 0; i < 10; ++i) {
    std::string line = "step " + std::to_string(i);
    AppendOut("jr_1", line + "\n");
    expected.push_back(line);
    if (i % 3 == 0) store_->PollOnce();
    if (i % 2 == 0) clock_.Advance(5);
    poll();
  }
  store_->Finish("jr_1");
  poll();
  EXPECT_EQ(printed, expected);
}

TEST_F(LogStoreTest, LongLinesAreSplitIntoCloudWatchSizedEvents) {
  std::string line(600 * 1024, 'x');
  line[kMaxEventBytes - 1] = '\xc3';  // a two-byte character across the first cut
  line[kMaxEventBytes] = '\xa9';
  store_->Follow("jr_1");
  AppendOut("jr_1", line.substr(0, 300 * 1024));  // no newline yet: one whole event is ready
  store_->PollOnce();
  Json r = Get({{"logGroupName", kOut}, {"logStreamName", "jr_1"}, {"startFromHead", true}});
  ASSERT_EQ(r["events"].size(), 1u);
  AppendOut("jr_1", line.substr(300 * 1024) + "\nshort\n");
  store_->PollOnce();
  Strings messages = AllMessages("jr_1");
  ASSERT_EQ(messages.size(), 4u);
  std::string joined;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_LE(messages[i].size(), kMaxEventBytes);
    joined += messages[i];
  }
  EXPECT_EQ(messages[0].size(), kMaxEventBytes - 1);  // cut before the character, not inside
  EXPECT_EQ(joined, line);
  EXPECT_EQ(messages[3], "short");
}

TEST_F(LogStoreTest, InvalidUtf8IsReplaced) {
  AppendOut("jr_1", std::string("bad \xff byte, good \xc3\xa9\n"));
  store_->Finish("jr_1");
  Strings messages = AllMessages("jr_1");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0], "bad \xEF\xBF\xBD byte, good \xc3\xa9");
  Json r = Get({{"logGroupName", kOut}, {"logStreamName", "jr_1"}});
  EXPECT_NO_THROW((void)r.dump());
}

long ReadStatusKb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) {
      return std::strtol(line.c_str() + std::strlen(field), nullptr, 10);
    }
  }
  return -1;
}

TEST_F(LogStoreTest, FiftyMegabytesWithBoundedMemory) {
  std::string out_path = store_->StdoutPath("jr_big");
  {
    std::ofstream out(out_path, std::ios::binary);
    std::string line;
    for (int i = 0; i < 500000; ++i) {
      line = "record " + std::to_string(i) + " ";
      line.resize(99, 'p');
      line += '\n';
      out << line;
    }
  }
  ASSERT_EQ(fs::file_size(out_path), 50u * 1000 * 1000);
  // Reset the peak RSS, so VmHWM measures this test only.
  { std::ofstream("/proc/self/clear_refs") << "5"; }
  long before = ReadStatusKb("VmRSS:");
  store_->Follow("jr_big");
  store_->PollOnce();
  store_->Finish("jr_big");

  Json last = Get({{"logGroupName", kOut}, {"logStreamName", "jr_big"}});
  // The last events, as many as fit in 1 MB (26 bytes of overhead per event, as CloudWatch).
  ASSERT_EQ(last["events"].size(), 1048576u / (99 + 26));
  EXPECT_EQ(last["events"].back()["message"].get<std::string>().substr(0, 14), "record 499999 ");
  Json first = Get({{"logGroupName", kOut}, {"logStreamName", "jr_big"}, {"startFromHead", true},
                    {"limit", 3}});
  EXPECT_EQ(Messages(first)[0].substr(0, 9), "record 0 ");

  // A filter that matches one line of 500,000 scans in bounded pages.
  Json request = {{"logGroupName", kOut}, {"filterPattern", "\"record 250000 \""}};
  Strings found;
  int pages = 0;
  for (; pages < 100; ++pages) {
    Json r = Filter(request);
    for (auto& m : Messages(r)) found.push_back(m);
    if (!r.contains("nextToken")) break;
    request["nextToken"] = r["nextToken"];
  }
  ASSERT_EQ(found.size(), 1u);
  EXPECT_GE(pages, 1);  // it took more than one call

  long after = ReadStatusKb("VmRSS:");
  long peak = ReadStatusKb("VmHWM:");
  std::cout << "RSS before " << before << " kB, after " << after << " kB, peak " << peak
            << " kB\n";
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // (Sanitizers keep freed memory in quarantine, so RSS says nothing under them.)
  EXPECT_LT(after - before, 24 * 1024);
  if (peak >= before) {
    EXPECT_LT(peak - before, 24 * 1024);
  }
#endif
}

TEST_F(LogStoreTest, RetentionDeletesOldRuns) {
  LogStoreOptions options;
  options.retention_days = 30;
  store_ = Open(options);
  for (const char* run : {"jr_old", "jr_new"}) {
    AppendOut(run, "x\n");
    store_->Finish(run);
  }
  AppendOut("jr_old_followed", "x\n");  // a run still going (quiet for 40 days)
  // Age two runs to 40 days before the fake clock; jr_new's files carry the real time of this
  // test run, which is after the fake clock's.
  auto age = [&](const std::string& run) {
    int64_t old_ms = kT0 - 40LL * 86400000;
    struct timeval times[2];
    times[0].tv_sec = times[1].tv_sec = old_ms / 1000;
    times[0].tv_usec = times[1].tv_usec = 0;
    for (const auto& entry : fs::directory_iterator(root_ + "/" + run)) {
      utimes(entry.path().c_str(), times);
    }
    utimes((root_ + "/" + run).c_str(), times);
  };
  age("jr_old");
  age("jr_old_followed");
  store_->Follow("jr_old_followed");  // a run still going is never deleted
  store_->PollOnce();
  EXPECT_FALSE(fs::exists(root_ + "/jr_old"));
  EXPECT_TRUE(fs::exists(root_ + "/jr_new"));
  EXPECT_TRUE(fs::exists(root_ + "/jr_old_followed"));
  Result<Json> r = store_->GetLogEvents({{"logGroupName", kOut}, {"logStreamName", "jr_old"}});
  EXPECT_EQ(r.status().code(), StatusCode::kEntityNotFound);

  // retention_days = 0 keeps everything.
  options.retention_days = 0;
  store_ = Open(options);
  clock_.Advance(1000LL * 86400000);
  store_->PollOnce();
  EXPECT_TRUE(fs::exists(root_ + "/jr_new"));
}

TEST_F(LogStoreTest, ErrorsUseCloudWatchMessages) {
  store_->Follow("jr_1");
  Result<Json> r = store_->GetLogEvents({{"logGroupName", "/nope"}, {"logStreamName", "jr_1"}});
  EXPECT_EQ(r.status().code(), StatusCode::kEntityNotFound);
  EXPECT_EQ(r.status().message(), "The specified log group does not exist.");
  r = store_->GetLogEvents({{"logGroupName", kOut}, {"logStreamName", "jr_missing"}});
  EXPECT_EQ(r.status().code(), StatusCode::kEntityNotFound);
  EXPECT_EQ(r.status().message(), "The specified log stream does not exist.");
  r = store_->GetLogEvents({{"logGroupName", kOut}, {"logStreamName", "../logs"}});
  EXPECT_EQ(r.status().code(), StatusCode::kEntityNotFound);
  r = store_->GetLogEvents({{"logGroupName", kOut}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  r = store_->GetLogEvents({{"logStreamName", "jr_1"}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  for (const char* token : {"x", "f/", "f/abc", "q/1", "b/-1"}) {
    r = store_->GetLogEvents(
        {{"logGroupName", kOut}, {"logStreamName", "jr_1"}, {"nextToken", token}});
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput) << token;
  }
  AppendOut("jr_1", "hello\n");
  store_->PollOnce();
  r = store_->GetLogEvents(
      {{"logGroupName", kOut}, {"logStreamName", "jr_1"}, {"nextToken", "f/2"}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);  // not an event boundary
  r = store_->GetLogEvents({{"logGroupName", kOut}, {"logStreamName", "jr_1"}, {"limit", 0}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  r = store_->GetLogEvents({{"logGroupName", kOut}, {"logStreamName", "jr_1"}, {"limit", 10001}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  r = store_->GetLogEvents({{"logGroupName", kOut}, {"logStreamName", "jr_1"}, {"limit", "5"}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  r = store_->FilterLogEvents({{"logGroupName", kOut}, {"logStreamNames", {"jr_1"}},
                               {"logStreamNamePrefix", "jr"}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  r = store_->FilterLogEvents({{"logGroupName", kOut}, {"nextToken", "garbage"}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  r = store_->FilterLogEvents({{"logGroupName", "/aws-glue/jobs/other"}});
  EXPECT_EQ(r.status().code(), StatusCode::kEntityNotFound);
  r = store_->DescribeLogStreams({{"logGroupName", kOut}, {"orderBy", "LastEventTime"},
                                  {"logStreamNamePrefix", "jr"}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  r = store_->DescribeLogStreams({{"logGroupName", kOut}, {"limit", 51}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  r = store_->DescribeLogStreams({{"logGroupName", kOut}, {"orderBy", "Size"}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  r = store_->DescribeLogStreams(Json::array());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  // A group named by ARN (logGroupIdentifier) works too.
  std::string arn = "arn:aws:logs:us-east-1:000000000000:log-group:" + std::string(kOut) + ":*";
  r = store_->GetLogEvents({{"logGroupIdentifier", arn}, {"logStreamName", "jr_1"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Messages(*r), (Strings{"hello"}));
}

TEST_F(LogStoreTest, DescribeLogGroups) {
  AppendOut("jr_1", "12345\n");
  store_->Finish("jr_1");
  Result<Json> r = store_->DescribeLogGroups(Json::object());
  ASSERT_TRUE(r.ok());
  Json groups = (*r)["logGroups"];
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0]["logGroupName"], kErr);
  EXPECT_EQ(groups[1]["logGroupName"], kOut);
  EXPECT_EQ(groups[1]["creationTime"], kT0);
  EXPECT_EQ(groups[1]["retentionInDays"], 30);
  EXPECT_EQ(groups[1]["arn"],
            "arn:aws:logs:us-east-1:000000000000:log-group:/aws-glue/jobs/output:*");
  EXPECT_GT(groups[1]["storedBytes"].get<int64_t>(), 5);
  EXPECT_EQ(groups[0]["storedBytes"], 0);
  EXPECT_FALSE(r->contains("nextToken"));

  r = store_->DescribeLogGroups({{"logGroupNamePrefix", "/aws-glue/jobs/o"}});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ((*r)["logGroups"].size(), 1u);
  EXPECT_EQ((*r)["logGroups"][0]["logGroupName"], kOut);
  r = store_->DescribeLogGroups({{"logGroupNamePrefix", "/aws-glue/crawlers"}});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)["logGroups"].empty());

  r = store_->DescribeLogGroups({{"limit", 1}});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ((*r)["logGroups"].size(), 1u);
  ASSERT_TRUE(r->contains("nextToken"));
  r = store_->DescribeLogGroups({{"limit", 1}, {"nextToken", (*r)["nextToken"]}});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ((*r)["logGroups"].size(), 1u);
  EXPECT_EQ((*r)["logGroups"][0]["logGroupName"], kOut);
  EXPECT_FALSE(r->contains("nextToken"));
}

TEST_F(LogStoreTest, DescribeLogStreams) {
  // jr_b gets its last event first, jr_a later, jr_c never.
  store_->Follow("jr_b");
  AppendOut("jr_b", "b\n");
  store_->PollOnce();
  clock_.Advance(100);
  store_->Follow("jr_a");
  AppendOut("jr_a", "a1\n");
  store_->PollOnce();
  clock_.Advance(100);
  AppendOut("jr_a", "a2\n");
  store_->PollOnce();
  store_->Follow("jr_c");

  Result<Json> r = store_->DescribeLogStreams({{"logGroupName", kOut}});
  ASSERT_TRUE(r.ok());
  Json streams = (*r)["logStreams"];
  ASSERT_EQ(streams.size(), 3u);
  EXPECT_EQ(streams[0]["logStreamName"], "jr_a");
  EXPECT_EQ(streams[0]["creationTime"], kT0 + 100);
  EXPECT_EQ(streams[0]["firstEventTimestamp"], kT0 + 100);
  EXPECT_EQ(streams[0]["lastEventTimestamp"], kT0 + 200);
  EXPECT_EQ(streams[0]["lastIngestionTime"], kT0 + 200);
  EXPECT_EQ(streams[0]["arn"],
            "arn:aws:logs:us-east-1:000000000000:log-group:/aws-glue/jobs/output:log-stream:jr_a");
  EXPECT_FALSE(streams[2].contains("lastEventTimestamp"));  // jr_c has no events
  // The error group has the same streams.
  r = store_->DescribeLogStreams({{"logGroupName", kErr}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["logStreams"].size(), 3u);

  auto names = [](const Json& response) {
    Strings out;
    for (const Json& s : response["logStreams"]) out.push_back(s["logStreamName"]);
    return out;
  };
  r = store_->DescribeLogStreams(
      {{"logGroupName", kOut}, {"orderBy", "LastEventTime"}, {"descending", true}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(names(*r), (Strings{"jr_a", "jr_b", "jr_c"}));
  r = store_->DescribeLogStreams({{"logGroupName", kOut}, {"orderBy", "LastEventTime"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(names(*r), (Strings{"jr_c", "jr_b", "jr_a"}));
  r = store_->DescribeLogStreams({{"logGroupName", kOut}, {"descending", true}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(names(*r), (Strings{"jr_c", "jr_b", "jr_a"}));
  r = store_->DescribeLogStreams({{"logGroupName", kOut}, {"logStreamNamePrefix", "jr_b"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(names(*r), (Strings{"jr_b"}));

  // Paging, one at a time, in both orders.
  for (const char* order : {"LogStreamName", "LastEventTime"}) {
    for (bool descending : {false, true}) {
      Json request = {{"logGroupName", kOut}, {"orderBy", order}, {"descending", descending},
                      {"limit", 1}};
      Result<Json> whole = store_->DescribeLogStreams(
          {{"logGroupName", kOut}, {"orderBy", order}, {"descending", descending}});
      ASSERT_TRUE(whole.ok());
      Strings paged;
      for (int page = 0; page < 10; ++page) {
        Result<Json> p = store_->DescribeLogStreams(request);
        ASSERT_TRUE(p.ok()) << p.status().ToString();
        for (auto& n : names(*p)) paged.push_back(n);
        if (!p->contains("nextToken")) break;
        request["nextToken"] = (*p)["nextToken"];
      }
      EXPECT_EQ(paged, names(*whole)) << order << " " << descending;
    }
  }
}

TEST_F(LogStoreTest, BackgroundThreadTailsFollowedRuns) {
  SystemClock real_clock;
  LogStoreOptions options;
  options.poll_interval_ms = 10;
  Result<std::unique_ptr<LogStore>> made = LogStore::Make(root_, &real_clock, options);
  ASSERT_TRUE(made.ok());
  store_ = std::move(made).value();
  store_->Start();
  store_->Start();  // idempotent
  store_->Follow("jr_bg");
  AppendOut("jr_bg", "tick\n");
  bool seen = false;
  for (int i = 0; i < 500 && !seen; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = AllMessages("jr_bg") == Strings{"tick"};
  }
  EXPECT_TRUE(seen);
  store_->Stop();
  store_->Stop();
  store_->Start();
  store_.reset();  // the destructor stops the thread
}

TEST_F(LogStoreTest, ConcurrentWriterTailerAndReaders) {
  // A real clock and the background thread; a writer produces lines (sometimes split across
  // writes) while a reader follows the group as `aws logs tail --follow` does. Every line must
  // be printed exactly once, in order.
  SystemClock real_clock;
  LogStoreOptions options;
  options.poll_interval_ms = 1;
  Result<std::unique_ptr<LogStore>> made = LogStore::Make(root_, &real_clock, options);
  ASSERT_TRUE(made.ok());
  store_ = std::move(made).value();
  store_->Follow("jr_live");
  store_->Start();
  const int kLines = 20000;
  std::thread writer([&] {
    std::string path = store_->StdoutPath("jr_live");
    FILE* f = fopen(path.c_str(), "a");
    for (int i = 0; i < kLines; ++i) {
      std::string line = "line " + std::to_string(i) + " " + std::string(i % 300, 'z');
      size_t half = line.size() / 2;
      fwrite(line.data(), 1, half, f);
      fflush(f);
      fwrite(line.data() + half, 1, line.size() - half, f);
      fputc('\n', f);
      if (i % 50 == 0) {
        fflush(f);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    fclose(f);
  });
  std::set<std::string> seen;
  std::vector<int> printed;
  int64_t since = 0;
  auto poll = [&] {
    Json request = {{"logGroupName", kOut}, {"startTime", since}};
    for (;;) {
      Result<Json> r = store_->FilterLogEvents(request);
      ASSERT_TRUE(r.ok());
      for (const Json& ev : (*r)["events"]) {
        if (!seen.insert(ev["eventId"].get<std::string>()).second) continue;
        std::string message = ev["message"];
        printed.push_back(std::stoi(message.substr(5)));
        since = std::max<int64_t>(since, ev["timestamp"]);
      }
      if (!r->contains("nextToken")) break;
      request["nextToken"] = (*r)["nextToken"];
    }
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (printed.size() < static_cast<size_t>(kLines) &&
         std::chrono::steady_clock::now() < deadline) {
    poll();
    // Backward reads race with the tailer too.
    Result<Json> last = store_->GetLogEvents(
        {{"logGroupName", kOut}, {"logStreamName", "jr_live"}, {"limit", 5}});
    ASSERT_TRUE(last.ok());
    if (printed.size() < static_cast<size_t>(kLines)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  writer.join();
  store_->Finish("jr_live");
  poll();
  store_->Stop();
  ASSERT_EQ(printed.size(), static_cast<size_t>(kLines));
  for (int i = 0; i < kLines; ++i) ASSERT_EQ(printed[i], i);
  EXPECT_EQ(AllMessages("jr_live").size(), static_cast<size_t>(kLines));
}

TEST_F(LogStoreTest, ProcessBytesAreSanitizedAndStayWithinTheEventLimit) {
  // 200,000 invalid bytes grow to 600,000 bytes of U+FFFD: still events of at most 256 KiB.
  AppendOut("jr_1", std::string(200000, '\xff') + "\n");
  // A last line cut in the middle of a character, as a killed process leaves it.
  AppendOut("jr_1", "caf\xc3");
  store_->Finish("jr_1");
  Strings messages = AllMessages("jr_1");
  ASSERT_GE(messages.size(), 4u);
  size_t replacements = 0;
  for (size_t i = 0; i + 1 < messages.size(); ++i) {
    EXPECT_LE(messages[i].size(), kMaxEventBytes);
    EXPECT_TRUE(IsValidUtf8(messages[i]));
    replacements += messages[i].size() / 3;
  }
  EXPECT_EQ(replacements, 200000u);
  EXPECT_EQ(messages.back(), "caf\xEF\xBF\xBD");
}

TEST_F(LogStoreTest, EventsAreSanitizedWhenServedToo) {
  // An event file with bytes that are not UTF-8 (written by an older server, or damaged):
  // every response still carries valid UTF-8 and never throws.
  store_->Follow("jr_1");
  AppendOut("jr_1", "ok\n");
  store_->Finish("jr_1");
  {
    std::ofstream events(root_ + "/jr_1/output.events", std::ios::app | std::ios::binary);
    events << (kT0 + 5) << "\tbad \xc3\x28 \xff\n";
  }
  Json get = Get({{"logGroupName", kOut}, {"logStreamName", "jr_1"}, {"startFromHead", true}});
  ASSERT_EQ(get["events"].size(), 2u);
  Json back = Get({{"logGroupName", kOut}, {"logStreamName", "jr_1"}});
  Json filter = Filter({{"logGroupName", kOut}, {"filterPattern", "bad"}});
  ASSERT_EQ(filter["events"].size(), 1u);
  for (const Json* r : {&get, &back, &filter}) {
    for (const Json& ev : (*r)["events"]) {
      EXPECT_TRUE(IsValidUtf8(ev["message"].get<std::string>())) << DumpJson(ev);
    }
    EXPECT_NO_THROW((void)r->dump());
  }
  EXPECT_EQ(filter["events"][0]["message"], "bad \xEF\xBF\xBD( \xEF\xBF\xBD");
}

TEST_F(LogStoreTest, AFilterPatternOverCloudWatchsLimitIsRefusedBeforeAnyWork) {
  std::string huge;
  for (int i = 0; i < 50000; ++i) huge += "t" + std::to_string(i) + " ";
  Result<Json> r = store_->FilterLogEvents({{"logGroupName", kOut}, {"filterPattern", huge}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  r = store_->FilterLogEvents(
      {{"logGroupName", kOut}, {"filterPattern", std::string(1024, 'x')}});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
}

TEST_F(LogStoreTest, DescribeLogStreamsPagesThroughManyStreamsAndSurvivesARestart) {
  // Streams get their last events in the reverse of their name order; some have none.
  const int kStreams = 300;
  auto name = [](int i) {
    char buf[16];
    snprintf(buf, sizeof(buf), "jr_%04d", i);
    return std::string(buf);
  };
  for (int i = kStreams - 1; i >= 0; --i) {
    store_->Follow(name(i));
    if (i % 7 != 0) AppendOut(name(i), "x\n");
    store_->PollOnce();
    clock_.Advance(1);
  }
  auto all_pages = [&](Json request, int page_size) {
    request["limit"] = page_size;
    Strings out;
    for (int page = 0; page < 1000; ++page) {
      Result<Json> r = store_->DescribeLogStreams(request);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (!r.ok()) break;
      EXPECT_LE((*r)["logStreams"].size(), static_cast<size_t>(page_size));
      for (const Json& s : (*r)["logStreams"]) out.push_back(s["logStreamName"]);
      if (!r->contains("nextToken")) break;
      request["nextToken"] = (*r)["nextToken"];
    }
    return out;
  };
  Strings by_name, by_time;
  for (int i = 0; i < kStreams; ++i) by_name.push_back(name(i));
  for (int i = 0; i < kStreams; i += 7) by_time.push_back(name(i));  // no events: first
  for (int i = kStreams - 1; i >= 0; --i) {
    if (i % 7 != 0) by_time.push_back(name(i));
  }
  Strings by_name_desc(by_name.rbegin(), by_name.rend());
  Strings by_time_desc(by_time.rbegin(), by_time.rend());
  Strings prefixed;
  for (int i = 100; i < 200; ++i) prefixed.push_back(name(i));
  Strings prefixed_desc(prefixed.rbegin(), prefixed.rend());

  for (int round = 0; round < 2; ++round) {
    for (int page_size : {1, 7, 50}) {
      EXPECT_EQ(all_pages({{"logGroupName", kOut}}, page_size), by_name) << page_size;
      EXPECT_EQ(all_pages({{"logGroupName", kOut}, {"descending", true}}, page_size),
                by_name_desc);
      EXPECT_EQ(all_pages({{"logGroupName", kOut}, {"orderBy", "LastEventTime"}}, page_size),
                by_time);
      EXPECT_EQ(all_pages({{"logGroupName", kOut}, {"orderBy", "LastEventTime"},
                           {"descending", true}},
                          page_size),
                by_time_desc);
      EXPECT_EQ(all_pages({{"logGroupName", kOut}, {"logStreamNamePrefix", "jr_01"}}, page_size),
                prefixed);
      EXPECT_EQ(all_pages({{"logGroupName", kOut}, {"logStreamNamePrefix", "jr_01"},
                           {"descending", true}},
                          page_size),
                prefixed_desc);
    }
    Result<Json> groups = store_->DescribeLogGroups({{"logGroupNamePrefix", kOut}});
    ASSERT_TRUE(groups.ok());
    // "<13-digit ts>\tx\n" per stream with an event.
    EXPECT_EQ((*groups)["logGroups"][0]["storedBytes"], (kStreams - 43) * 16);
    // A restart indexes the streams from the disk: the same answers.
    store_.reset();
    store_ = Open();
  }
}

TEST_F(LogStoreTest, APollDoesNotHoldUpOtherRunsOrFinish) {
  // 48 MiB of output in one run: one poll works on it for a while. Meanwhile another run's
  // Finish, a Follow and the API must not wait for that poll, and Finish of the big run itself
  // takes over at once with every line an event exactly once.
  const int kLines = 480000;
  {
    std::ofstream out(store_->StdoutPath("jr_big"), std::ios::binary);
    std::string line;
    for (int i = 0; i < kLines; ++i) {
      line = std::to_string(i) + " ";
      line.resize(99, 'p');
      line += '\n';
      out << line;
    }
  }
  store_->Follow("jr_big");
  store_->Follow("jr_small");
  AppendOut("jr_small", "small\n");
  std::atomic<bool> poll_done{false};
  std::thread poller([&] {
    store_->PollOnce();
    poll_done = true;
  });
  // Wait until the poll is inside jr_big (its first events are on disk).
  const std::string big_events = root_ + "/jr_big/output.events";
  for (int i = 0; i < 20000 && !poll_done; ++i) {
    std::error_code ec;
    if (fs::file_size(big_events, ec) > 0 && !ec) break;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  ASSERT_FALSE(poll_done.load()) << "the poll ended before the test could overlap it";
  store_->Finish("jr_small");
  store_->Follow("jr_other");
  Result<Json> streams = store_->DescribeLogStreams({{"logGroupName", kOut}});
  const bool overlapped = !poll_done.load();
  EXPECT_TRUE(overlapped) << "Finish of another run waited for the whole poll";
  ASSERT_TRUE(streams.ok());
  EXPECT_EQ(AllMessages("jr_small"), Strings{"small"});
  store_->Finish("jr_big");  // cuts the poll short and drains the rest itself
  poller.join();
  size_t count = 0;
  int expected = 0;
  Json request = {{"logGroupName", kOut}, {"logStreamName", "jr_big"}, {"startFromHead", true}};
  for (int page = 0; page < 1000; ++page) {
    Json r = Get(request);
    for (const Json& ev : r["events"]) {
      std::string m = ev["message"];
      ASSERT_EQ(std::stoi(m), expected) << "lost or repeated a line";
      ++expected;
      ++count;
    }
    if (r["events"].empty()) break;
    request["nextToken"] = r["nextForwardToken"];
  }
  EXPECT_EQ(count, static_cast<size_t>(kLines));
}

}  // namespace
}  // namespace openglue::logs
