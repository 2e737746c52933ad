// QualityService over a real SQLite store with an injected clock and random source: the DQDL
// structural check and rule count, ruleset CRUD with its errors, filters, tags and paging, and
// the published results (validation, a run publishing as itself, get / list / batch get), all
// read back after a restart.
#include "quality/quality_service.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "quality/ruleset_text.h"
#include "resource/tags.h"
#include "store/sqlite_store.h"

namespace openglue::quality {
namespace {

// 2026-03-01 00:00:00 UTC.
constexpr int64_t kStartMs = 1772323200000LL;

int64_t Count(std::string_view dqdl) {
  Result<int64_t> count = CheckRuleset(dqdl);
  EXPECT_TRUE(count.ok()) << dqdl << ": " << count.status().ToString();
  return count.ok() ? *count : -1;
}

Status CheckError(std::string_view dqdl) {
  Result<int64_t> count = CheckRuleset(dqdl);
  EXPECT_FALSE(count.ok()) << dqdl << " was accepted with " << (count.ok() ? *count : 0) << " rules";
  return count.ok() ? Status::OK() : count.status();
}

TEST(RulesetTextTest, CountsTopLevelRules) {
  EXPECT_EQ(Count("Rules = [ IsComplete \"id\" ]"), 1);
  EXPECT_EQ(Count("Rules = [ IsComplete \"id\", IsUnique \"id\", RowCount > 10 ]"), 3);
  EXPECT_EQ(Count("Rules = [ ]"), 0);
  EXPECT_EQ(Count("Rules=[IsComplete \"a\",]"), 1);  // a trailing comma adds no rule
  // Commas inside lists, parentheses and strings do not split rules.
  EXPECT_EQ(Count("Rules = [\n  ColumnValues \"status\" in [\"a\", \"b\", \"c\"],\n"
                  "  (IsComplete \"a\") or (IsComplete \"b\"),\n"
                  "  ColumnValues \"name\" matches \"[a-z],]*\",\n"
                  "  CustomSql \"select count(*) from primary where x = 'a,b'\" > 0\n]"),
            4);
  // Analyzers and other sections around it; `Rules` inside a string does not count.
  EXPECT_EQ(Count("Analyzers = [ RowCount, Completeness \"Rules\" ]\n"
                  "Rules = [ IsComplete \"x\", IsComplete \"y\" ]"),
            2);
  // Comments.
  EXPECT_EQ(Count("# checks, for orders [draft]\nRules = [\n  IsComplete \"id\", # the key, always\n"
                  "  # IsUnique \"id\",\n]"),
            1);
  EXPECT_EQ(Count("Rules = [ IsComplete \"a\\\"b,c\" ]"), 1);  // an escaped quote
}

TEST(RulesetTextTest, RefusesWhatHasNoClosedRulesList) {
  EXPECT_NE(CheckError("").message().find("empty"), std::string::npos);
  EXPECT_NE(CheckError(" \n\t").message().find("empty"), std::string::npos);
  EXPECT_NE(CheckError("IsComplete \"id\"").message().find("no `Rules"), std::string::npos);
  EXPECT_NE(CheckError("Analyzers = [ RowCount ]").message().find("no `Rules"), std::string::npos);
  EXPECT_NE(CheckError("Completeness \"Rules = [ x ]\"").message().find("no `Rules"), std::string::npos);
  EXPECT_NE(CheckError("MyRules = [ IsComplete \"a\" ]").message().find("no `Rules"), std::string::npos);
  EXPECT_NE(CheckError("Rules IsComplete \"a\"").message().find("not followed by a `[`"),
            std::string::npos);
  EXPECT_NE(CheckError("Rules = [ IsComplete \"a\"").message().find("never closed"), std::string::npos);
  EXPECT_NE(CheckError("Rules = [ IsComplete \"a ]").message().find("string opened at line 1"),
            std::string::npos);
  EXPECT_NE(CheckError("Rules = [ (IsComplete \"a\" ]").message().find("needs a ')'"),
            std::string::npos);
  EXPECT_NE(CheckError("] Rules = [ ]").message().find("closes nothing"), std::string::npos);
  EXPECT_EQ(CheckError("Rules = [").code(), StatusCode::kInvalidInput);
}

class QualityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/og-quality-XXXXXX";
    dir_ = mkdtemp(pattern);
    Restart();
  }
  void TearDown() override {
    service_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  // A new store and service over the same database file: what a server restart does.
  void Restart() {
    service_.reset();
    store_.reset();
    auto store = store::SqliteStore::Make(dir_ + "/catalog.db");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    auto made = QualityService::Make(store_.get(), &clock_, &random_, {"us-east-1", "123456789012"});
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    service_ = std::move(*made);
  }
  Json Ok(const Result<Json>& result) {
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : Json();
  }
  Status Err(const Result<Json>& result) {
    EXPECT_FALSE(result.ok()) << "succeeded with " << (result.ok() ? DumpJson(*result) : "");
    return result.ok() ? Status::OK() : result.status();
  }
  Json Tags(const std::string& arn) {
    auto txn = store_->BeginRead();
    EXPECT_TRUE(txn.ok());
    auto tags = resource::LoadTags(txn->get(), arn);
    EXPECT_TRUE(tags.ok());
    return tags.ok() ? *tags : Json();
  }
  // A publish request with the required members.
  Json Published(double started_on, const std::string& job, const std::string& run_id) {
    return Json{{"JobName", job},
                {"JobRunId", run_id},
                {"Score", 0.5},
                {"StartedOn", started_on},
                {"CompletedOn", started_on + 5},
                {"RuleResults",
                 {{{"Name", "Rule_1"}, {"Description", "IsComplete \"id\""}, {"Result", "PASS"},
                   {"EvaluatedMetrics", {{"Column.id.Completeness", 1.0}}},
                   {"EvaluatedRule", "IsComplete \"id\""}},
                  {{"Name", "Rule_2"}, {"Result", "FAIL"},
                   {"EvaluationMessage", "Value: 0.5 does not meet the constraint requirement!"},
                   {"EvaluatedMetrics", {{"Column.v.Completeness", 0.5}}}}}}};
  }

  std::string dir_;
  FakeClock clock_{kStartMs};
  SeededRandom random_{42};
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<QualityService> service_;
};

TEST_F(QualityTest, RulesetCreateGetUpdateDelete) {
  const std::string arn = "arn:aws:glue:us-east-1:123456789012:dataQualityRuleset/orders_dq";
  Json created = Ok(service_->CreateDataQualityRuleset(
      Json{{"Name", "orders_dq"},
           {"Description", "orders checks"},
           {"Ruleset", "Rules = [ IsComplete \"id\", RowCount > 0 ]"},
           {"TargetTable", {{"DatabaseName", "sales"}, {"TableName", "orders"}}},
           {"DataQualitySecurityConfiguration", "dqsec"},
           {"Tags", {{"team", "etl"}}},
           {"ClientToken", "tok-1"}}));
  EXPECT_EQ(created, (Json{{"Name", "orders_dq"}}));
  EXPECT_EQ(Tags(arn), (Json{{"team", "etl"}}));

  Json got = Ok(service_->GetDataQualityRuleset(Json{{"Name", "orders_dq"}}));
  EXPECT_EQ(got, (Json{{"Name", "orders_dq"},
                       {"Description", "orders checks"},
                       {"Ruleset", "Rules = [ IsComplete \"id\", RowCount > 0 ]"},
                       {"TargetTable", {{"DatabaseName", "sales"}, {"TableName", "orders"}}},
                       {"CreatedOn", kStartMs / 1000.0},
                       {"LastModifiedOn", kStartMs / 1000.0},
                       {"DataQualitySecurityConfiguration", "dqsec"}}));

  // A second create: AlreadyExists, unless it is the same request retried (its ClientToken).
  Status again = Err(service_->CreateDataQualityRuleset(
      Json{{"Name", "orders_dq"}, {"Ruleset", "Rules = [ IsComplete \"x\" ]"}}));
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.message().find("orders_dq"), std::string::npos);
  EXPECT_EQ(Ok(service_->CreateDataQualityRuleset(
                Json{{"Name", "orders_dq"}, {"Ruleset", "Rules = [ IsComplete \"id\" ]"},
                     {"ClientToken", "tok-1"}})),
            (Json{{"Name", "orders_dq"}}));
  EXPECT_EQ(Err(service_->CreateDataQualityRuleset(
                    Json{{"Name", "orders_dq"}, {"Ruleset", "Rules = [ IsComplete \"id\" ]"},
                         {"ClientToken", "tok-2"}}))
                .code(),
            StatusCode::kAlreadyExists);

  // Update: the ruleset text is checked; LastModifiedOn moves, CreatedOn stays.
  clock_.Advance(60000);
  Status bad = Err(service_->UpdateDataQualityRuleset(
      Json{{"Name", "orders_dq"}, {"Ruleset", "IsComplete \"id\""}}));
  EXPECT_EQ(bad.code(), StatusCode::kInvalidInput);
  Json updated = Ok(service_->UpdateDataQualityRuleset(
      Json{{"Name", "orders_dq"}, {"Ruleset", "Rules = [ IsUnique \"id\" ]"}}));
  EXPECT_EQ(updated, (Json{{"Name", "orders_dq"},
                           {"Description", "orders checks"},
                           {"Ruleset", "Rules = [ IsUnique \"id\" ]"}}));
  got = Ok(service_->GetDataQualityRuleset(Json{{"Name", "orders_dq"}}));
  EXPECT_EQ(got["Ruleset"], "Rules = [ IsUnique \"id\" ]");
  EXPECT_EQ(got["CreatedOn"], kStartMs / 1000.0);
  EXPECT_EQ(got["LastModifiedOn"], kStartMs / 1000.0 + 60);
  updated = Ok(service_->UpdateDataQualityRuleset(Json{{"Name", "orders_dq"}, {"Description", "new"}}));
  EXPECT_EQ(updated["Description"], "new");
  EXPECT_EQ(updated["Ruleset"], "Rules = [ IsUnique \"id\" ]");

  // The tag service finds it (and only it).
  {
    auto txn = store_->BeginRead();
    ASSERT_TRUE(txn.ok());
    EXPECT_TRUE(RulesetExists(txn->get(), {"dataQualityRuleset", "orders_dq"}).ok());
    EXPECT_EQ(RulesetExists(txn->get(), {"dataQualityRuleset", "other"}).code(),
              StatusCode::kEntityNotFound);
  }

  EXPECT_EQ(Ok(service_->DeleteDataQualityRuleset(Json{{"Name", "orders_dq"}})), Json::object());
  EXPECT_EQ(Tags(arn), Json::object());
  for (const Result<Json>& missing :
       {service_->GetDataQualityRuleset(Json{{"Name", "orders_dq"}}),
        service_->UpdateDataQualityRuleset(Json{{"Name", "orders_dq"}, {"Description", "x"}}),
        service_->DeleteDataQualityRuleset(Json{{"Name", "orders_dq"}})}) {
    Status st = Err(missing);
    EXPECT_EQ(st.code(), StatusCode::kEntityNotFound);
    EXPECT_NE(st.message().find("orders_dq"), std::string::npos) << st.message();
  }
}

TEST_F(QualityTest, CreateRefusesARulesetWithoutRules) {
  Status st = Err(service_->CreateDataQualityRuleset(Json{{"Name", "r"}, {"Ruleset", "IsComplete \"a\""}}));
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_NE(st.message().find("Rules"), std::string::npos);
  EXPECT_EQ(Err(service_->GetDataQualityRuleset(Json{{"Name", "r"}})).code(),
            StatusCode::kEntityNotFound);
}

TEST_F(QualityTest, ListRulesetsFiltersCountsAndPages) {
  auto create = [&](const std::string& name, const std::string& text, const std::string& table,
                    Json tags) {
    Json request{{"Name", name}, {"Ruleset", text}, {"Description", "about " + name}};
    if (!table.empty()) request["TargetTable"] = {{"DatabaseName", "sales"}, {"TableName", table}};
    if (!tags.empty()) request["Tags"] = tags;
    Ok(service_->CreateDataQualityRuleset(request));
    clock_.Advance(10000);
  };
  create("a", "Rules = [ IsComplete \"x\" ]", "orders", {{"env", "prod"}});
  create("b", "Rules = [ IsComplete \"x\", IsUnique \"x\", RowCount > 1 ]", "orders", Json::object());
  create("c", "Rules = [ ]", "customers", {{"env", "prod"}});
  create("d", "Rules = [ ColumnCount = 2, IsPrimaryKey \"k\" ]", "", Json::object());

  Json all = Ok(service_->ListDataQualityRulesets(Json::object()));
  ASSERT_EQ(all["Rulesets"].size(), 4u);
  EXPECT_FALSE(all.contains("NextToken"));
  EXPECT_EQ(all["Rulesets"][1],
            (Json{{"Name", "b"},
                  {"Description", "about b"},
                  {"CreatedOn", kStartMs / 1000.0 + 10},
                  {"LastModifiedOn", kStartMs / 1000.0 + 10},
                  {"TargetTable", {{"DatabaseName", "sales"}, {"TableName", "orders"}}},
                  {"RuleCount", 3}}));
  std::vector<int64_t> counts;
  for (const Json& r : all["Rulesets"]) counts.push_back(r["RuleCount"].get<int64_t>());
  EXPECT_EQ(counts, (std::vector<int64_t>{1, 3, 0, 2}));
  EXPECT_FALSE(all["Rulesets"][3].contains("TargetTable"));

  auto names = [&](const Json& request) {
    std::vector<std::string> out;
    Json page = Ok(service_->ListDataQualityRulesets(request));
    for (const Json& r : page["Rulesets"]) out.push_back(r["Name"]);
    return out;
  };
  using Names = std::vector<std::string>;
  const double t0 = kStartMs / 1000.0;
  EXPECT_EQ(names({{"Filter", {{"Name", "c"}}}}), Names{"c"});
  EXPECT_EQ(names({{"Filter", {{"Description", "about d"}}}}), Names{"d"});
  EXPECT_EQ(names({{"Filter", {{"TargetTable", {{"DatabaseName", "sales"}, {"TableName", "orders"}}}}}}),
            (Names{"a", "b"}));
  EXPECT_EQ(names({{"Filter", {{"TargetTable", {{"DatabaseName", "sales"}, {"TableName", "orders"},
                                                {"CatalogId", "999"}}}}}}),
            Names{});
  EXPECT_EQ(names({{"Filter", {{"CreatedAfter", t0 + 10}}}}), (Names{"c", "d"}));
  EXPECT_EQ(names({{"Filter", {{"CreatedBefore", t0 + 10}}}}), (Names{"a"}));
  EXPECT_EQ(names({{"Filter", {{"LastModifiedAfter", t0 + 5}, {"LastModifiedBefore", t0 + 25}}}}),
            (Names{"b", "c"}));
  EXPECT_EQ(names({{"Tags", {{"env", "prod"}}}}), (Names{"a", "c"}));

  // Pages of two, with a token, then the rest.
  Json first = Ok(service_->ListDataQualityRulesets(Json{{"MaxResults", 2}}));
  ASSERT_EQ(first["Rulesets"].size(), 2u);
  ASSERT_TRUE(first.contains("NextToken"));
  Json second = Ok(service_->ListDataQualityRulesets(
      Json{{"MaxResults", 2}, {"NextToken", first["NextToken"]}}));
  ASSERT_EQ(second["Rulesets"].size(), 2u);
  EXPECT_EQ(second["Rulesets"][0]["Name"], "c");
  EXPECT_EQ(second["Rulesets"][1]["Name"], "d");
  EXPECT_FALSE(second.contains("NextToken"));
  EXPECT_EQ(Err(service_->ListDataQualityRulesets(Json{{"NextToken", "!!! not base64"}})).code(),
            StatusCode::kInvalidInput);
}

TEST_F(QualityTest, PublishGetListAndBatchGetResults) {
  const double t0 = kStartMs / 1000.0;
  Json first = Published(t0, "orders", "jr_1");
  first["RulesetName"] = "orders_dq";
  first["EvaluationContext"] = "EvaluateDataQuality_node1";
  first["Ruleset"] = "Rules = [ IsComplete \"id\", IsComplete \"v\" ]";
  first["DataSource"] = {{"GlueTable", {{"DatabaseName", "sales"}, {"TableName", "orders"}}}};
  first["AnalyzerResults"] = {{{"Name", "RowCount"}, {"EvaluatedMetrics", {{"Dataset.*.RowCount", 2.0}}}}};
  first["Observations"] = {{{"Description", "RowCount is stable"}}};
  Json published = Ok(service_->PublishDataQualityResult(first, Publisher{}));
  std::string id1 = published["ResultId"];
  EXPECT_TRUE(std::regex_match(id1, std::regex("dqresult-[0-9a-f]{40}"))) << id1;
  EXPECT_EQ(published.size(), 1u);

  Json second = Published(t0 + 100, "customers", "jr_2");
  second["DataSource"] = {{"GlueTable", {{"DatabaseName", "sales"}, {"TableName", "customers"}}}};
  std::string id2 = Ok(service_->PublishDataQualityResult(second, Publisher{}))["ResultId"];
  std::string id3 =
      Ok(service_->PublishDataQualityResult(Published(t0 + 50, "orders", "jr_3"), Publisher{}))["ResultId"];
  EXPECT_NE(id1, id2);
  EXPECT_NE(id2, id3);

  // Get: exactly what was published (the DQDL text is kept, not served), with its id.
  Json expected = first;
  expected.erase("Ruleset");
  expected["ResultId"] = id1;
  // ... and the profile its statistics belong to.
  Json got1 = Ok(service_->GetDataQualityResult(Json{{"ResultId", id1}}));
  ASSERT_TRUE(got1.contains("ProfileId"));
  EXPECT_TRUE(std::regex_match(got1["ProfileId"].get<std::string>(), std::regex("dqprofile-[0-9a-f]{40}")));
  expected["ProfileId"] = got1["ProfileId"];
  EXPECT_EQ(got1, expected);
  Status missing = Err(service_->GetDataQualityResult(Json{{"ResultId", "dqresult-nope"}}));
  EXPECT_EQ(missing.code(), StatusCode::kEntityNotFound);
  EXPECT_NE(missing.message().find("dqresult-nope"), std::string::npos);

  // List: newest StartedOn first, descriptions only.
  Json listed = Ok(service_->ListDataQualityResults(Json::object()));
  ASSERT_EQ(listed["Results"].size(), 3u);
  EXPECT_EQ(listed["Results"][0],
            (Json{{"ResultId", id2},
                  {"DataSource", {{"GlueTable", {{"DatabaseName", "sales"}, {"TableName", "customers"}}}}},
                  {"JobName", "customers"},
                  {"JobRunId", "jr_2"},
                  {"StartedOn", t0 + 100}}));
  EXPECT_EQ(listed["Results"][1]["ResultId"], id3);
  EXPECT_EQ(listed["Results"][2]["ResultId"], id1);
  EXPECT_FALSE(listed["Results"][1].contains("DataSource"));

  auto ids = [&](const Json& filter) {
    std::vector<std::string> out;
    Json page = Ok(service_->ListDataQualityResults(Json{{"Filter", filter}}));
    for (const Json& r : page["Results"]) out.push_back(r["ResultId"]);
    return out;
  };
  using Ids = std::vector<std::string>;
  EXPECT_EQ(ids({{"JobName", "orders"}}), (Ids{id3, id1}));
  EXPECT_EQ(ids({{"JobRunId", "jr_3"}}), (Ids{id3}));
  EXPECT_EQ(ids({{"StartedAfter", t0}}), (Ids{id2, id3}));
  EXPECT_EQ(ids({{"StartedBefore", t0 + 100}}), (Ids{id3, id1}));
  EXPECT_EQ(ids({{"StartedAfter", t0 + 10}, {"StartedBefore", t0 + 60}}), (Ids{id3}));
  EXPECT_EQ(ids({{"DataSource", {{"GlueTable", {{"DatabaseName", "sales"}, {"TableName", "orders"}}}}}}),
            (Ids{id1}));
  EXPECT_EQ(ids({{"JobName", "nobody"}}), Ids{});

  // Pages of two.
  Json page1 = Ok(service_->ListDataQualityResults(Json{{"MaxResults", 2}}));
  ASSERT_EQ(page1["Results"].size(), 2u);
  ASSERT_TRUE(page1.contains("NextToken"));
  Json page2 = Ok(service_->ListDataQualityResults(Json{{"MaxResults", 2}, {"NextToken", page1["NextToken"]}}));
  ASSERT_EQ(page2["Results"].size(), 1u);
  EXPECT_EQ(page2["Results"][0]["ResultId"], id1);
  EXPECT_FALSE(page2.contains("NextToken"));

  // Batch get: the found ones in the asked order, the rest in ResultsNotFound.
  Json batch = Ok(service_->BatchGetDataQualityResult(
      Json{{"ResultIds", {id3, "dqresult-0000", id1}}}));
  ASSERT_EQ(batch["Results"].size(), 2u);
  EXPECT_EQ(batch["Results"][0]["ResultId"], id3);
  EXPECT_EQ(batch["Results"][1], expected);
  EXPECT_EQ(batch["ResultsNotFound"], (Json{"dqresult-0000"}));
  Json all_found = Ok(service_->BatchGetDataQualityResult(Json{{"ResultIds", {id2}}}));
  EXPECT_EQ(all_found["ResultsNotFound"], Json::array());
  EXPECT_EQ(all_found["Results"].size(), 1u);

  // Everything is still there after a restart.
  Restart();
  EXPECT_EQ(Ok(service_->GetDataQualityResult(Json{{"ResultId", id1}})), expected);
  EXPECT_EQ(Ok(service_->ListDataQualityResults(Json::object()))["Results"].size(), 3u);
}

TEST_F(QualityTest, RulesetsSurviveARestart) {
  Ok(service_->CreateDataQualityRuleset(Json{{"Name", "kept"}, {"Ruleset", "Rules = [ RowCount > 0 ]"},
                                             {"Tags", {{"k", "v"}}}}));
  Restart();
  Json got = Ok(service_->GetDataQualityRuleset(Json{{"Name", "kept"}}));
  EXPECT_EQ(got["Ruleset"], "Rules = [ RowCount > 0 ]");
  EXPECT_EQ(Ok(service_->ListDataQualityRulesets(Json::object()))["Rulesets"][0]["RuleCount"], 1);
  EXPECT_EQ(Tags("arn:aws:glue:us-east-1:123456789012:dataQualityRuleset/kept"), (Json{{"k", "v"}}));
}

TEST_F(QualityTest, PublishRefusesBadMembers) {
  const double t0 = kStartMs / 1000.0;
  struct Case {
    const char* what;
    std::function<void(Json*)> change;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"no Score", [](Json* r) { r->erase("Score"); }, "Score is required"},
      {"Score above 1", [](Json* r) { (*r)["Score"] = 1.5; }, "Score must be a number from 0 to 1"},
      {"Score a string", [](Json* r) { (*r)["Score"] = "0.5"; }, "Score must be a number"},
      {"no StartedOn", [](Json* r) { r->erase("StartedOn"); }, "StartedOn is required"},
      {"CompletedOn text", [](Json* r) { (*r)["CompletedOn"] = "soon"; }, "CompletedOn must be a number"},
      {"ends before it starts", [&](Json* r) { (*r)["CompletedOn"] = t0 - 1; }, "CompletedOn is before StartedOn"},
      {"no RuleResults", [](Json* r) { r->erase("RuleResults"); }, "RuleResults is required"},
      {"RuleResults an object", [](Json* r) { (*r)["RuleResults"] = Json::object(); }, "RuleResults must be a list"},
      {"a rule without Result", [](Json* r) { (*r)["RuleResults"][0].erase("Result"); },
       "RuleResults[0].Result is required"},
      {"an unknown Result", [](Json* r) { (*r)["RuleResults"][1]["Result"] = "MAYBE"; },
       "RuleResults[1].Result must be PASS, FAIL or ERROR, not MAYBE"},
      {"a metric that is text", [](Json* r) { (*r)["RuleResults"][0]["EvaluatedMetrics"]["m"] = "x"; },
       "EvaluatedMetrics.m must be a number"},
      {"an unknown member", [](Json* r) { (*r)["Scroe"] = 1; }, "unknown member Scroe"},
      {"JobName a number", [](Json* r) { (*r)["JobName"] = 7; }, "JobName must be a string"},
      {"DataSource without a table", [](Json* r) { (*r)["DataSource"] = Json::object(); },
       "DataSource must name a GlueTable"},
      {"GlueTable without TableName",
       [](Json* r) { (*r)["DataSource"] = {{"GlueTable", {{"DatabaseName", "d"}}}}; },
       "DataSource.GlueTable.TableName is required"},
  };
  for (const Case& c : cases) {
    Json request = Published(t0, "orders", "jr_1");
    c.change(&request);
    Status st = Err(service_->PublishDataQualityResult(request, Publisher{}));
    EXPECT_EQ(st.code(), StatusCode::kInvalidInput) << c.what;
    EXPECT_NE(st.message().find(c.message), std::string::npos) << c.what << ": " << st.message();
  }
  EXPECT_EQ(Ok(service_->ListDataQualityResults(Json::object()))["Results"].size(), 0u);
  // Score 0 and 1 and an empty RuleResults are fine.
  for (double score : {0.0, 1.0}) {
    Json request = Published(t0, "orders", "jr_1");
    request["Score"] = score;
    request["RuleResults"] = Json::array();
    Ok(service_->PublishDataQualityResult(request, Publisher{}));
  }
}

TEST_F(QualityTest, ARunPublishesAsItself) {
  const double t0 = kStartMs / 1000.0;
  Publisher run{true, "orders", "jr_7"};
  // Absent JobName / JobRunId are the run's.
  Json request = Published(t0, "orders", "jr_7");
  request.erase("JobName");
  request.erase("JobRunId");
  std::string id = Ok(service_->PublishDataQualityResult(request, run))["ResultId"];
  Json got = Ok(service_->GetDataQualityResult(Json{{"ResultId", id}}));
  EXPECT_EQ(got["JobName"], "orders");
  EXPECT_EQ(got["JobRunId"], "jr_7");
  // Its own, given: fine. Another job or run: AccessDenied, nothing recorded.
  Ok(service_->PublishDataQualityResult(Published(t0, "orders", "jr_7"), run));
  for (const Json& other : {Published(t0, "payroll", "jr_7"), Published(t0, "orders", "jr_8")}) {
    Status st = Err(service_->PublishDataQualityResult(other, run));
    EXPECT_EQ(st.code(), StatusCode::kAccessDenied);
    EXPECT_NE(st.message().find("jr_7"), std::string::npos) << st.message();
  }
  EXPECT_EQ(Ok(service_->ListDataQualityResults(Json::object()))["Results"].size(), 2u);
  // An administrator records what it is given.
  std::string admin = Ok(service_->PublishDataQualityResult(Published(t0, "payroll", "jr_9"),
                                                            Publisher{}))["ResultId"];
  EXPECT_EQ(Ok(service_->GetDataQualityResult(Json{{"ResultId", admin}}))["JobName"], "payroll");
}

TEST_F(QualityTest, EveryMetricOfAResultIsAStatisticOfItsProfile) {
  const double t0 = kStartMs / 1000.0;
  const Json orders{{"GlueTable", {{"DatabaseName", "sales"}, {"TableName", "orders"}}}};
  Json a = Published(t0, "orders", "jr_1");
  a["DataSource"] = orders;
  a["RuleResults"].push_back({{"Name", "Rule_3"}, {"Result", "PASS"},
                              {"EvaluatedMetrics", {{"Multicolumn.a,b.ColumnCorrelation", 0.25}}}});
  a["AnalyzerResults"] = {{{"Name", "RowCount"}, {"EvaluatedMetrics", {{"Dataset.*.RowCount", 2.0}}}}};
  Json b = Published(t0 + 100, "orders", "jr_2");
  b["DataSource"] = orders;
  b["RuleResults"][0]["EvaluatedMetrics"]["Column.id.Completeness"] = 0.9;
  std::string ra = Ok(service_->PublishDataQualityResult(a, Publisher{}))["ResultId"];
  std::string rb = Ok(service_->PublishDataQualityResult(b, Publisher{}))["ResultId"];
  std::string pa = Ok(service_->GetDataQualityResult(Json{{"ResultId", ra}}))["ProfileId"];
  std::string pb = Ok(service_->GetDataQualityResult(Json{{"ResultId", rb}}))["ProfileId"];
  ASSERT_NE(pa, pb);

  Json of_a = Ok(service_->ListDataQualityStatistics(Json{{"ProfileId", pa}}))["Statistics"];
  ASSERT_EQ(of_a.size(), 4u) << of_a.dump();
  std::map<std::string, Json> by_name;
  for (const Json& stat : of_a) by_name[stat["StatisticProperties"]["MetricName"]] = stat;
  const Json& id_completeness = by_name["Column.id.Completeness"];
  EXPECT_EQ(id_completeness["StatisticName"], "Completeness");
  EXPECT_EQ(id_completeness["EvaluationLevel"], "Column");
  EXPECT_EQ(id_completeness["ColumnsReferenced"], Json({"id"}));
  EXPECT_EQ(id_completeness["DoubleValue"], 1.0);
  EXPECT_EQ(id_completeness["RecordedOn"], t0);
  EXPECT_EQ(id_completeness["RunIdentifier"], Json({{"JobRunId", "jr_1"}}));
  EXPECT_EQ(id_completeness["ProfileId"], pa);
  EXPECT_TRUE(std::regex_match(id_completeness["StatisticId"].get<std::string>(),
                               std::regex("dqstat-[0-9a-f]{40}")));
  EXPECT_EQ(by_name["Multicolumn.a,b.ColumnCorrelation"]["ColumnsReferenced"], Json({"a", "b"}));
  EXPECT_EQ(by_name["Multicolumn.a,b.ColumnCorrelation"]["EvaluationLevel"], "Multicolumn");
  EXPECT_EQ(by_name["Dataset.*.RowCount"]["StatisticName"], "RowCount");
  EXPECT_EQ(by_name["Dataset.*.RowCount"]["EvaluationLevel"], "Dataset");
  EXPECT_EQ(by_name["Dataset.*.RowCount"]["ColumnsReferenced"], Json::array());

  // A StatisticId is the metric's series over the table's results, newest first.
  std::string series = id_completeness["StatisticId"];
  Json history = Ok(service_->ListDataQualityStatistics(Json{{"StatisticId", series}}))["Statistics"];
  ASSERT_EQ(history.size(), 2u);
  EXPECT_EQ(history[0]["DoubleValue"], 0.9);
  EXPECT_EQ(history[0]["ProfileId"], pb);
  EXPECT_EQ(history[1]["DoubleValue"], 1.0);
  Json recent = Ok(service_->ListDataQualityStatistics(
      Json{{"StatisticId", series}, {"TimestampFilter", {{"RecordedAfter", t0 + 50}}}}))["Statistics"];
  ASSERT_EQ(recent.size(), 1u);
  EXPECT_EQ(recent[0]["ProfileId"], pb);
  EXPECT_EQ(Ok(service_->ListDataQualityStatistics(Json{{"StatisticId", "dqstat-none"}}))["Statistics"],
            Json::array());

  // Annotations: one statistic of a profile, then a whole profile.
  EXPECT_EQ(Ok(service_->ListDataQualityStatisticAnnotations(Json::object()))["Annotations"], Json::array());
  Json put = Ok(service_->BatchPutDataQualityStatisticAnnotation(Json{{"InclusionAnnotations",
      {{{"ProfileId", pa}, {"StatisticId", series}, {"InclusionAnnotation", "EXCLUDE"}},
       {{"ProfileId", "dqprofile-none"}, {"StatisticId", series}, {"InclusionAnnotation", "EXCLUDE"}},
       {{"ProfileId", pa}, {"StatisticId", "dqstat-none"}, {"InclusionAnnotation", "EXCLUDE"}}}}}));
  ASSERT_EQ(put["FailedInclusionAnnotations"].size(), 2u);
  EXPECT_EQ(put["FailedInclusionAnnotations"][0]["ProfileId"], "dqprofile-none");
  EXPECT_EQ(put["FailedInclusionAnnotations"][1]["StatisticId"], "dqstat-none");
  Json annotations = Ok(service_->ListDataQualityStatisticAnnotations(Json::object()))["Annotations"];
  ASSERT_EQ(annotations.size(), 1u);
  EXPECT_EQ(annotations[0]["ProfileId"], pa);
  EXPECT_EQ(annotations[0]["StatisticId"], series);
  EXPECT_EQ(annotations[0]["StatisticRecordedOn"], t0);
  EXPECT_EQ(annotations[0]["InclusionAnnotation"]["Value"], "EXCLUDE");
  history = Ok(service_->ListDataQualityStatistics(Json{{"StatisticId", series}}))["Statistics"];
  EXPECT_FALSE(history[0].contains("InclusionAnnotation"));
  EXPECT_EQ(history[1]["InclusionAnnotation"]["Value"], "EXCLUDE");

  Ok(service_->PutDataQualityProfileAnnotation(Json{{"ProfileId", pb}, {"InclusionAnnotation", "INCLUDE"}}));
  Json of_b = Ok(service_->ListDataQualityStatisticAnnotations(Json{{"ProfileId", pb}}))["Annotations"];
  EXPECT_EQ(of_b.size(), 2u);  // b's two completeness metrics
  for (const Json& annotation : of_b) EXPECT_EQ(annotation["InclusionAnnotation"]["Value"], "INCLUDE");
  EXPECT_EQ(Err(service_->PutDataQualityProfileAnnotation(
                    Json{{"ProfileId", "dqprofile-none"}, {"InclusionAnnotation", "INCLUDE"}}))
                .code(),
            StatusCode::kEntityNotFound);
}

}  // namespace
}  // namespace openglue::quality
