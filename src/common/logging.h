// Minimal leveled logging to stderr. Thread-safe: each line is written with one call.
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace openglue {

enum class LogLevel { kDebug = 0, kInfo, kWarn, kError };

// Parses "debug" | "info" | "warn" | "error"; returns false for anything else.
bool ParseLogLevel(std::string_view text, LogLevel* level);
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
// Writes "<UTC time> LEVEL message" as one line: the message's control characters are escaped
// (EscapeControlCharacters), so a client-chosen name in it cannot end the line or forge another.
void LogLine(LogLevel level, const std::string& message);

}  // namespace openglue

#define OG_LOG(level, stream_expr)                                                   \
  do {                                                                               \
    if (::openglue::LogLevel::level >= ::openglue::GetLogLevel()) {                  \
      std::ostringstream _og_log_stream;                                             \
      _og_log_stream << stream_expr;                                                 \
      ::openglue::LogLine(::openglue::LogLevel::level, _og_log_stream.str());        \
    }                                                                                \
  } while (false)
