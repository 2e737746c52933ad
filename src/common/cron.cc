#include "common/cron.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <vector>

#include "common/strings.h"

namespace openglue {
namespace {

constexpr const char* kFieldNames[] = {"Minutes", "Hours", "Day-of-month", "Month", "Day-of-week",
                                       "Year"};
constexpr const char* kMonthNames[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                       "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr const char* kDayNames[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

struct FieldSpec {
  int index;  // into kFieldNames
  int min;
  int max;
  const char* const* names;  // names[i] stands for min + i, or null
  int name_count;
};

std::string Upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

Status FieldError(const FieldSpec& spec, std::string_view field, const std::string& why) {
  return Status::InvalidInput("Invalid schedule expression: the " +
                              std::string(kFieldNames[spec.index]) + " field '" +
                              TruncateUtf8(SanitizeUtf8(std::string(field)), 64) + "': " + why);
}

std::string RangeText(const FieldSpec& spec) {
  return std::to_string(spec.min) + "-" + std::to_string(spec.max);
}

// A number or a name of the field; nullopt when `text` is neither.
std::optional<int> Value(const FieldSpec& spec, std::string_view text) {
  if (text.empty()) return std::nullopt;
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc() && end == text.data() + text.size()) return value;
  std::string upper = Upper(text);
  for (int i = 0; spec.names != nullptr && i < spec.name_count; ++i)
    if (upper == spec.names[i]) return spec.min + i;
  return std::nullopt;
}

Result<int> InRange(const FieldSpec& spec, std::string_view field, std::string_view text) {
  std::optional<int> value = Value(spec, text);
  if (!value)
    return FieldError(spec, field, "'" + TruncateUtf8(SanitizeUtf8(std::string(text)), 32) +
                                       "' is not a value of this field");
  if (*value < spec.min || *value > spec.max)
    return FieldError(spec, field, std::to_string(*value) + " is out of range " + RangeText(spec));
  return *value;
}

// Parses the list syntax (`*`, values, ranges, steps, commas) into `out`, indexed by value.
template <size_t N>
Status ParseList(const FieldSpec& spec, std::string_view field, std::bitset<N>* out,
                 int offset = 0) {
  if (field.empty()) return FieldError(spec, field, "empty");
  for (const std::string& item : Split(std::string(field), ',')) {
    if (item.empty()) return FieldError(spec, field, "an empty list item");
    std::string_view range = item;
    int step = 1;
    size_t slash = item.find('/');
    if (slash != std::string::npos) {
      std::string_view step_text = std::string_view(item).substr(slash + 1);
      auto [end, ec] = std::from_chars(step_text.data(), step_text.data() + step_text.size(), step);
      if (ec != std::errc() || end != step_text.data() + step_text.size() || step < 1)
        return FieldError(spec, field, "the step after '/' must be a positive number");
      range = std::string_view(item).substr(0, slash);
    }
    int first = spec.min, last = spec.max;
    if (range == "*") {
      // whole range
    } else {
      size_t dash = range.find('-');
      if (dash == std::string_view::npos) {
        OG_ASSIGN_OR_RETURN(first, InRange(spec, field, range));
        // `a/b` runs from a to the end of the range; a lone value is itself.
        last = slash != std::string::npos ? spec.max : first;
      } else {
        OG_ASSIGN_OR_RETURN(first, InRange(spec, field, range.substr(0, dash)));
        OG_ASSIGN_OR_RETURN(last, InRange(spec, field, range.substr(dash + 1)));
      }
    }
    int span = spec.max - spec.min + 1;
    int count = last >= first ? last - first + 1 : (spec.max - first + 1) + (last - spec.min + 1);
    for (int i = 0; i < count; i += step) {
      int value = first + i;
      if (value > spec.max) value -= span;
      out->set(static_cast<size_t>(value - offset));
    }
  }
  return Status::OK();
}

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The civil date of a day number (days since 1970-01-01).
void CivilFromDays(int64_t z, int* year, int* month, int* day) {
  z += 719468;
  int64_t era = FloorDiv(z, 146097);
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp < 10 ? mp + 3 : mp - 9;
  *year = static_cast<int>(y + (m <= 2));
  *month = static_cast<int>(m);
  *day = static_cast<int>(d);
}

}  // namespace

int64_t DaysFromCivil(int year, int month, int day) {
  int64_t y = year - (month <= 2);
  int64_t era = FloorDiv(y, 400);
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

int DayOfWeek(int year, int month, int day) {
  int64_t days = DaysFromCivil(year, month, day);
  // 1970-01-01 was a Thursday (5 in Sunday = 1 numbering).
  return static_cast<int>(((days + 4) % 7 + 7) % 7) + 1;
}

Result<CronSchedule> CronSchedule::Parse(std::string_view expression) {
  std::string text = Trim(std::string(expression));
  CronSchedule cron;
  cron.text_ = text;
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.rfind("cron(", 0) != 0 || text.back() != ')')
    return Status::InvalidInput("Invalid schedule expression '" +
                                TruncateUtf8(SanitizeUtf8(text), 128) +
                                "': use cron(Minutes Hours Day-of-month Month Day-of-week Year)");
  std::vector<std::string> fields;
  for (const std::string& part : Split(text.substr(5, text.size() - 6), ' '))
    if (!Trim(part).empty()) fields.push_back(Trim(part));
  if (fields.size() != 6)
    return Status::InvalidInput("Invalid schedule expression '" +
                                TruncateUtf8(SanitizeUtf8(text), 128) + "': it has " +
                                std::to_string(fields.size()) +
                                " fields; cron() takes 6: Minutes Hours Day-of-month Month "
                                "Day-of-week Year");
  const FieldSpec minutes{0, 0, 59, nullptr, 0}, hours{1, 0, 23, nullptr, 0},
      dom{2, 1, 31, nullptr, 0}, month{3, 1, 12, kMonthNames, 12}, dow{4, 1, 7, kDayNames, 7},
      year{5, kCronFirstYear, kCronLastYear, nullptr, 0};
  OG_RETURN_NOT_OK(ParseList(minutes, fields[0], &cron.minutes_));
  OG_RETURN_NOT_OK(ParseList(hours, fields[1], &cron.hours_));
  OG_RETURN_NOT_OK(ParseList(month, fields[3], &cron.months_));
  OG_RETURN_NOT_OK(ParseList(year, fields[5], &cron.years_, kCronFirstYear));

  // Day-of-month.
  const std::string dom_text = Upper(fields[2]);
  if (dom_text == "?") {
    cron.dom_any_ = true;
  } else if (dom_text == "L") {
    cron.dom_last_ = true;
  } else if (dom_text == "LW") {
    cron.dom_last_weekday_ = true;
  } else if (dom_text.size() > 1 && dom_text.back() == 'W') {
    OG_ASSIGN_OR_RETURN(cron.dom_nearest_weekday_,
                        InRange(dom, fields[2], std::string_view(dom_text).substr(0, dom_text.size() - 1)));
  } else if (dom_text.find_first_of("LW#?") != std::string::npos) {
    return FieldError(dom, fields[2], "L, W and ? stand alone (L, LW, 15W, ?)");
  } else {
    OG_RETURN_NOT_OK(ParseList(dom, fields[2], &cron.dom_days_));
  }

  // Day-of-week.
  const std::string dow_text = Upper(fields[4]);
  size_t hash = dow_text.find('#');
  if (dow_text == "?") {
    cron.dow_any_ = true;
  } else if (dow_text == "L") {
    cron.dow_days_.set(7);  // L alone is the last day of the week: Saturday
  } else if (dow_text.size() > 1 && dow_text.back() == 'L') {
    OG_ASSIGN_OR_RETURN(cron.dow_last_,
                        InRange(dow, fields[4], std::string_view(dow_text).substr(0, dow_text.size() - 1)));
  } else if (hash != std::string::npos) {
    OG_ASSIGN_OR_RETURN(cron.dow_nth_day_, InRange(dow, fields[4], std::string_view(dow_text).substr(0, hash)));
    std::string_view nth = std::string_view(dow_text).substr(hash + 1);
    if (nth.size() != 1 || nth[0] < '1' || nth[0] > '5')
      return FieldError(dow, fields[4], "the number after '#' must be 1-5");
    cron.dow_nth_ = nth[0] - '0';
  } else if (dow_text.find_first_of("L#?W") != std::string::npos) {
    return FieldError(dow, fields[4], "L, # and ? stand alone (L, 6L, 2#3, ?)");
  } else {
    OG_RETURN_NOT_OK(ParseList(dow, fields[4], &cron.dow_days_));
  }
  if (cron.dom_any_ && cron.dow_any_)
    return FieldError(dow, fields[4], "Day-of-month and Day-of-week cannot both be '?'");
  if (!cron.dom_any_ && !cron.dow_any_)
    return FieldError(dow, fields[4],
                      "one of Day-of-month and Day-of-week must be '?' (Day-of-month is '" +
                          TruncateUtf8(SanitizeUtf8(fields[2]), 32) + "')");
  return cron;
}

bool CronSchedule::DayMatches(int year, int month, int day) const {
  int last = DaysInMonth(year, month);
  if (!dom_any_) {
    if (dom_last_) return day == last;
    if (dom_last_weekday_ || dom_nearest_weekday_ > 0) {
      // The weekday (MON-FRI) nearest the target day, without leaving the month.
      int target = dom_last_weekday_ ? last : std::min(dom_nearest_weekday_, last);
      int dow = DayOfWeek(year, month, target);
      int chosen = target;
      if (dow == 7) chosen = target == 1 ? target + 2 : target - 1;        // Saturday
      else if (dow == 1) chosen = target == last ? target - 2 : target + 1;  // Sunday
      return day == chosen;
    }
    return dom_days_.test(static_cast<size_t>(day));
  }
  int dow = DayOfWeek(year, month, day);
  if (dow_last_ > 0) return dow == dow_last_ && day + 7 > last;
  if (dow_nth_day_ > 0) return dow == dow_nth_day_ && (day - 1) / 7 + 1 == dow_nth_;
  return dow_days_.test(static_cast<size_t>(dow));
}

std::optional<int64_t> CronSchedule::NextAfter(int64_t after_ms) const {
  // The first whole minute strictly after `after_ms`.
  int64_t start_minute = FloorDiv(after_ms, 60000) + 1;
  int64_t start_day = FloorDiv(start_minute, 1440);
  int start_minute_of_day = static_cast<int>(start_minute - start_day * 1440);
  int y0, m0, d0;
  CivilFromDays(start_day, &y0, &m0, &d0);
  if (y0 > kCronLastYear) return std::nullopt;
  for (int year = std::max(y0, kCronFirstYear); year <= kCronLastYear; ++year) {
    if (!years_.test(static_cast<size_t>(year - kCronFirstYear))) continue;
    for (int month = year == y0 ? m0 : 1; month <= 12; ++month) {
      if (!months_.test(static_cast<size_t>(month))) continue;
      bool first_month = year == y0 && month == m0;
      for (int day = first_month ? d0 : 1; day <= DaysInMonth(year, month); ++day) {
        if (!DayMatches(year, month, day)) continue;
        bool first_day = first_month && day == d0;
        int from = first_day ? start_minute_of_day : 0;
        for (int hour = from / 60; hour < 24; ++hour) {
          if (!hours_.test(static_cast<size_t>(hour))) continue;
          for (int minute = hour == from / 60 ? from % 60 : 0; minute < 60; ++minute) {
            if (!minutes_.test(static_cast<size_t>(minute))) continue;
            return (DaysFromCivil(year, month, day) * 1440 + hour * 60 + minute) * 60000;
          }
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace openglue
