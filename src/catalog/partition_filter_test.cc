#include "catalog/partition_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace openglue::catalog {
namespace {

using Equalities = std::map<size_t, std::vector<std::string>>;

// Matches `value` against `expression` on a table with the single partition key k of `type`.
// Fails the test when the expression does not compile.
bool One(const std::string& type, const std::string& expression, std::string_view value) {
  auto filter = PartitionFilter::Make(expression, {{"k", type}});
  EXPECT_TRUE(filter.ok()) << expression << ": " << filter.status().ToString();
  if (!filter.ok()) return false;
  return (*filter)->Matches({value});
}

// The InvalidInput message for `expression` on `keys`; "" (and a test failure) if it compiles.
std::string ErrorOf(const std::string& expression, const std::vector<PartitionKey>& keys) {
  auto filter = PartitionFilter::Make(expression, keys);
  EXPECT_FALSE(filter.ok()) << "expected an error for: " << expression;
  if (filter.ok()) return "";
  EXPECT_EQ(filter.status().code(), StatusCode::kInvalidInput) << expression;
  return filter.status().message();
}

const std::vector<PartitionKey> kTable = {
    {"year", "int"}, {"month", "int"}, {"region", "string"}, {"dt", "date"}};

std::unique_ptr<PartitionFilter> MakeOrDie(const std::string& expression,
                                           const std::vector<PartitionKey>& keys = kTable) {
  auto filter = PartitionFilter::Make(expression, keys);
  EXPECT_TRUE(filter.ok()) << expression << ": " << filter.status().ToString();
  if (!filter.ok()) return nullptr;
  return std::move(filter).value();
}

struct Case {
  std::string type;
  std::string expression;
  std::string value;
  bool expected;
};

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    EXPECT_EQ(One(c.type, c.expression, c.value), c.expected)
        << c.type << " | " << c.expression << " | value '" << c.value << "'";
  }
}

// --- Every comparison operator on every type ----------------------------------------------

TEST(PartitionFilterTest, ComparisonOperatorsOnIntegers) {
  std::vector<Case> cases;
  for (std::string type : {"int", "integer", "bigint", "long", "smallint", "tinyint", "INT"}) {
    std::vector<Case> for_type = {
        {type, "k = 5", "5", true},    {type, "k = 5", "6", false},
        {type, "k <> 5", "6", true},   {type, "k <> 5", "5", false},
        {type, "k != 5", "6", true},   {type, "k != 5", "5", false},
        {type, "k < 5", "4", true},    {type, "k < 5", "5", false},
        {type, "k <= 5", "5", true},   {type, "k <= 5", "6", false},
        {type, "k > 5", "6", true},    {type, "k > 5", "5", false},
        {type, "k >= 5", "5", true},   {type, "k >= 5", "4", false},
        // Numeric, not textual: "10" > "9" although '1' < '9'.
        {type, "k > 9", "10", true},   {type, "k < -3", "-10", true},
        {type, "k = 5", "05", true},   {type, "k = 5", "+5", true},
        {type, "k = '5'", "5", true},  {type, "k = '0005'", "5", true},
        {type, "k = -0", "0", true},
    };
    cases.insert(cases.end(), for_type.begin(), for_type.end());
  }
  cases.push_back({"bigint", "k = 9223372036854775807", "9223372036854775807", true});
  cases.push_back({"bigint", "k = -9223372036854775808", "-9223372036854775808", true});
  cases.push_back({"bigint", "k < -9223372036854775807", "-9223372036854775808", true});
  RunCases(cases);
}

TEST(PartitionFilterTest, ComparisonOperatorsOnStrings) {
  std::vector<Case> cases;
  for (std::string type : {"string", "char(3)", "varchar(10)", "varchar", "STRING"}) {
    std::vector<Case> for_type = {
        {type, "k = 'b'", "b", true},   {type, "k = 'b'", "B", false},
        {type, "k <> 'b'", "c", true},  {type, "k <> 'b'", "b", false},
        {type, "k != 'b'", "c", true},  {type, "k != 'b'", "b", false},
        {type, "k < 'b'", "a", true},   {type, "k < 'b'", "b", false},
        {type, "k <= 'b'", "b", true},  {type, "k <= 'b'", "ba", false},
        {type, "k > 'b'", "ba", true},  {type, "k > 'b'", "b", false},
        {type, "k >= 'b'", "b", true},  {type, "k >= 'b'", "a", false},
        // Bytes, not numbers: "10" < "9".
        {type, "k < '9'", "10", true},
        // A numeric literal compares as its text.
        {type, "k = 007", "007", true}, {type, "k = 007", "7", false},
        {type, "k = -1.50", "-1.50", true},
        // Unsigned bytes: any UTF-8 lead byte sorts after ASCII.
        {type, "k > 'z'", "\xC3\xA9", true},
        {type, "k = 'it''s'", "it's", true},
        {type, "k = ''", "", true},
    };
    cases.insert(cases.end(), for_type.begin(), for_type.end());
  }
  RunCases(cases);
}

TEST(PartitionFilterTest, ComparisonOperatorsOnDecimals) {
  std::vector<Case> cases;
  for (std::string type : {"decimal", "decimal(10,2)", "DECIMAL(38, 10)", "decimal(5)"}) {
    std::vector<Case> for_type = {
        {type, "k = 1.5", "1.50", true},     {type, "k = 1.5", "1.51", false},
        {type, "k <> 1.5", "1.51", true},    {type, "k <> 1.5", "01.5", false},
        {type, "k != 1.5", "2", true},       {type, "k != 1.5", "1.500", false},
        {type, "k < 1.5", "1.49", true},     {type, "k < 1.5", "1.5", false},
        {type, "k <= 1.5", "1.5", true},     {type, "k <= 1.5", "1.51", false},
        {type, "k > 1.5", "1.51", true},     {type, "k > 1.5", "1.5", false},
        {type, "k >= 1.5", "1.5", true},     {type, "k >= 1.5", "1.4999", false},
        {type, "k > 9.9", "10", true},       {type, "k < 0.5", "0.49", true},
        {type, "k > 0.5", "0.51", true},     {type, "k < 0", "-0.001", true},
        {type, "k < -1.5", "-1.51", true},   {type, "k > -1.5", "-1.49", true},
        {type, "k = 0", "-0.00", true},      {type, "k = .5", "0.5", true},
        {type, "k = '5.'", "5", true},       {type, "k = 2", "2.000", true},
        // Exact beyond double precision.
        {type, "k < 12345678901234567890.1234567891", "12345678901234567890.123456789", true},
        {type, "k = 12345678901234567890.1234567891", "12345678901234567890.123456789", false},
        {type, "k > 99999999999999999999", "100000000000000000000", true},
    };
    cases.insert(cases.end(), for_type.begin(), for_type.end());
  }
  RunCases(cases);
}

TEST(PartitionFilterTest, ComparisonOperatorsOnDates) {
  RunCases({
      {"date", "k = '2024-03-05'", "2024-03-05", true},
      {"date", "k = '2024-03-05'", "2024-3-5", true},
      {"date", "k = DATE '2024-03-05'", "2024-03-05", true},
      {"date", "k <> '2024-03-05'", "2024-03-06", true},
      {"date", "k != '2024-03-05'", "2024-03-05", false},
      {"date", "k < '2024-03-05'", "2024-02-29", true},
      {"date", "k < '2024-03-05'", "2024-03-05", false},
      {"date", "k <= '2024-03-05'", "2024-03-05", true},
      {"date", "k > '2024-03-05'", "2024-03-10", true},  // "2024-3-10" < "2024-03-05" as text
      {"date", "k > '2024-03-05'", "2024-3-10", true},
      {"date", "k >= '2024-03-05'", "2023-12-31", false},
      {"date", "k >= '2024-03-05'", "2025-01-01", true},
      // Values that are not dates match no comparison.
      {"date", "k <> '2024-03-05'", "2024-02-30", false},
      {"date", "k <> '2024-03-05'", "yesterday", false},
      {"date", "k <> '2024-03-05'", "2024-03-05 10:00:00", false},
  });
}

TEST(PartitionFilterTest, ComparisonOperatorsOnTimestamps) {
  RunCases({
      {"timestamp", "k = '2024-03-05 10:20:30'", "2024-03-05 10:20:30", true},
      {"timestamp", "k = '2024-03-05 10:20:30'", "2024-03-05T10:20:30", true},
      {"timestamp", "k = '2024-03-05 10:20:30'", "2024-03-05 10:20:30.000", true},
      {"timestamp", "k = TIMESTAMP '2024-03-05 00:00:00'", "2024-03-05", true},
      {"timestamp", "k <> '2024-03-05 10:20:30'", "2024-03-05 10:20:30.000000001", true},
      {"timestamp", "k != '2024-03-05 10:20:30.5'", "2024-03-05 10:20:30.50", false},
      {"timestamp", "k < '2024-03-05 10:20:30.5'", "2024-03-05 10:20:30.499999999", true},
      {"timestamp", "k < '2024-03-05 10:20:30'", "2024-03-04 23:59:59", true},
      {"timestamp", "k <= '2024-03-05 10:20:30'", "2024-03-05 10:20:30", true},
      {"timestamp", "k > '2024-03-05 10:20:30'", "2024-03-05 10:20:31", true},
      {"timestamp", "k > '2024-03-05 10:20:30'", "2024-03-05 9:59:59", false},
      {"timestamp", "k >= '2024-03-05 00:00'", "2024-03-05 00:00:00", true},
      {"timestamp", "k >= '2024-03-05 00:00'", "2024-03-04 23:59:59.999", false},
      {"timestamp", "k > '2024-12-31 23:59:59'", "2025-01-01 00:00:00", true},
      {"timestamp", "k <> '2024-03-05 00:00'", "2024-03-05 24:00:00", false},  // not a timestamp
  });
}

// --- Literal forms, whitespace, reversed comparisons -----------------------------------------

TEST(PartitionFilterTest, LiteralFormsAndWhitespace) {
  RunCases({
      {"int", "k = '2024'", "2024", true},
      {"int", "k=2024", "2024", true},
      {"int", "\t k\n=\r\n 2024 ", "2024", true},
      {"int", "k = - 5", "-5", true},
      {"int", "k = +5", "5", true},
      {"int", "k = '-5'", "-5", true},
      {"string", "k = DATE '2024-01-01'", "2024-01-01", true},
      {"decimal", "k = '-.5'", "-0.5", true},
      {"decimal", "k = -.5", "-0.50", true},
  });
}

TEST(PartitionFilterTest, ReversedComparisons) {
  RunCases({
      {"int", "2020 = k", "2020", true},
      {"int", "2020 < k", "2021", true},
      {"int", "2020 < k", "2020", false},
      {"int", "2020 <= k", "2020", true},
      {"int", "2020 > k", "2019", true},
      {"int", "2020 > k", "2021", false},
      {"int", "2020 >= k", "2020", true},
      {"int", "2020 <> k", "2021", true},
      {"int", "2020 != k", "2020", false},
      {"string", "'m' < k", "n", true},
      {"date", "'2024-01-01' <= k", "2024-01-01", true},
      {"date", "DATE '2024-01-01' > k", "2023-12-31", true},
  });
}

// --- BETWEEN, IN, LIKE -----------------------------------------------------------------------

TEST(PartitionFilterTest, Between) {
  RunCases({
      {"int", "k BETWEEN 3 AND 5", "3", true},
      {"int", "k BETWEEN 3 AND 5", "5", true},
      {"int", "k BETWEEN 3 AND 5", "4", true},
      {"int", "k BETWEEN 3 AND 5", "2", false},
      {"int", "k BETWEEN 3 AND 5", "6", false},
      {"int", "k BETWEEN 5 AND 3", "4", false},  // not symmetric, as in SQL
      {"int", "k BETWEEN 5 AND 5", "5", true},
      {"int", "k between -5 and '-3'", "-4", true},
      {"int", "k NOT BETWEEN 3 AND 5", "6", true},
      {"int", "k NOT BETWEEN 3 AND 5", "4", false},
      {"int", "k NOT BETWEEN 3 AND 5", "abc", false},
      {"string", "k BETWEEN 'a' AND 'b'", "az", true},
      {"string", "k BETWEEN 'a' AND 'b'", "b", true},
      {"string", "k BETWEEN 'a' AND 'b'", "ba", false},
      {"decimal(4,2)", "k BETWEEN 1.1 AND 1.2", "1.15", true},
      {"date", "k BETWEEN '2024-01-01' AND '2024-01-31'", "2024-1-31", true},
      {"date", "k BETWEEN '2024-01-01' AND '2024-01-31'", "2024-02-01", false},
      {"timestamp", "k BETWEEN '2024-01-01 00:00' AND '2024-01-01 12:00'", "2024-01-01 12:00:00", true},
      {"timestamp", "k BETWEEN '2024-01-01 00:00' AND '2024-01-01 12:00'", "2024-01-01 12:00:00.1",
       false},
  });
  // The AND after the lower bound belongs to BETWEEN; the next one joins conditions.
  auto filter = MakeOrDie("year BETWEEN 2020 AND 2022 AND month = 1");
  EXPECT_TRUE(filter->Matches({"2021", "1", "x", "2024-01-01"}));
  EXPECT_FALSE(filter->Matches({"2021", "2", "x", "2024-01-01"}));
  EXPECT_FALSE(filter->Matches({"2023", "1", "x", "2024-01-01"}));
}

TEST(PartitionFilterTest, In) {
  RunCases({
      {"int", "k IN (1)", "1", true},
      {"int", "k IN (1, 2, 3)", "2", true},
      {"int", "k IN (1, 2, 3)", "02", true},
      {"int", "k IN (1, 2, 3)", "4", false},
      {"int", "k IN (3, '2', 1, 2, 3)", "2", true},
      {"int", "k IN (-1,-2)", "-2", true},
      {"int", "k in(1,2)", "1", true},
      {"int", "k NOT IN (1, 2)", "3", true},
      {"int", "k NOT IN (1, 2)", "1", false},
      {"int", "k NOT IN (1, 2)", "x", false},
      {"string", "k IN ('a', 'b')", "b", true},
      {"string", "k IN ('a', 'b')", "B", false},
      {"string", "k IN ('a', 1)", "1", true},
      {"decimal", "k IN (1.10, 2)", "1.1", true},
      {"decimal", "k IN (1.10, 2)", "2.00", true},
      {"date", "k IN ('2024-01-01', '2024-01-02')", "2024-1-2", true},
      {"timestamp", "k IN ('2024-01-01 00:00:00.5')", "2024-01-01T00:00:00.500", true},
  });
  // A long list is searched, not scanned; every member and no non-member matches.
  std::string expression = "k IN (";
  for (int v = 0; v < 300; v += 3) expression += (v ? ", " : "") + std::to_string(v);
  expression += ")";
  auto filter = PartitionFilter::Make(expression, {{"k", "int"}});
  ASSERT_TRUE(filter.ok());
  for (int v = -5; v < 310; ++v) {
    std::string value = std::to_string(v);
    EXPECT_EQ((*filter)->Matches({value}), v >= 0 && v < 300 && v % 3 == 0) << v;
  }
}

TEST(PartitionFilterTest, Like) {
  RunCases({
      {"string", "k LIKE 'us-%'", "us-east-1", true},
      {"string", "k LIKE 'us-%'", "us-", true},
      {"string", "k LIKE 'us-%'", "eu-west-1", false},
      {"string", "k LIKE '%-1'", "us-east-1", true},
      {"string", "k LIKE '%east%'", "us-east-1", true},
      {"string", "k LIKE '%east%'", "us-west-1", false},
      {"string", "k LIKE 'a_c'", "abc", true},
      {"string", "k LIKE 'a_c'", "ac", false},
      {"string", "k LIKE 'a_c'", "abbc", false},
      {"string", "k LIKE 'a_c'", "a\xC3\xA9" "c", true},  // _ is one UTF-8 character
      {"string", "k LIKE '_'", "\xE2\x82\xAC", true},
      {"string", "k LIKE '__'", "\xE2\x82\xAC", false},
      {"string", "k LIKE '%'", "", true},
      {"string", "k LIKE '%'", "anything", true},
      {"string", "k LIKE ''", "", true},
      {"string", "k LIKE ''", "a", false},
      {"string", "k LIKE 'abc'", "abc", true},
      {"string", "k LIKE 'abc'", "abcd", false},
      {"string", "k LIKE 'ABC'", "abc", false},  // case-sensitive, like the bytes
      {"string", "k LIKE '%a%b%c'", "xxaxxbxxbxc", true},  // needs backtracking
      {"string", "k LIKE '%aab'", "aaaab", true},
      {"string", "k LIKE 'a%%%b'", "ab", true},
      {"string", "k LIKE '%_'", "", false},
      {"string", "k LIKE '100\\%' ESCAPE '\\'", "100%", true},
      {"string", "k LIKE '100\\%' ESCAPE '\\'", "1000", false},
      {"string", "k LIKE 'a!_b' escape '!'", "a_b", true},
      {"string", "k LIKE 'a!_b' escape '!'", "axb", false},
      {"string", "k LIKE 'it''s%'", "it's here", true},
      {"string", "k NOT LIKE 'us-%'", "eu-west-1", true},
      {"string", "k NOT LIKE 'us-%'", "us-east-1", false},
      {"varchar(5)", "k LIKE 'a%'", "ab", true},
  });
}

// --- NULL and three-valued logic ---------------------------------------------------------

TEST(PartitionFilterTest, IsNullAndThreeValuedLogic) {
  const std::string null_value(kHiveNullPartitionValue);
  RunCases({
      {"int", "k IS NULL", null_value, true},
      {"int", "k IS NULL", "1", false},
      {"int", "k IS NULL", "abc", false},  // not null, just unconvertible
      {"int", "k is not null", "1", true},
      {"int", "k IS NOT NULL", null_value, false},
      {"int", "NOT k IS NULL", null_value, false},
      {"string", "k IS NULL", null_value, true},
      // Null compares as UNKNOWN, for strings too.
      {"string", "k = '__HIVE_DEFAULT_PARTITION__'", null_value, false},
      {"string", "k <> 'a'", null_value, false},
      {"string", "k LIKE '%'", null_value, false},
      {"string", "k NOT LIKE 'x%'", null_value, false},
      {"int", "k <> 1", null_value, false},
      {"int", "NOT k = 1", null_value, false},
      {"int", "k NOT IN (1)", null_value, false},
      {"int", "k = 1 OR k IS NULL", null_value, true},
      // Unconvertible values behave the same way.
      {"int", "k <> 1", "abc", false},
      {"int", "NOT k = 1", "abc", false},
      {"int", "NOT (k = 1 AND k = 2)", "abc", false},
      {"int", "NOT (k = 1 AND k = 2)", "3", true},
      // FALSE AND UNKNOWN is FALSE, so its negation is TRUE.
      {"int", "NOT (k IS NOT NULL AND k = 1)", null_value, true},
      {"int", "NOT NOT k = 1", "1", true},
      {"int", "NOT NOT NOT k = 1", "2", true},
  });
}

// --- Precedence, parentheses, names -----------------------------------------------------------

TEST(PartitionFilterTest, PrecedenceNotOverAndOverOr) {
  // a OR b AND c  ==  a OR (b AND c)
  auto filter = MakeOrDie("year = 1 OR month = 2 AND region = 'x'");
  EXPECT_TRUE(filter->Matches({"1", "0", "y", "2024-01-01"}));
  EXPECT_FALSE(filter->Matches({"0", "2", "y", "2024-01-01"}));
  EXPECT_TRUE(filter->Matches({"0", "2", "x", "2024-01-01"}));

  // (a OR b) AND c
  filter = MakeOrDie("(year = 1 OR month = 2) AND region = 'x'");
  EXPECT_FALSE(filter->Matches({"1", "0", "y", "2024-01-01"}));
  EXPECT_TRUE(filter->Matches({"1", "0", "x", "2024-01-01"}));

  // NOT a AND b  ==  (NOT a) AND b
  filter = MakeOrDie("NOT year = 1 AND month = 2");
  EXPECT_TRUE(filter->Matches({"0", "2", "x", "2024-01-01"}));
  EXPECT_FALSE(filter->Matches({"1", "3", "x", "2024-01-01"}));  // NOT (a AND b) would match

  filter = MakeOrDie("NOT (year = 1 AND month = 2)");
  EXPECT_TRUE(filter->Matches({"1", "3", "x", "2024-01-01"}));
  EXPECT_FALSE(filter->Matches({"1", "2", "x", "2024-01-01"}));

  // a AND b OR c AND d
  filter = MakeOrDie("year = 1 AND month = 1 OR year = 2 AND month = 2");
  EXPECT_TRUE(filter->Matches({"1", "1", "x", "2024-01-01"}));
  EXPECT_TRUE(filter->Matches({"2", "2", "x", "2024-01-01"}));
  EXPECT_FALSE(filter->Matches({"1", "2", "x", "2024-01-01"}));

  filter = MakeOrDie("((((year = 1))) or (((month = 2))))");
  EXPECT_TRUE(filter->Matches({"0", "2", "x", "2024-01-01"}));
  EXPECT_FALSE(filter->Matches({"0", "1", "x", "2024-01-01"}));
}

TEST(PartitionFilterTest, NamesAndKeywordsAreCaseInsensitiveAndMayBeQuoted) {
  std::vector<PartitionKey> keys = {{"Year", "int"}, {"date", "date"}, {"my key", "string"}};
  for (std::string expression :
       {"year = 2024", "YEAR = 2024", "`year` = 2024", "\"YEAR\" = 2024", "`Year`=2024"}) {
    auto filter = MakeOrDie(expression, keys);
    ASSERT_NE(filter, nullptr);
    EXPECT_TRUE(filter->Matches({"2024", "2024-01-01", "v"})) << expression;
    EXPECT_FALSE(filter->Matches({"2023", "2024-01-01", "v"})) << expression;
  }
  // A key named like the DATE literal prefix still works; keywords in any case.
  auto filter = MakeOrDie("date = DATE '2024-01-01' aNd `my key` Like 'v%' Or YEAR Is NuLl", keys);
  EXPECT_TRUE(filter->Matches({"1", "2024-01-01", "vv"}));
  EXPECT_FALSE(filter->Matches({"1", "2024-01-02", "vv"}));
  EXPECT_TRUE(filter->Matches({std::string(kHiveNullPartitionValue), "2024-01-02", "x"}));
  filter = MakeOrDie("\"my key\" in ('a''b', 'c')", keys);
  EXPECT_TRUE(filter->Matches({"1", "2024-01-01", "a'b"}));
  filter = MakeOrDie("`we``ird` = 1", {{"we`ird", "int"}});
  EXPECT_TRUE(filter->Matches({"1"}));
}

TEST(PartitionFilterTest, DocumentedNotEqualsSpelling) {
  // The Glue documentation prints the operator as "< >".
  EXPECT_TRUE(One("int", "k < > 1", "2"));
  EXPECT_FALSE(One("int", "k < > 1", "1"));
}

TEST(PartitionFilterTest, WrongNumberOfValuesMatchesNothing) {
  auto filter = MakeOrDie("year = 1");
  EXPECT_FALSE(filter->Matches({}));
  EXPECT_FALSE(filter->Matches({"1"}));
  EXPECT_TRUE(filter->Matches({"1", "1", "x", "2024-01-01"}));
}

// --- Errors ---------------------------------------------------------------------------------

TEST(PartitionFilterTest, EmptyExpression) {
  EXPECT_EQ(ErrorOf("", kTable), "Expression is empty");
  EXPECT_EQ(ErrorOf(" \t\n ", kTable), "Expression is empty");
}

TEST(PartitionFilterTest, UnknownKey) {
  EXPECT_EQ(ErrorOf("foo = 1", {{"year", "int"}, {"month", "int"}}),
            "Unknown partition key 'foo' in expression; the table's partition keys are: year, "
            "month");
  EXPECT_EQ(ErrorOf("year = 1 AND 2 < `Foo`", {{"year", "int"}, {"month", "int"}}),
            "Unknown partition key 'Foo' in expression; the table's partition keys are: year, "
            "month");
  EXPECT_EQ(ErrorOf("foo = 1", {}),
            "Unknown partition key 'foo' in expression; the table has no partition keys");
}

TEST(PartitionFilterTest, BadLiteral) {
  EXPECT_EQ(ErrorOf("year = 'abc'", kTable),
            "'abc' is not a valid int for partition key 'year'");
  EXPECT_EQ(ErrorOf("year = 20.5", kTable), "'20.5' is not a valid int for partition key 'year'");
  EXPECT_EQ(ErrorOf("year = 99999999999999999999", kTable),
            "'99999999999999999999' is not a valid int for partition key 'year'");
  EXPECT_EQ(ErrorOf("year IN (1, 'x')", kTable),
            "'x' is not a valid int for partition key 'year'");
  EXPECT_EQ(ErrorOf("year BETWEEN 1 AND 'x'", kTable),
            "'x' is not a valid int for partition key 'year'");
  EXPECT_EQ(ErrorOf("p = '1.2.3'", {{"p", "decimal(10,2)"}}),
            "'1.2.3' is not a valid decimal(10,2) for partition key 'p'");
  EXPECT_EQ(ErrorOf("dt = '2024-02-30'", kTable),
            "'2024-02-30' is not a valid date for partition key 'dt' (expected a quoted date "
            "'YYYY-MM-DD')");
  // An unquoted date is arithmetic-looking tokens; the first one is reported.
  EXPECT_NE(ErrorOf("dt = 2024-01-01", kTable).find("'2024' is not a valid date"),
            std::string::npos);
  EXPECT_NE(ErrorOf("ts = '2024-01-01 25:00:00'", {{"ts", "timestamp"}})
                .find("is not a valid timestamp for partition key 'ts' (expected a quoted "
                      "timestamp 'YYYY-MM-DD HH:MM:SS[.fffffffff]')"),
            std::string::npos);
  EXPECT_NE(ErrorOf("ts = '2024-01-01 10:00:00.1234567891'", {{"ts", "timestamp"}})
                .find("is not a valid timestamp"),
            std::string::npos);
}

TEST(PartitionFilterTest, UnsupportedKeyType) {
  std::vector<PartitionKey> keys = {{"year", "int"}, {"flag", "boolean"}, {"d", "double"}};
  const std::string expected =
      "Partition key 'flag' has type boolean, which expressions cannot filter; supported types "
      "are string, char, varchar, date, timestamp, int, bigint, long, smallint, tinyint, decimal";
  EXPECT_EQ(ErrorOf("flag = 'true'", keys), expected);
  EXPECT_EQ(ErrorOf("flag IS NULL", keys), expected);
  EXPECT_NE(ErrorOf("d > 1", keys).find("'d' has type double"), std::string::npos);
  // Other keys of the table stay usable.
  EXPECT_NE(MakeOrDie("year = 1", keys), nullptr);
}

TEST(PartitionFilterTest, LikeOnNonStringKey) {
  EXPECT_EQ(ErrorOf("year LIKE '20%'", kTable),
            "LIKE applies only to string partition keys; partition key 'year' has type int");
}

TEST(PartitionFilterTest, SyntaxErrors) {
  struct ErrorCase {
    std::string expression;
    std::string message;
  };
  std::vector<ErrorCase> cases = {
      {"year =", "Syntax error at position 7 in expression: expected a value after '=', found "
                 "end of expression"},
      {"year = AND month = 1", "Syntax error at position 8 in expression: expected a value "
                               "after '=', found 'AND'"},
      {"year = 2020 month = 1",
       "Syntax error at position 13 in expression: unexpected 'month' after a complete "
       "condition; expected AND, OR or the end of the expression"},
      {"year = 2020 2021", "Syntax error at position 13 in expression: unexpected '2021' after "
                           "a complete condition; expected AND, OR or the end of the expression"},
      {"(year = 2020", "Syntax error at position 13 in expression: expected ')' to close the '(' "
                       "at position 1, found end of expression"},
      {"year = 2020)", "Syntax error at position 12 in expression: unexpected ')' without a "
                       "matching '('"},
      {"((year = 1) OR (month = 2)", "Syntax error at position 27 in expression: expected ')' "
                                     "to close the '(' at position 1, found end of expression"},
      {"()", "Syntax error at position 2 in expression: expected a partition key or a value, "
             "found ')'"},
      {"year", "Syntax error at position 5 in expression: expected an operator (=, <>, !=, <, "
               "<=, >, >=, BETWEEN, IN, LIKE or IS) after partition key 'year', found end of "
               "expression"},
      {"year == 1", "Syntax error at position 7 in expression: expected a value after '=', "
                    "found '='"},
      {"region = 'abc", "Syntax error at position 10 in expression: unterminated string literal "
                        "(missing closing ')"},
      {"`year = 1", "Syntax error at position 1 in expression: unterminated quoted partition key "
                    "name (missing closing `)"},
      {"year = 1 AND", "Syntax error at position 13 in expression: expected a partition key or "
                       "a value, found end of expression"},
      {"AND year = 1", "Syntax error at position 1 in expression: expected a partition key or a "
                       "value, found 'AND'"},
      {"year = 1 OR OR month = 2", "Syntax error at position 13 in expression: expected a "
                                   "partition key or a value, found 'OR'"},
      {"year IN ()", "Syntax error at position 10 in expression: expected a value after IN (, "
                     "found ')'"},
      {"year IN (1,)", "Syntax error at position 12 in expression: expected a value after ',' "
                       "in the IN list, found ')'"},
      {"year IN (1 2)", "Syntax error at position 12 in expression: expected ',' or ')' in the "
                        "IN list, found '2'"},
      {"year IN 1", "Syntax error at position 9 in expression: expected '(' after IN, found "
                    "'1'"},
      {"year BETWEEN 1 OR 2", "Syntax error at position 16 in expression: expected AND after "
                              "the lower bound of BETWEEN, found 'OR'"},
      {"year NOT = 1", "Syntax error at position 10 in expression: expected BETWEEN, IN or LIKE "
                       "after NOT, found '='"},
      {"year IS 1", "Syntax error at position 9 in expression: expected NULL after IS, found "
                    "'1'"},
      {"year IS NOT", "Syntax error at position 12 in expression: expected NULL after IS NOT, "
                      "found end of expression"},
      {"year != ", "Syntax error at position 9 in expression: expected a value after '!=', "
                   "found end of expression"},
      {"1 < > 1", "Syntax error at position 7 in expression: a comparison needs a partition key "
                  "on one side, but both sides of '< >' are values"},
      {"1 >= AND", "Syntax error at position 6 in expression: expected a partition key after "
                   "'>=', found 'AND'"},
      {"year = NULL", "Syntax error at position 8 in expression: NULL cannot be compared; test "
                      "for null partitions with 'key IS NULL'"},
      {"region LIKE 1", "Syntax error at position 13 in expression: expected a quoted pattern "
                        "after LIKE, found '1'"},
      {"region LIKE 'a' ESCAPE 'ab'", "Syntax error at position 24 in expression: expected a "
                                      "quoted single character after ESCAPE, found ''ab''"},
      {"region LIKE 'a\\' ESCAPE '\\'", "Syntax error at position 8 in expression: the LIKE "
                                        "pattern ends with its escape character '\\'"},
      {"year = month", "Syntax error at position 8 in expression: cannot compare partition key "
                       "'year' with partition key 'month'; compare a partition key with a value"},
      {"1 = 1", "Syntax error at position 5 in expression: a comparison needs a partition key "
                "on one side, but both sides of '=' are values"},
      {"1 year", "Syntax error at position 3 in expression: expected a comparison operator (=, "
                 "<>, !=, <, <=, >, >=) after the value '1', found 'year'"},
      {"year = -x", "Syntax error at position 9 in expression: expected a number after '-', "
                    "found 'x'"},
      {"year = 1; DROP TABLE t", "Syntax error at position 9 in expression: unexpected "
                                 "character ';'"},
      {"year ! 1", "Syntax error at position 6 in expression: unexpected character '!' (did you "
                   "mean '!='?)"},
      {"year = 1 \xC3\xA9", "Syntax error at position 10 in expression: unexpected character "
                            "'\xC3\xA9'"},
      {"year = 1 \xFF", "Syntax error at position 10 in expression: unexpected character "
                        "'\\xFF'"},
      {"`` = 1", "Syntax error at position 1 in expression: empty quoted partition key name"},
      {"NOT", "Syntax error at position 4 in expression: expected a partition key or a value, "
              "found end of expression"},
  };
  for (const ErrorCase& c : cases) {
    EXPECT_EQ(ErrorOf(c.expression, kTable), c.message) << c.expression;
  }
}

TEST(PartitionFilterTest, ErrorMessagesQuoteUserTextSafely) {
  // Control characters and invalid UTF-8 are escaped; long text is cut.
  std::string message = ErrorOf("year = '\x01\xC3'", kTable);
  EXPECT_EQ(message, "'\\x01\\xC3' is not a valid int for partition key 'year'");
  message = ErrorOf("year = '" + std::string(1000, 'x') + "'", kTable);
  EXPECT_EQ(message, "'" + std::string(64, 'x') + "...' is not a valid int for partition key "
                     "'year'");
}

TEST(PartitionFilterTest, NestingDepthIsLimited) {
  const int limit = PartitionFilter::kMaxNestingDepth;
  std::string ok = std::string(limit, '(') + "year = 1" + std::string(limit, ')');
  auto filter = MakeOrDie(ok);
  ASSERT_NE(filter, nullptr);
  EXPECT_TRUE(filter->Matches({"1", "1", "x", "2024-01-01"}));

  std::string too_deep = std::string(limit + 1, '(') + "year = 1" + std::string(limit + 1, ')');
  EXPECT_NE(ErrorOf(too_deep, kTable).find("nested more than 100 levels deep"),
            std::string::npos);

  std::string nots;
  for (int i = 0; i < 1000; ++i) nots += "NOT ";
  EXPECT_NE(ErrorOf(nots + "year = 1", kTable).find("nested more than 100 levels deep"),
            std::string::npos);
  // The whole 2048-character budget spent on parentheses.
  EXPECT_NE(ErrorOf(std::string(2048, '('), kTable).find("nested more than"), std::string::npos);

  // Long flat chains are fine: they do not nest.
  std::string chain = "year = 0";
  while (chain.size() < 2000) chain += " OR year = " + std::to_string(chain.size());
  filter = MakeOrDie(chain);
  ASSERT_NE(filter, nullptr);
  EXPECT_TRUE(filter->Matches({"0", "1", "x", "2024-01-01"}));
}

// --- RequiredEqualities --------------------------------------------------------------------

// --- Forms moto's published suite uses (issue 7) ------------------------------------------

TEST(PartitionFilterTest, ParenthesisedOperands) {
  const std::vector<PartitionKey> keys = {{"int_col", "int"}, {"s", "string"}};
  for (const char* expression : {"(int_col) = ((2)) OR (((int_col))) = (2)", "(int_col) = 2",
                                 "((int_col = 2))", "((int_col) = 2)", "(2) = int_col",
                                 "NOT (int_col) <> (2)", "(int_col) BETWEEN (1) AND (3)",
                                 "(int_col) IN ((2), 5)", "((int_col) = 2 AND (s) = ('x'))",
                                 "(int_col = 1) OR ((int_col) = (+2))", "(`int_col`) = (-(2))"}) {
    if (std::string(expression) == "(`int_col`) = (-(2))") {
      EXPECT_FALSE(PartitionFilter::Make(expression, keys).ok()) << expression;
      continue;
    }
    auto filter = PartitionFilter::Make(expression, keys);
    ASSERT_TRUE(filter.ok()) << expression << ": " << filter.status().ToString();
    EXPECT_TRUE((*filter)->Matches({"2", "x"})) << expression;
    EXPECT_FALSE((*filter)->Matches({"4", "x"})) << expression;
  }
  // Unbalanced or empty parentheses around an operand stay syntax errors.
  for (const char* expression : {"((int_col) = 2", "(int_col)) = 2", "() = 2", "int_col = (2",
                                 "int_col = 2)", "(int_col) AND int_col = 2"}) {
    EXPECT_FALSE(PartitionFilter::Make(expression, keys).ok()) << expression;
  }
  // Operand parentheses count towards the nesting limit.
  std::string deep = std::string(PartitionFilter::kMaxNestingDepth + 1, '(') + "int_col" +
                     std::string(PartitionFilter::kMaxNestingDepth + 1, ')') + " = 2";
  EXPECT_FALSE(PartitionFilter::Make(deep, keys).ok());
}

TEST(PartitionFilterTest, NumbersInExponentForm) {
  EXPECT_TRUE(One("decimal", "k between 2 AND 3e10", "2.6"));
  EXPECT_FALSE(One("decimal", "k between 2 AND 3e10", "30000000000.1"));
  EXPECT_TRUE(One("decimal", "k between 2 AND 3e10", "30000000000"));
  EXPECT_TRUE(One("decimal", "k = 2.5E-3", "0.0025"));
  EXPECT_TRUE(One("decimal", "k = 25e-1", "2.5"));
  EXPECT_TRUE(One("decimal", "k = -1.5e+2", "-150"));
  // Partition values in exponent form compare by value too (moto stores '3e14').
  EXPECT_TRUE(One("decimal", "k <> '3e14'", "2.6"));
  EXPECT_FALSE(One("decimal", "k <> '3e14'", "3e14"));
  EXPECT_TRUE(One("decimal", "k = 300000000000000", "3e14"));
  EXPECT_TRUE(One("int", "k = 2e3", "2000"));
  EXPECT_TRUE(One("bigint", "k < 1e18", "999999999999999999"));
  EXPECT_FALSE(ErrorOf("k = 2.5e0", {{"k", "int"}}).empty());   // not integral
  EXPECT_FALSE(ErrorOf("k = 1e19", {{"k", "bigint"}}).empty());  // out of range
  EXPECT_FALSE(ErrorOf("k = 1e999", {{"k", "decimal"}}).empty());
  EXPECT_FALSE(ErrorOf("k = 1e", {{"k", "decimal"}}).empty());
  EXPECT_EQ(CanonicalPartitionValue("decimal", "3e2"), "300");
  EXPECT_EQ(CanonicalPartitionValue("decimal", "1.25E-1"), "0.125");
}

TEST(PartitionFilterTest, TimestampLiteralsMustBeTimestamps) {
  const std::vector<PartitionKey> keys = {{"timestamp_col", "timestamp"}};
  for (const char* expression : {"timestamp_col = '2022-02-01'",
                                 "timestamp_col = '2022-02-15 00:00:00.'",
                                 "timestamp_col = '2022-02-32 00:00:00'",
                                 "timestamp_col IN ('2022-02-01')",
                                 "timestamp_col BETWEEN '2022-01-01' AND '2022-03-01 00:00:00'"}) {
    std::string message = ErrorOf(expression, keys);
    EXPECT_NE(message.find("timestamp"), std::string::npos) << expression << ": " << message;
  }
  EXPECT_TRUE(One("timestamp", "k = '2022-02-01 00:00:00'", "2022-02-01 00:00:00.000000"));
  EXPECT_TRUE(One("timestamp", "k = '2022-02-01 00:00:00.000000000'", "2022-02-01"));
  EXPECT_TRUE(One("timestamp", "k > '2022-01-31 23:59:59.999999999' AND k < '2022-02-01 00:00:00.000000001'",
                  "2022-02-01 00:00:00.000000"));
}

TEST(PartitionFilterTest, RequiredEqualitiesFromAndChains) {
  EXPECT_EQ(MakeOrDie("year = 2024")->RequiredEqualities(), (Equalities{{0, {"2024"}}}));
  EXPECT_EQ(MakeOrDie("year = '02024' AND month IN (3, 1, '01', 2) AND region LIKE 'x%'")
                ->RequiredEqualities(),
            (Equalities{{0, {"2024"}}, {1, {"1", "2", "3"}}}));
  EXPECT_EQ(MakeOrDie("2024 = year AND (month = 1 AND dt = '2024-1-5')")->RequiredEqualities(),
            (Equalities{{0, {"2024"}}, {1, {"1"}}, {3, {"2024-01-05"}}}));
  // Two conjuncts on one key intersect, possibly to nothing.
  EXPECT_EQ(MakeOrDie("year IN (1, 2, 3) AND year IN (2, 3, 4)")->RequiredEqualities(),
            (Equalities{{0, {"2", "3"}}}));
  EXPECT_EQ(MakeOrDie("year = 1 AND year = 2")->RequiredEqualities(), (Equalities{{0, {}}}));
  // Strings are kept as written.
  EXPECT_EQ(MakeOrDie("region IN ('b', 'a', 'b')")->RequiredEqualities(),
            (Equalities{{2, {"a", "b"}}}));
}

TEST(PartitionFilterTest, RequiredEqualitiesIgnoreEverythingElse) {
  for (std::string expression :
       {"year = 1 OR month = 2", "NOT year = 1", "year <> 1", "year NOT IN (1, 2)",
        "year BETWEEN 1 AND 1", "year >= 1 AND year <= 1", "year IS NULL",
        "(year = 1 AND month = 1) OR (year = 2 AND month = 2)", "NOT (year = 1 AND month = 2)"}) {
    EXPECT_EQ(MakeOrDie(expression)->RequiredEqualities(), Equalities{}) << expression;
  }
  // An OR inside a top-level AND only hides its own keys.
  EXPECT_EQ(MakeOrDie("year = 1 AND (month = 1 OR month = 2)")->RequiredEqualities(),
            (Equalities{{0, {"1"}}}));
}

TEST(PartitionFilterTest, RequiredEqualitiesAgreeWithMatches) {
  // Every value that Matches accepts canonicalizes to one of the required values.
  std::vector<PartitionKey> keys = {{"i", "int"}, {"p", "decimal(5,2)"}, {"t", "timestamp"}};
  auto filter = MakeOrDie("i IN (7, 8) AND p = 1.5 AND t = '2024-01-01T00:00:00.10'", keys);
  auto required = filter->RequiredEqualities();
  EXPECT_EQ(required, (Equalities{{0, {"7", "8"}}, {1, {"1.5"}}, {2, {"2024-01-01 00:00:00.1"}}}));
  for (std::string i : {"7", "+07", "8", "9"}) {
    for (std::string p : {"1.5", "01.50", "1.6"}) {
      std::vector<std::string_view> values = {i, p, "2024-01-01 00:00:00.1"};
      bool in_index = true;
      for (size_t k = 0; k < keys.size(); ++k) {
        std::string canonical = CanonicalPartitionValue(keys[k].type, values[k]);
        const auto& allowed = required[k];
        in_index = in_index &&
                   std::find(allowed.begin(), allowed.end(), canonical) != allowed.end();
      }
      EXPECT_EQ(filter->Matches(values), in_index) << i << " " << p;
    }
  }
}

// --- CanonicalPartitionValue ------------------------------------------------------------------

TEST(PartitionFilterTest, CanonicalPartitionValue) {
  struct C {
    std::string type, value, canonical;
  };
  std::vector<C> cases = {
      {"int", "02", "2"},
      {"int", "+7", "7"},
      {"bigint", "-007", "-7"},
      {"int", "-0", "0"},
      {"int", "0", "0"},
      {"tinyint", "1000", "1000"},
      {"int", "abc", "abc"},
      {"int", "", ""},
      {"int", " 5", " 5"},
      {"int", "99999999999999999999", "99999999999999999999"},
      {"decimal(10,2)", "01.50", "1.5"},
      {"decimal", "-0.00", "0"},
      {"decimal", ".5", "0.5"},
      {"decimal", "-.5", "-0.5"},
      {"decimal", "+3.", "3"},
      {"decimal", "100", "100"},
      {"decimal", "100.000", "100"},
      {"decimal", "000", "0"},
      {"decimal", "1e5", "100000"},  // exponent form converts exactly
      {"date", "2024-1-5", "2024-01-05"},
      {"date", "2024-01-05", "2024-01-05"},
      {"date", "2024-02-29", "2024-02-29"},
      {"date", "2023-02-29", "2023-02-29"},  // not a date: unchanged
      {"timestamp", "2024-01-05 1:02:03", "2024-01-05 01:02:03"},
      {"timestamp", "2024-01-05T01:02:03.120", "2024-01-05 01:02:03.12"},
      {"timestamp", "2024-01-05 01:02:03.000", "2024-01-05 01:02:03"},
      {"timestamp", "2024-01-05 01:02:03.000000001", "2024-01-05 01:02:03.000000001"},
      {"timestamp", "2024-01-05", "2024-01-05 00:00:00"},
      {"timestamp", "2024-01-05 10:30", "2024-01-05 10:30:00"},
      {"timestamp", "2024-01-05 10:30:00.", "2024-01-05 10:30:00."},
      {"string", "02", "02"},
      {"varchar(3)", " a ", " a "},
      {"boolean", "TRUE", "TRUE"},
      {"int", std::string(kHiveNullPartitionValue), std::string(kHiveNullPartitionValue)},
  };
  for (const C& c : cases) {
    EXPECT_EQ(CanonicalPartitionValue(c.type, c.value), c.canonical) << c.type << " " << c.value;
  }
}

// --- Robustness and speed -------------------------------------------------------------------

// Builds random, mostly well-formed expressions over `keys`; Mutate then damages some of them.
class ExpressionGenerator {
 public:
  explicit ExpressionGenerator(uint32_t seed) : rng_(seed) {}

  std::string Expression(int depth = 0) {
    int choice = static_cast<int>(rng_() % 10);
    if (depth < 4 && choice < 2) return Expression(depth + 1) + Pick({" AND ", " or "}) +
                                         Expression(depth + 1);
    if (depth < 4 && choice == 2) return "NOT " + Expression(depth + 1);
    if (depth < 4 && choice == 3) return "(" + Expression(depth + 1) + ")";
    return Predicate();
  }

  std::string Mutate(std::string s) {
    int edits = 1 + static_cast<int>(rng_() % 3);
    for (int i = 0; i < edits && !s.empty(); ++i) {
      size_t at = rng_() % s.size();
      switch (rng_() % 4) {
        case 0: s.erase(at, 1 + rng_() % 4); break;
        case 1: s.insert(at, 1, Pick({"'", "(", ")", "`", "\"", ",", "-", "%", "\xFF", " "})[0]); break;
        case 2: s[at] = static_cast<char>(rng_() % 256); break;
        default: s.insert(at, Literal()); break;
      }
    }
    return s;
  }

  std::string Pick(const std::vector<std::string>& options) {
    return options[rng_() % options.size()];
  }
  uint32_t Next() { return rng_(); }

 private:
  std::string Key() {
    return Pick({"year", "MONTH", "region", "dt", "ts", "p", "`year`", "\"region\"", "flag",
                 "nope"});
  }
  std::string Literal() {
    return Pick({"2024", "'2024'", "-3", "+7", "1.50", "'-0.5'", ".5", "'us-east-1'", "'x''y'",
                 "'2024-02-29'", "DATE '2024-01-01'", "'2024-01-01 10:00:00.5'",
                 "TIMESTAMP '2024-01-01T00:00:00'", "99999999999999999999", "''", "'\xC3\xA9'"});
  }
  std::string Predicate() {
    switch (rng_() % 9) {
      case 0: return Key() + " " + Pick({"=", "<>", "!=", "<", "<=", ">", ">=", "< >"}) + " " +
                     Literal();
      case 1: return Literal() + Pick({"=", "<", ">="}) + Key();
      case 2: return Key() + Pick({" BETWEEN ", " NOT BETWEEN "}) + Literal() + " AND " +
                     Literal();
      case 3: {
        std::string list = Literal();
        for (uint32_t n = rng_() % 4; n > 0; --n) list += ", " + Literal();
        return Key() + Pick({" IN (", " NOT IN ("}) + list + ")";
      }
      case 4: return Key() + Pick({" LIKE ", " NOT LIKE "}) +
                     Pick({"'us-%'", "'%'", "'_a%b_'", "''", "'%%x%'", "'a!%' ESCAPE '!'"});
      case 5: return Key() + Pick({" IS NULL", " IS NOT NULL"});
      default: return Key() + " = " + Literal();
    }
  }

  std::mt19937 rng_;
};

TEST(PartitionFilterTest, RandomInputNeverCrashes) {
  ExpressionGenerator generator(20240601);  // fixed seed: failures reproduce
  const std::vector<PartitionKey> keys = {{"year", "int"},      {"month", "bigint"},
                                          {"region", "string"}, {"dt", "date"},
                                          {"ts", "timestamp"},  {"p", "decimal(10,2)"},
                                          {"flag", "boolean"}};
  const std::string null_value(kHiveNullPartitionValue);
  const std::vector<std::vector<std::string>> value_sets = {
      {"2024", "1", "us-east-1", "2024-01-01", "2024-01-01 10:00:00.5", "1.5", "true"},
      {"abc", "", "", "bad", "", ".", ""},
      {null_value, null_value, null_value, null_value, null_value, null_value, "x"},
      {"-9223372036854775808", "99999999999999999999", "\xFF\xFE", "9999-12-31",
       "0000-01-01 00:00:00.000000001", "-0.00", "0"}};
  int compiled = 0, rejected = 0;
  auto exercise = [&](const std::string& expression) {
    auto filter = PartitionFilter::Make(expression, keys);
    if (!filter.ok()) {
      ++rejected;
      EXPECT_EQ(filter.status().code(), StatusCode::kInvalidInput) << expression;
      EXPECT_FALSE(filter.status().message().empty());
      return;
    }
    ++compiled;
    for (const auto& set : value_sets) {
      std::vector<std::string_view> values(set.begin(), set.end());
      (void)(*filter)->Matches(values);
    }
    (void)(*filter)->RequiredEqualities();
  };
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string expression = generator.Expression();
    exercise(expression);
    exercise(generator.Mutate(expression));
  }
  // Random bytes, up to past the 2048-character service limit.
  for (int iteration = 0; iteration < 2000; ++iteration) {
    std::string expression(generator.Next() % 2100, '\0');
    for (char& c : expression) c = static_cast<char>(generator.Next() % 256);
    exercise(expression);
  }
  for (int iteration = 0; iteration < 5000; ++iteration) {
    std::string value(generator.Next() % 40, '\0');
    for (char& c : value) c = static_cast<char>(generator.Next() % 256);
    for (std::string type : {"int", "decimal", "date", "timestamp", "string", "boolean"}) {
      (void)CanonicalPartitionValue(type, value);
    }
  }
  std::printf("[ fuzz     ] %d expressions compiled, %d rejected\n", compiled, rejected);
  // The generator must reach both sides of the parser's front door to be worth anything.
  EXPECT_GT(compiled, 5000);
  EXPECT_GT(rejected, 5000);
}

TEST(PartitionFilterTest, MatchesIsFast) {
  const std::vector<PartitionKey> keys = {
      {"year", "int"}, {"month", "int"}, {"region", "string"}, {"dt", "date"}};
  auto filter = MakeOrDie(
      "year BETWEEN 2020 AND 2024 AND month IN (1, 3, 5, 7, 9, 11) AND region LIKE 'us-%' AND "
      "dt >= '2020-01-15' AND NOT dt = '2021-01-01'",
      keys);
  ASSERT_NE(filter, nullptr);
  std::vector<std::string> storage;
  const std::vector<std::string> regions = {"us-east-1", "us-west-2", "eu-west-1", "ap-south-1"};
  for (int i = 0; i < 1000; ++i) {
    storage.push_back(std::to_string(2018 + i % 8));
    storage.push_back(std::to_string(1 + i % 12));
    storage.push_back(regions[i % regions.size()]);
    char dt[16];
    std::snprintf(dt, sizeof(dt), "%04d-%02d-%02d", 2018 + i % 8, 1 + i % 12, 1 + i % 28);
    storage.push_back(dt);
  }
  std::vector<std::vector<std::string_view>> partitions;
  for (size_t i = 0; i + 4 <= storage.size(); i += 4) {
    partitions.push_back({storage[i], storage[i + 1], storage[i + 2], storage[i + 3]});
  }
  size_t matched = 0;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100000; ++i) matched += filter->Matches(partitions[i % partitions.size()]);
  auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                           start);
  std::printf("[ bench    ] 100000 Matches on a 4-key table: %.2f ms (%zu matched)\n",
              elapsed.count(), matched);
  EXPECT_GT(matched, 0u);
  EXPECT_LT(matched, 100000u);
  EXPECT_LT(elapsed.count(), 1000.0);
}

}  // namespace
}  // namespace openglue::catalog
