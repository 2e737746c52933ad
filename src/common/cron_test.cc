#include "common/cron.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

namespace openglue {
namespace {

// "YYYY-MM-DD HH:MM" (UTC) -> milliseconds since the epoch.
int64_t At(const char* text) {
  int y, mo, d, h, mi;
  EXPECT_EQ(std::sscanf(text, "%d-%d-%d %d:%d", &y, &mo, &d, &h, &mi), 5) << text;
  return (DaysFromCivil(y, mo, d) * 1440 + h * 60 + mi) * 60000;
}

struct NextCase {
  const char* expression;
  const char* after;
  const char* expected;  // "" = never fires again
};

TEST(CronTest, NextFireTimes) {
  const NextCase kCases[] = {
      {"cron(0 12 * * ? *)", "2026-12-01 10:32", "2026-12-01 12:00"},
      {"cron(0 12 * * ? *)", "2026-12-01 12:00", "2026-12-02 12:00"},  // strictly after
      {"cron(0 12 * * ? *)", "2026-12-31 12:00", "2027-01-01 12:00"},
      {"  cron(0/15 * * * ? *) ", "2026-12-01 10:32", "2026-12-01 10:45"},
      {"cron(*/5 8-10 ? * MON-FRI *)", "2026-12-04 10:58", "2026-12-07 08:00"},
      {"cron(0,30 1,13 * * ? *)", "2026-12-01 13:00", "2026-12-01 13:30"},
      {"cron(15 10 ? * 6L 2026-2027)", "2026-12-01 00:00", "2026-12-25 10:15"},
      {"cron(0 9 L * ? *)", "2026-02-01 00:00", "2026-02-28 09:00"},
      {"cron(0 9 L * ? *)", "2028-02-01 00:00", "2028-02-29 09:00"},
      {"cron(0 9 15W * ? *)", "2026-11-01 00:00", "2026-11-16 09:00"},  // 15 Nov is a Sunday
      {"cron(0 9 1W * ? *)", "2026-07-15 00:00", "2026-08-03 09:00"},   // 1 Aug is a Saturday
      {"cron(0 9 LW * ? *)", "2026-10-15 00:00", "2026-10-30 09:00"},   // 31 Oct is a Saturday
      {"cron(0 9 ? * 2#1 *)", "2026-12-01 10:00", "2026-12-07 09:00"},  // first Monday
      {"cron(0 9 ? * MON#3 *)", "2026-12-01 10:00", "2026-12-21 09:00"},
      {"cron(30 23 ? * FRI-MON *)", "2026-12-01 10:32", "2026-12-04 23:30"},  // wraps
      {"cron(0 0 ? * L *)", "2026-12-01 10:32", "2026-12-05 00:00"},          // Saturday
      {"cron(0 0 29 2 ? *)", "2026-03-01 00:00", "2028-02-29 00:00"},
      {"cron(0 0 ? NOV-FEB SUN *)", "2026-03-01 00:00", "2026-11-01 00:00"},
      {"cron(0 0 1 1 ? 2030)", "2026-12-01 00:00", "2030-01-01 00:00"},
      {"cron(0 0 1 1 ? 2030)", "2030-01-01 00:00", ""},
      {"cron(0 0 30 2 ? *)", "2026-01-01 00:00", ""},  // 30 February never comes
      {"cron(59 23 31 12 ? 2199)", "2199-12-31 23:58", "2199-12-31 23:59"},
      {"cron(10-50/20 * * * ? *)", "2026-12-01 10:31", "2026-12-01 10:50"},
      {"cron(0 0 * jan,jul ? *)", "2026-12-01 00:00", "2027-01-01 00:00"},
  };
  for (const NextCase& c : kCases) {
    auto cron = CronSchedule::Parse(c.expression);
    ASSERT_TRUE(cron.ok()) << c.expression << ": " << cron.status().message();
    std::optional<int64_t> next = cron->NextAfter(At(c.after));
    if (*c.expected == '\0') {
      EXPECT_FALSE(next.has_value()) << c.expression << " after " << c.after;
    } else {
      ASSERT_TRUE(next.has_value()) << c.expression << " after " << c.after;
      EXPECT_EQ(*next, At(c.expected)) << c.expression << " after " << c.after;
    }
  }
}

TEST(CronTest, SecondsInsideAMinuteMoveToTheNextMinute) {
  auto cron = CronSchedule::Parse("cron(* * * * ? *)");
  ASSERT_TRUE(cron.ok());
  EXPECT_EQ(*cron->NextAfter(At("2026-12-01 10:32") + 59999), At("2026-12-01 10:33"));
  EXPECT_EQ(*cron->NextAfter(At("2026-12-01 10:32") - 1), At("2026-12-01 10:32"));
}

TEST(CronTest, InvalidExpressionsNameTheirField) {
  const std::pair<const char*, const char*> kCases[] = {
      {"cron(60 * * * ? *)", "Minutes"},
      {"cron(0/0 * * * ? *)", "Minutes"},
      {"cron(0 25 * * ? *)", "Hours"},
      {"cron(0 0 32 * ? *)", "Day-of-month"},
      {"cron(0 0 5L * ? *)", "Day-of-month"},
      {"cron(0 0 * 13 ? *)", "Month"},
      {"cron(0 0 * FOO ? *)", "Month"},
      {"cron(0 0 ? * 8 *)", "Day-of-week"},
      {"cron(0 0 ? * 2#6 *)", "Day-of-week"},
      {"cron(0 0 * * * *)", "Day-of-week"},
      {"cron(0 0 ? * ? *)", "Day-of-week"},
      {"cron(0 0 * * ? 1969)", "Year"},
      {"cron(0 0 * * ? 2200)", "Year"},
      {"cron(0 0 * * ?)", "6"},
      {"rate(5 minutes)", "cron("},
      {"cron(0 0 1,,2 * ? *)", "Day-of-month"},
  };
  for (const auto& [expression, field] : kCases) {
    auto cron = CronSchedule::Parse(expression);
    ASSERT_FALSE(cron.ok()) << expression;
    EXPECT_EQ(cron.status().code(), StatusCode::kInvalidInput) << expression;
    EXPECT_NE(cron.status().message().find(field), std::string::npos)
        << expression << ": " << cron.status().message();
  }
}

TEST(CronTest, CalendarHelpers) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DayOfWeek(1970, 1, 1), 5);    // Thursday
  EXPECT_EQ(DayOfWeek(2026, 12, 1), 3);   // Tuesday
  EXPECT_EQ(DaysInMonth(2000, 2), 29);
  EXPECT_EQ(DaysInMonth(1900, 2), 28);
  EXPECT_EQ(DaysInMonth(2026, 4), 30);
}

TEST(CronTest, AnExpressionThatNeverFiresIsAnsweredQuickly) {
  auto cron = CronSchedule::Parse("cron(59 23 31 2,4,6,9,11 ? *)");
  ASSERT_TRUE(cron.ok());
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(cron->NextAfter(At("1970-01-01 00:00")).has_value());
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(took).count(), 1000);
}

}  // namespace
}  // namespace openglue
