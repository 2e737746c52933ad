#include "common/clock.h"

#include <gtest/gtest.h>

namespace openglue {
namespace {

TEST(FormatHttpDateTest, IsImfFixdateInGmt) {
  // RFC 9110's own example, 784111777 s after the epoch.
  EXPECT_EQ(FormatHttpDate(784111777), "Sun, 06 Nov 1994 08:49:37 GMT");
  EXPECT_EQ(FormatHttpDate(0), "Thu, 01 Jan 1970 00:00:00 GMT");
  // A leap day, and the last second of a year (single-digit fields are zero-padded).
  EXPECT_EQ(FormatHttpDate(951782400), "Tue, 29 Feb 2000 00:00:00 GMT");
  EXPECT_EQ(FormatHttpDate(1767225599), "Wed, 31 Dec 2025 23:59:59 GMT");
  EXPECT_EQ(FormatHttpDate(1772773505), "Fri, 06 Mar 2026 05:05:05 GMT");
}

}  // namespace
}  // namespace openglue
