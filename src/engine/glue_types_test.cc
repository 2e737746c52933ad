#include "engine/glue_types.h"

#include <arrow/api.h>
#include <gtest/gtest.h>

#include "engine/align.h"
#include "engine/glue_cast.h"

namespace openglue::engine {
namespace {

std::shared_ptr<arrow::Array> Strings(const std::vector<std::optional<std::string>>& values) {
  arrow::StringBuilder b;
  for (const auto& v : values) {
    if (v) {
      EXPECT_TRUE(b.Append(*v).ok());
    } else {
      EXPECT_TRUE(b.AppendNull().ok());
    }
  }
  return b.Finish().ValueOrDie();
}

TEST(GlueTypesTest, NamesFollowGlue) {
  EXPECT_EQ(GlueTypeName(*arrow::int32()), "int");
  EXPECT_EQ(GlueTypeName(*arrow::int64()), "long");
  EXPECT_EQ(GlueTypeName(*arrow::utf8()), "string");
  EXPECT_EQ(GlueTypeName(*arrow::list(arrow::int32())), "array");
  EXPECT_EQ(GlueTypeName(*arrow::timestamp(arrow::TimeUnit::MICRO)), "timestamp");
  EXPECT_EQ(GlueTypeName(*arrow::decimal128(10, 2)), "decimal");
}

TEST(GlueTypesTest, ClassifyText) {
  EXPECT_EQ(ClassifyText(""), TextKind::kNull);
  EXPECT_EQ(ClassifyText("0"), TextKind::kInt);
  EXPECT_EQ(ClassifyText("-2147483648"), TextKind::kInt);
  EXPECT_EQ(ClassifyText("2147483648"), TextKind::kLong);
  EXPECT_EQ(ClassifyText("-9223372036854775808"), TextKind::kLong);
  EXPECT_EQ(ClassifyText("99999999999999999999"), TextKind::kDouble);
  EXPECT_EQ(ClassifyText("1.5"), TextKind::kDouble);
  EXPECT_EQ(ClassifyText("-2e10"), TextKind::kDouble);
  EXPECT_EQ(ClassifyText(".5"), TextKind::kDouble);
  EXPECT_EQ(ClassifyText("1e"), TextKind::kString);
  EXPECT_EQ(ClassifyText("-"), TextKind::kString);
  EXPECT_EQ(ClassifyText("+1"), TextKind::kString);
  EXPECT_EQ(ClassifyText(" 1"), TextKind::kString);
  EXPECT_EQ(ClassifyText("inf"), TextKind::kString);
  EXPECT_EQ(ClassifyText("nan"), TextKind::kString);
  EXPECT_EQ(ClassifyText("2024-01-01"), TextKind::kString);
  EXPECT_EQ(ClassifyText("1.2.3"), TextKind::kString);
}

TEST(GlueTypesTest, NumericWideningIsNotAChoice) {
  EXPECT_TRUE(MergeTypes(arrow::int32(), arrow::int64())->Equals(*arrow::int64()));
  EXPECT_TRUE(MergeTypes(arrow::int64(), arrow::float64())->Equals(*arrow::float64()));
  EXPECT_TRUE(MergeTypes(arrow::null(), arrow::utf8())->Equals(*arrow::utf8()));
  EXPECT_TRUE(MergeTypes(arrow::int32(), arrow::null())->Equals(*arrow::int32()));
}

TEST(GlueTypesTest, NumberAndStringMakeAChoiceInFirstAppearanceOrder) {
  auto choice = MergeTypes(arrow::int32(), arrow::utf8());
  ASSERT_EQ(choice->id(), arrow::Type::DENSE_UNION);
  ASSERT_EQ(choice->num_fields(), 2);
  EXPECT_EQ(choice->field(0)->name(), "int");
  EXPECT_EQ(choice->field(1)->name(), "string");
  // A later long widens the numeric member in place; no third member.
  auto wider = MergeTypes(choice, arrow::int64());
  ASSERT_EQ(wider->num_fields(), 2);
  EXPECT_EQ(wider->field(0)->name(), "long");
  EXPECT_TRUE(wider->field(0)->type()->Equals(*arrow::int64()));
  auto reversed = MergeTypes(arrow::utf8(), arrow::float64());
  EXPECT_EQ(reversed->field(0)->name(), "string");
  EXPECT_EQ(reversed->field(1)->name(), "double");
}

TEST(GlueTypesTest, StructsMergeFieldByFieldAndListsMergeElements) {
  auto a = arrow::struct_({arrow::field("x", arrow::int32())});
  auto b = arrow::struct_({arrow::field("y", arrow::utf8()), arrow::field("x", arrow::float64())});
  auto merged = MergeTypes(a, b);
  ASSERT_EQ(merged->id(), arrow::Type::STRUCT);
  ASSERT_EQ(merged->num_fields(), 2);
  EXPECT_EQ(merged->field(0)->name(), "x");
  EXPECT_TRUE(merged->field(0)->type()->Equals(*arrow::float64()));
  EXPECT_EQ(merged->field(1)->name(), "y");
  auto lists = MergeTypes(arrow::list(arrow::int32()), arrow::list(arrow::int64()));
  EXPECT_TRUE(lists->Equals(*arrow::list(arrow::int64())));
  // A struct in some records and a scalar in others: a choice.
  auto choice = MergeTypes(a, arrow::int32());
  ASSERT_EQ(choice->id(), arrow::Type::DENSE_UNION);
  EXPECT_EQ(choice->field(0)->name(), "struct");
  EXPECT_EQ(choice->field(1)->name(), "int");
}

TEST(GlueTypesTest, ColumnStatsFromStrings) {
  auto stats = ClassifyTextArray(*Strings({"1", std::nullopt, "", "3000000000"}));
  EXPECT_TRUE(stats.ToType()->Equals(*arrow::int64()));
  stats = ClassifyTextArray(*Strings({"abc", "1"}));
  auto type = stats.ToType();
  ASSERT_EQ(type->id(), arrow::Type::DENSE_UNION);
  EXPECT_EQ(type->field(0)->name(), "string");
  EXPECT_TRUE(ClassifyTextArray(*Strings({std::nullopt})).ToType()->Equals(*arrow::null()));
  // Merging chunks in order keeps the first appearance of the whole column.
  TextColumnStats first = ClassifyTextArray(*Strings({std::nullopt}));
  first.Merge(ClassifyTextArray(*Strings({"7", "x"})));
  EXPECT_EQ(first.ToType()->field(0)->name(), "int");
}

TEST(GlueCastTest, BadValuesBecomeNull) {
  auto in = Strings({"12", "x", std::nullopt, "99999999999"});
  auto out = GlueCast(in, arrow::int32());
  ASSERT_TRUE(out.ok());
  auto ints = std::static_pointer_cast<arrow::Int32Array>(*out);
  EXPECT_EQ(ints->Value(0), 12);
  EXPECT_TRUE(ints->IsNull(1));
  EXPECT_TRUE(ints->IsNull(2));
  EXPECT_TRUE(ints->IsNull(3));
  auto dates = GlueCast(Strings({"2024-02-29", "2024-13-01"}), arrow::date32());
  ASSERT_TRUE(dates.ok());
  EXPECT_EQ((*dates)->null_count(), 1);
  auto decimals = GlueCast(Strings({"12.345", "abc"}), arrow::decimal128(10, 2));
  ASSERT_TRUE(decimals.ok());
  EXPECT_EQ((*decimals)->null_count(), 1);
}

TEST(AlignTest, WrapsAMemberIntoAChoiceAndFillsMissingFields) {
  auto choice = MergeTypes(arrow::int64(), arrow::utf8());
  arrow::Int32Builder b;
  ASSERT_TRUE(b.AppendValues({1, 2}).ok());
  auto ints = b.Finish().ValueOrDie();
  auto batch = arrow::RecordBatch::Make(arrow::schema({arrow::field("a", arrow::int32())}), 2, {ints});
  auto target = arrow::schema({arrow::field("a", choice), arrow::field("b", arrow::utf8())});
  auto aligned = AlignBatch(batch, target);
  ASSERT_TRUE(aligned.ok()) << aligned.status().ToString();
  ASSERT_TRUE((*aligned)->ValidateFull().ok());
  EXPECT_EQ((*aligned)->column(1)->null_count(), 2);
  auto scalar = (*aligned)->column(0)->GetScalar(1).ValueOrDie();
  EXPECT_EQ(scalar->ToString(), "union{long: int64 = 2}");
}

}  // namespace
}  // namespace openglue::engine
