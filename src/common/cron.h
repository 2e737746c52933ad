// Glue's schedule expressions: `cron(Minutes Hours Day-of-month Month Day-of-week Year)`, always
// in UTC, as SCHEDULED triggers and crawler schedules carry them.
//
//   field          values                     special characters
//   Minutes        0-59                       , - * /
//   Hours          0-23                       , - * /
//   Day-of-month   1-31                       , - * / ? L W (15W, LW)
//   Month          1-12 or JAN-DEC            , - * /
//   Day-of-week    1-7 or SUN-SAT (1 = SUN)   , - * / ? L # (6L, 2#3)
//   Year           1970-2199                  , - * /
//
// One of Day-of-month and Day-of-week must be `?` (both may not be), as in Glue. A range whose
// start is past its end wraps (FRI-MON, NOV-FEB). `a/b` starts at a and steps by b to the end
// of the field's range.
//
// Thread-safe: a parsed CronSchedule is immutable.
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace openglue {

inline constexpr int kCronFirstYear = 1970;
inline constexpr int kCronLastYear = 2199;

class CronSchedule {
 public:
  // Parses `cron(...)` (surrounding spaces allowed). InvalidInput whose message names the field
  // that is wrong (e.g. "... the Hours field '25': 25 is out of range 0-23").
  static Result<CronSchedule> Parse(std::string_view expression);

  // The first fire time strictly after `after_ms` (milliseconds since the epoch, UTC), on a
  // whole minute; nullopt when the expression never fires again (past 2199, or a date that
  // does not exist such as 30 FEB). Bounded: it walks years, months and days, never minutes,
  // so the worst case (no match at all) is a few hundred thousand cheap steps.
  std::optional<int64_t> NextAfter(int64_t after_ms) const;

  const std::string& text() const { return text_; }

 private:
  // Whether day `day` of `month` (1-12) in `year` matches the day-of-month and day-of-week
  // fields.
  bool DayMatches(int year, int month, int day) const;

  std::string text_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<13> months_;  // 1-12
  std::bitset<kCronLastYear - kCronFirstYear + 1> years_;
  // Day-of-month: `?` (no constraint), a set of days, L (last day), nW (weekday nearest n),
  // LW (last weekday).
  bool dom_any_ = false;
  std::bitset<32> dom_days_;  // 1-31
  bool dom_last_ = false;
  int dom_nearest_weekday_ = 0;  // n of nW, 0 = none
  bool dom_last_weekday_ = false;
  // Day-of-week (1 = Sunday): `?`, a set of days, nL (last n-day of the month), n#k (k-th n-day).
  bool dow_any_ = false;
  std::bitset<8> dow_days_;  // 1-7
  int dow_last_ = 0;         // n of nL, 0 = none
  int dow_nth_day_ = 0;      // n of n#k, 0 = none
  int dow_nth_ = 0;          // k of n#k
};

// Calendar helpers (proleptic Gregorian, UTC), exposed for tests.
int64_t DaysFromCivil(int year, int month, int day);
int DaysInMonth(int year, int month);
// 1 = Sunday ... 7 = Saturday, as the Day-of-week field counts.
int DayOfWeek(int year, int month, int day);

}  // namespace openglue
