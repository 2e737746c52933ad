#include "common/clock.h"

#include <chrono>
#include <cstdio>

namespace openglue {

int64_t SystemClock::NowMillis() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string FormatHttpDate(int64_t epoch_seconds) {
  using namespace std::chrono;
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  sys_seconds tp{seconds{epoch_seconds}};
  sys_days day = floor<days>(tp);
  year_month_day ymd{day};
  hh_mm_ss<seconds> hms{tp - day};
  char out[40];
  std::snprintf(out, sizeof(out), "%s, %02u %s %04d %02ld:%02ld:%02lld GMT",
                kDays[weekday{day}.c_encoding()], static_cast<unsigned>(ymd.day()),
                kMonths[static_cast<unsigned>(ymd.month()) - 1], static_cast<int>(ymd.year()),
                static_cast<long>(hms.hours().count()), static_cast<long>(hms.minutes().count()),
                static_cast<long long>(hms.seconds().count()));
  return out;
}

}  // namespace openglue
