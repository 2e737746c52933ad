#include <arrow/api.h>
#include <arrow/json/from_string.h>
#undef RETURN_NOT_OK

#include "engine/glue_cast.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace openglue::engine {
namespace {

using TypePtr = std::shared_ptr<arrow::DataType>;
using ArrayPtr = std::shared_ptr<arrow::Array>;

ArrayPtr A(const TypePtr& type, const std::string& json) {
  auto r = arrow::json::ArrayFromJSONString(type, json);
  EXPECT_TRUE(r.ok()) << r.status().ToString() << " for " << json;
  return *r;
}

ArrayPtr Cast(const ArrayPtr& array, const TypePtr& type) {
  auto r = GlueCast(array, type);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : nullptr;
}

void ExpectCast(const TypePtr& from, const std::string& in, const TypePtr& to, const std::string& out) {
  ArrayPtr expected = A(to, out);
  ArrayPtr actual = Cast(A(from, in), to);
  ASSERT_NE(actual, nullptr);
  ASSERT_TRUE(actual->ValidateFull().ok()) << actual->ValidateFull().ToString();
  EXPECT_TRUE(actual->Equals(*expected)) << from->ToString() << " -> " << to->ToString()
                                          << "\nexpected " << expected->ToString()
                                          << "\nactual   " << actual->ToString();
}

TEST(GlueCastTest, StringToIntegersTrimsAndNullsWhatDoesNotParse) {
  ExpectCast(arrow::utf8(), R"(["1", " 2 ", "+3", "-4", "1.9", "-2.7e0", "1e3", "", "x", null, "2147483648", "NaN", "1e30", ".5"])",
             arrow::int32(), "[1, 2, 3, -4, 1, -2, 1000, null, null, null, null, null, null, 0]");
  ExpectCast(arrow::utf8(), R"(["127", "128", "-128", "-129"])", arrow::int8(), "[127, null, -128, null]");
  ExpectCast(arrow::utf8(), R"(["32767", "32768"])", arrow::int16(), "[32767, null]");
  ExpectCast(arrow::utf8(), R"(["9223372036854775807", "-9223372036854775808", "9223372036854775808"])",
             arrow::int64(), "[9223372036854775807, -9223372036854775808, null]");
  ExpectCast(arrow::large_utf8(), R"(["7"])", arrow::int64(), "[7]");
}

TEST(GlueCastTest, StringToFloatingPoint) {
  ExpectCast(arrow::utf8(), R"(["1.5", " -2e3 ", "Infinity", "-inf", "abc", "", "1e400"])", arrow::float64(),
             "[1.5, -2000, Inf, -Inf, null, null, Inf]");
  ExpectCast(arrow::utf8(), R"(["1.25", "1e39", "1e-400"])", arrow::float32(), "[1.25, null, 0]");
  auto nan = Cast(A(arrow::utf8(), R"(["NaN"])"), arrow::float64());
  EXPECT_TRUE(std::isnan(std::static_pointer_cast<arrow::DoubleArray>(nan)->Value(0)));
}

TEST(GlueCastTest, StringToDecimalRoundsHalfUpAndChecksPrecision) {
  ExpectCast(arrow::utf8(), R"(["1.005", "-2.5", " 3 ", "12345678.99", "123456789.00", "1e2", "x", ""])",
             arrow::decimal128(10, 2),
             R"(["1.01", "-2.50", "3.00", "12345678.99", null, "100.00", null, null])");
}

TEST(GlueCastTest, StringToBoolean) {
  ExpectCast(arrow::utf8(), R"(["true", "FALSE", " t ", "no", "1", "0", "maybe", null])", arrow::boolean(),
             "[true, false, true, false, true, false, null, null]");
}

TEST(GlueCastTest, StringToDate) {
  ExpectCast(arrow::utf8(), R"(["2024-02-29", "2023-02-29", "2024-1-5", "2024-01-05 10:00:00", "2024-13-01", "20240101", ""])",
             arrow::date32(), "[19782, null, 19727, 19727, null, null, null]");
}

TEST(GlueCastTest, StringToTimestampWithFractionsAndOffsets) {
  // 2024-02-29 10:11:12 UTC = 1709201472 s.
  ExpectCast(arrow::utf8(),
             R"(["2024-02-29 10:11:12", "2024-02-29T10:11:12.5Z", "2024-02-29T11:11:12+01:00", "2024-02-29", "2024-02-29 25:00:00", "x"])",
             arrow::timestamp(arrow::TimeUnit::MICRO),
             "[1709201472000000, 1709201472500000, 1709201472000000, 1709164800000000, null, null]");
}

TEST(GlueCastTest, ValuesToString) {
  ExpectCast(arrow::int64(), "[1, -2, null]", arrow::utf8(), R"(["1", "-2", null])");
  ExpectCast(arrow::float64(), "[1, 2.5, 1e20]", arrow::utf8(), R"(["1.0", "2.5", "1e+20"])");
  ExpectCast(arrow::boolean(), "[true, false]", arrow::utf8(), R"(["true", "false"])");
  ExpectCast(arrow::date32(), "[19782]", arrow::utf8(), R"(["2024-02-29"])");
  ExpectCast(arrow::timestamp(arrow::TimeUnit::MICRO), "[1709201472500000, 1709201472000000]", arrow::utf8(),
             R"(["2024-02-29 10:11:12.5", "2024-02-29 10:11:12"])");
  ExpectCast(arrow::decimal128(5, 2), R"(["1.50"])", arrow::utf8(), R"(["1.50"])");
  ExpectCast(arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b", arrow::list(arrow::utf8()))}),
             R"([{"a": 1, "b": ["x", "y\""]}, null])", arrow::utf8(), R"(["{\"a\":1,\"b\":[\"x\",\"y\\\"\"]}", null])");
}

TEST(GlueCastTest, NumericNarrowingOutOfRangeIsNull) {
  ExpectCast(arrow::int64(), "[1, 300, -129, null]", arrow::int8(), "[1, null, null, null]");
  ExpectCast(arrow::float64(), "[1.9, -1.9, 3e10, NaN]", arrow::int32(), "[1, -1, null, null]");
  ExpectCast(arrow::float64(), "[1.5, 1e300]", arrow::float32(), "[1.5, null]");
  ExpectCast(arrow::int32(), "[1, 2]", arrow::float64(), "[1, 2]");
  ExpectCast(arrow::int32(), "[5, 123456789]", arrow::decimal128(5, 2), R"(["5.00", null])");
  ExpectCast(arrow::decimal128(10, 3), R"(["1.999", "-1.999"])", arrow::int32(), "[1, -1]");
  ExpectCast(arrow::decimal128(10, 3), R"(["1.995"])", arrow::decimal128(4, 2), R"(["2.00"])");
  ExpectCast(arrow::decimal128(10, 3), R"(["1.500"])", arrow::float64(), "[1.5]");
  ExpectCast(arrow::float64(), "[1.005, 1e20]", arrow::decimal128(6, 2), R"(["1.00", null])");
  ExpectCast(arrow::boolean(), "[true, false, null]", arrow::int32(), "[1, 0, null]");
  ExpectCast(arrow::int32(), "[0, 5]", arrow::boolean(), "[false, true]");
}

TEST(GlueCastTest, DatesAndTimestamps) {
  ExpectCast(arrow::date32(), "[1, -1]", arrow::timestamp(arrow::TimeUnit::MICRO), "[86400000000, -86400000000]");
  ExpectCast(arrow::timestamp(arrow::TimeUnit::MICRO), "[86400000001, -1]", arrow::date32(), "[1, -1]");
  ExpectCast(arrow::timestamp(arrow::TimeUnit::NANO), "[1500]", arrow::timestamp(arrow::TimeUnit::MICRO), "[1]");
  ExpectCast(arrow::timestamp(arrow::TimeUnit::MICRO), "[2500000]", arrow::int64(), "[2]");
  ExpectCast(arrow::int64(), "[2]", arrow::timestamp(arrow::TimeUnit::MICRO), "[2000000]");
  ExpectCast(arrow::int64(), "[2]", arrow::date32(), "[null]");
}

TEST(GlueCastTest, EveryScalarPairConvertsWithoutError) {
  std::vector<std::pair<TypePtr, std::string>> samples = {
      {arrow::boolean(), "[true, null]"}, {arrow::int8(), "[-5, null]"}, {arrow::int16(), "[300, null]"},
      {arrow::int32(), "[70000, null]"}, {arrow::int64(), "[5000000000, null]"},
      {arrow::float32(), "[1.5, null]"}, {arrow::float64(), "[-2.25, null]"},
      {arrow::decimal128(10, 2), R"(["12.34", null])"}, {arrow::utf8(), R"(["12", null])"},
      {arrow::binary(), R"(["ab", null])"}, {arrow::date32(), "[19782, null]"},
      {arrow::timestamp(arrow::TimeUnit::MICRO), "[1709201472000000, null]"}, {arrow::null(), "[null, null]"}};
  for (const auto& [from, json] : samples) {
    for (const auto& [to, unused] : samples) {
      auto result = GlueCast(A(from, json), to);
      ASSERT_TRUE(result.ok()) << from->ToString() << " -> " << to->ToString() << ": " << result.status().ToString();
      EXPECT_TRUE((*result)->type()->Equals(*to)) << from->ToString() << " -> " << to->ToString();
      EXPECT_EQ((*result)->length(), 2);
      EXPECT_TRUE((*result)->IsNull(1)) << from->ToString() << " -> " << to->ToString();
      EXPECT_TRUE((*result)->ValidateFull().ok());
    }
  }
}

TEST(GlueCastTest, ChoiceCastsMemberByMember) {
  auto type = arrow::dense_union({arrow::field("int", arrow::int32()), arrow::field("string", arrow::utf8())});
  auto codes = A(arrow::int8(), "[0, 1, 0, 1, 1]");
  auto offsets = A(arrow::int32(), "[0, 0, 1, 1, 2]");
  auto ints = A(arrow::int32(), "[7, null]");
  auto strings = A(arrow::utf8(), R"(["12", "x", " 40 "])");
  auto made = arrow::DenseUnionArray::Make(*codes, *offsets, arrow::ArrayVector{ints, strings}, std::vector<std::string>{"int", "string"});
  ASSERT_TRUE(made.ok());
  EXPECT_TRUE(Cast(*made, arrow::int64())->Equals(*A(arrow::int64(), "[7, 12, null, null, 40]")));
  EXPECT_TRUE(Cast(*made, arrow::utf8())->Equals(*A(arrow::utf8(), R"(["7", "12", null, "x", " 40 "])")));
  // Into a choice: the member of the same type.
  auto back = Cast(A(arrow::utf8(), R"(["a"])"), type);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(static_cast<const arrow::UnionArray&>(*back).child_id(0), 1);
  // Written as a struct.
  auto as_struct = UnionsToStructs(*made);
  ASSERT_TRUE(as_struct.ok());
  auto expected = A(arrow::struct_({arrow::field("int", arrow::int32()), arrow::field("string", arrow::utf8())}),
                    R"([{"int": 7, "string": null}, {"int": null, "string": "12"}, {"int": null, "string": null},
                        {"int": null, "string": "x"}, {"int": null, "string": " 40 "}])");
  EXPECT_TRUE((*as_struct)->Equals(*expected)) << (*as_struct)->ToString();
}

TEST(GlueCastTest, NestedStructsAndListsByFieldName) {
  auto from = arrow::struct_({arrow::field("b", arrow::utf8()), arrow::field("a", arrow::list(arrow::utf8())),
                              arrow::field("extra", arrow::int32())});
  auto to = arrow::struct_({arrow::field("a", arrow::list(arrow::int64())), arrow::field("B", arrow::int32()),
                            arrow::field("missing", arrow::float64())});
  ExpectCast(from, R"([{"b": "5", "a": ["1", "x"], "extra": 1}, null, {"b": "q", "a": null, "extra": 2}])", to,
             R"([{"a": [1, null], "B": 5, "missing": null}, null, {"a": null, "B": null, "missing": null}])");
  // A slice keeps its rows.
  auto sliced = A(from, R"([{"b": "1", "a": [], "extra": 1}, {"b": "2", "a": ["3"], "extra": 1}])")->Slice(1);
  EXPECT_TRUE(Cast(sliced, to)->Equals(*A(to, R"([{"a": [3], "B": 2, "missing": null}])")));
  ExpectCast(arrow::map(arrow::utf8(), arrow::utf8()), R"([[["k", "1"], ["j", "x"]]])",
             arrow::map(arrow::utf8(), arrow::int32()), R"([[["k", 1], ["j", null]]])");
  // Structure mismatch: nulls, not an error.
  ExpectCast(from, R"([{"b": "5", "a": [], "extra": 1}])", arrow::int32(), "[null]");
}

TEST(GlueCastTest, ConformSelectsReordersAndFillsByName) {
  auto batch = arrow::RecordBatch::Make(
      arrow::schema({arrow::field("x", arrow::utf8()), arrow::field("Y", arrow::int32()), arrow::field("drop", arrow::int32())}),
      2, {A(arrow::utf8(), R"(["1", "b"])"), A(arrow::int32(), "[3, 4]"), A(arrow::int32(), "[5, 6]")});
  auto schema = arrow::schema({arrow::field("y", arrow::utf8()), arrow::field("new", arrow::date32()),
                               arrow::field("x", arrow::int64(), /*nullable=*/false)});
  auto out = Conform(batch, schema);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ((*out)->num_columns(), 3);
  EXPECT_EQ((*out)->schema()->field(0)->name(), "y");
  EXPECT_TRUE((*out)->column(0)->Equals(*A(arrow::utf8(), R"(["3", "4"])")));
  EXPECT_TRUE((*out)->column(1)->Equals(*A(arrow::date32(), "[null, null]")));
  EXPECT_TRUE((*out)->column(2)->Equals(*A(arrow::int64(), "[1, null]")));
  EXPECT_TRUE((*out)->schema()->field(2)->nullable());  // nulls appeared
}

TEST(GlueCastTest, JsonTextOfNestedValues) {
  auto array = A(arrow::struct_({arrow::field("s", arrow::utf8()), arrow::field("d", arrow::float64()),
                                 arrow::field("t", arrow::timestamp(arrow::TimeUnit::MICRO))}),
                 R"([{"s": "a\nb", "d": NaN, "t": 0}])");
  std::string out;
  AppendJsonValue(*array, 0, &out);
  EXPECT_EQ(out, R"({"s":"a\nb","d":null,"t":"1970-01-01 00:00:00"})");
}

}  // namespace
}  // namespace openglue::engine
