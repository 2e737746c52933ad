#include "engine/json_records.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

namespace openglue::engine {
namespace {

TEST(JsonRecordsTest, SplitsConcatenatedValuesAndRootArrays) {
  std::vector<std::string_view> values;
  ASSERT_TRUE(SplitJsonValues(R"({"a":"}"} {"b":[1,{"c":2}]}
[1, {"x":"]"}])", true, &values).ok());
  ASSERT_EQ(values.size(), 4u);
  EXPECT_EQ(values[0], R"({"a":"}"})");
  EXPECT_EQ(values[1], R"({"b":[1,{"c":2}]})");
  EXPECT_EQ(values[2], "1");
  EXPECT_EQ(values[3], R"({"x":"]"})");
}

TEST(JsonRecordsTest, SplitRefusesUnbalancedInput) {
  std::vector<std::string_view> values;
  EXPECT_FALSE(SplitJsonValues(R"({"a": [1, 2})", false, &values).ok());
  values.clear();
  EXPECT_FALSE(SplitJsonValues(R"({"a": "open)", false, &values).ok());
  values.clear();
  EXPECT_FALSE(SplitJsonValues("[1, 2", true, &values).ok());
}

TEST(JsonRecordsTest, JsonPathForms) {
  EXPECT_EQ(ParseJsonPath("").value().kind, JsonPath::Kind::kNone);
  EXPECT_EQ(ParseJsonPath("$[*]").value().kind, JsonPath::Kind::kRootArray);
  auto field = ParseJsonPath("$.items[*]");
  ASSERT_TRUE(field.ok());
  EXPECT_EQ(field->field, "items");
  EXPECT_FALSE(ParseJsonPath("$.a.b[*]").ok());
  EXPECT_FALSE(ParseJsonPath("$..x").ok());
}

TEST(JsonRecordsTest, RecordsUnderAFieldArray) {
  std::vector<JsonValue> records;
  JsonPath path = ParseJsonPath("$.items[*]").value();
  ASSERT_TRUE(ParseJsonRecords(R"({"items":[{"a":1},{"a":2}],"other":3})", path, &records).ok());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]["a"], 2);
}

TEST(JsonRecordsTest, InvalidJsonIsAnErrorWithTheParsersReason) {
  std::vector<JsonValue> records;
  auto st = ParseJsonRecords(R"({"a": tru})", JsonPath{}, &records);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("parse error"), std::string::npos) << st.message();
  EXPECT_FALSE(ParseJsonRecords("42", JsonPath{}, &records).ok());
  std::string deep(1000, '[');
  EXPECT_FALSE(ParseJsonRecords(deep, JsonPath{}, &records).ok());
}

TEST(JsonRecordsTest, InferenceWidensNestsAndMakesChoices) {
  std::vector<JsonValue> records;
  for (const char* line : {R"({"n":1,"s":{"x":1},"l":[1]})", R"({"n":5000000000,"s":2,"l":[2.5]})",
                           R"({"n":null,"b":true})"}) {
    ASSERT_TRUE(ParseJsonRecords(line, JsonPath{}, &records).ok());
  }
  auto type = InferRecordsType(records);
  auto schema = arrow::schema(type->fields());
  EXPECT_TRUE(schema->GetFieldByName("n")->type()->Equals(*arrow::int64()));
  EXPECT_TRUE(schema->GetFieldByName("l")->type()->Equals(*arrow::list(arrow::float64())));
  EXPECT_TRUE(schema->GetFieldByName("b")->type()->Equals(*arrow::boolean()));
  auto s = schema->GetFieldByName("s")->type();
  ASSERT_EQ(s->id(), arrow::Type::DENSE_UNION);
  EXPECT_EQ(s->field(0)->name(), "struct");
  EXPECT_EQ(s->field(1)->name(), "int");
  auto batch = BuildJsonBatch(records, schema);
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  ASSERT_TRUE((*batch)->ValidateFull().ok());
  EXPECT_EQ((*batch)->num_rows(), 3);
  EXPECT_EQ((*batch)->GetColumnByName("n")->GetScalar(1).ValueOrDie()->ToString(), "5000000000");
  EXPECT_EQ((*batch)->GetColumnByName("s")->GetScalar(1).ValueOrDie()->ToString(),
            "union{int: int32 = 2}");
  EXPECT_TRUE((*batch)->GetColumnByName("b")->IsNull(0));
}

}  // namespace
}  // namespace openglue::engine
