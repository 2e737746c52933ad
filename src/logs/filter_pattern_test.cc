#include "logs/filter_pattern.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

namespace openglue::logs {
namespace {

bool Match(const std::string& pattern, const std::string& message) {
  Result<FilterPattern> parsed = FilterPattern::Parse(pattern);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() && parsed->Matches(message);
}

TEST(FilterPatternTest, Terms) {
  EXPECT_TRUE(Match("", "anything"));
  EXPECT_TRUE(Match("   ", "anything"));
  EXPECT_TRUE(Match("ERROR", "an ERROR here"));
  EXPECT_FALSE(Match("error", "an ERROR here"));
  EXPECT_TRUE(Match("ERROR disk", "disk ERROR"));
  EXPECT_FALSE(Match("ERROR disk", "ERROR net"));
  EXPECT_TRUE(Match("\"disk full\"", "ERROR disk full"));
  EXPECT_FALSE(Match("\"full disk\"", "ERROR disk full"));
  EXPECT_TRUE(Match("\"say \\\"hi\\\"\"", "they say \"hi\""));
  EXPECT_TRUE(Match("?WARN ?INFO", "INFO ok"));
  EXPECT_FALSE(Match("?WARN ?INFO", "ERROR"));
  EXPECT_TRUE(Match("ERROR -network", "ERROR disk"));
  EXPECT_FALSE(Match("ERROR -network", "ERROR network"));
  EXPECT_FALSE(Match("a -a", "a"));  // one term in two roles
  // Overlapping terms and terms that are suffixes of each other (the automaton's output links).
  EXPECT_TRUE(Match("abcd bcd cd d", "xabcdx"));
  EXPECT_TRUE(Match("aab ab", "aaab"));
  EXPECT_FALSE(Match("aab ab", "aaxb"));
  EXPECT_TRUE(Match("he she his hers", "ushers his"));
  EXPECT_FALSE(Match("he she his hers", "ushers"));
  EXPECT_TRUE(Match("\xc3\xa9t\xc3\xa9", "summer \xc3\xa9t\xc3\xa9"));
}

TEST(FilterPatternTest, TheSameAnswerOnEveryMessage) {
  // Scratch state is reset between messages.
  Result<FilterPattern> p = FilterPattern::Parse("alpha ?beta ?gamma -delta");
  ASSERT_TRUE(p.ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(p->Matches("alpha beta"));
    EXPECT_FALSE(p->Matches("alpha"));
    EXPECT_FALSE(p->Matches("alpha gamma delta"));
    EXPECT_TRUE(p->Matches("gamma alpha"));
  }
}

TEST(FilterPatternTest, Refusals) {
  for (const char* bad : {"{ $.a = 1 }", "[ip, user]", "%ERR.*%", "\"open"}) {
    EXPECT_EQ(FilterPattern::Parse(bad).status().code(), StatusCode::kInvalidInput) << bad;
  }
}

TEST(FilterPatternTest, LengthLimitIsCloudWatchs) {
  std::string at_limit(kMaxFilterPatternLength, 'a');
  EXPECT_TRUE(FilterPattern::Parse(at_limit).ok());
  EXPECT_EQ(FilterPattern::Parse(at_limit + "a").status().code(), StatusCode::kInvalidInput);
  // Characters, not bytes: 1,024 two-byte characters are allowed.
  std::string accents;
  for (size_t i = 0; i < kMaxFilterPatternLength; ++i) accents += "\xc3\xa9";
  EXPECT_TRUE(FilterPattern::Parse(accents).ok());
  // 50,000 terms: refused before any work.
  std::string huge;
  for (int i = 0; i < 50000; ++i) huge += "t" + std::to_string(i) + " ";
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(FilterPattern::Parse(huge).status().code(), StatusCode::kInvalidInput);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
}

TEST(FilterPatternTest, MatchingIsLinearInTheMessage) {
  // The worst case for naive substring search: many ?terms (each must be looked for) that
  // almost match at every position.
  std::string pattern;
  for (char last = 'b'; pattern.size() + 64 < kMaxFilterPatternLength; ++last) {
    pattern += "?" + std::string(61, 'a') + last + " ";
  }
  Result<FilterPattern> p = FilterPattern::Parse(pattern);
  ASSERT_TRUE(p.ok());
  const std::string message(256 * 1024, 'a');  // one maximal event
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 40; ++i) EXPECT_FALSE(p->Matches(message));
  auto elapsed = std::chrono::steady_clock::now() - start;
  // 10 MiB scanned: linear takes milliseconds; a substring search per term (15 terms, ~62
  // comparisons per byte each) took 4.4 s here.
  EXPECT_LT(elapsed, std::chrono::milliseconds(1500));
}

}  // namespace
}  // namespace openglue::logs
