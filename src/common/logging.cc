#include "common/logging.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "common/strings.h"

namespace openglue {
namespace {
std::atomic<LogLevel> g_level{LogLevel::kInfo};
}

bool ParseLogLevel(std::string_view text, LogLevel* level) {
  if (text == "debug") *level = LogLevel::kDebug;
  else if (text == "info") *level = LogLevel::kInfo;
  else if (text == "warn") *level = LogLevel::kWarn;
  else if (text == "error") *level = LogLevel::kError;
  else return false;
  return true;
}

void SetLogLevel(LogLevel level) { g_level = level; }
LogLevel GetLogLevel() { return g_level.load(); }

void LogLine(LogLevel level, const std::string& message) {
  static const char* kNames[] = {"DEBUG", "INFO", "WARN", "ERROR"};
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  int millis = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
  std::string line = std::string(stamp) + "." + (millis < 100 ? (millis < 10 ? "00" : "0") : "") +
                     std::to_string(millis) + "Z " + kNames[static_cast<int>(level)] + " " +
                     EscapeControlCharacters(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace openglue
