#include "common/strings.h"

#include <gtest/gtest.h>

#include "common/json.h"
#include "common/random.h"
#include "common/status.h"

namespace openglue {
namespace {

TEST(Utf8, ValidTextIsUnchanged) {
  EXPECT_TRUE(IsValidUtf8("plain é ✓ 𝄞"));
  EXPECT_EQ(SanitizeUtf8("plain é ✓ 𝄞"), "plain é ✓ 𝄞");
}

TEST(Utf8, IllFormedSequencesBecomeReplacementCharacters) {
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_EQ(SanitizeUtf8("a\xff" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(SanitizeUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(SanitizeUtf8("x\xC3"), "x\xEF\xBF\xBD");  // cut mid-character
  EXPECT_TRUE(IsValidUtf8(SanitizeUtf8("\xF4\x90\x80\x80 \xF8")));
}

TEST(Utf8, TruncationCutsOnCharacterBoundaries) {
  std::string e_acute = "\xC3\xA9";
  std::string text = "x";
  for (int i = 0; i < 1500; ++i) text += e_acute;
  std::string cut = TruncateUtf8(text, 2048);
  EXPECT_LE(cut.size(), 2048u);
  EXPECT_EQ(cut.size(), 2047u);  // 'x' + 1023 whole characters
  EXPECT_TRUE(IsValidUtf8(cut));
  EXPECT_EQ(TruncateUtf8("abc", 10), "abc");
}

TEST(Utf8, EscapeControlCharactersMakesOneLine) {
  // A key that would forge a second log event stays on its line.
  EXPECT_EQ(EscapeControlCharacters("x\n[abc] INFO : Deleted table t\r\n.json"),
            "x\\x0A[abc] INFO : Deleted table t\\x0D\\x0A.json");
  EXPECT_EQ(EscapeControlCharacters(std::string("a\0b\tc\x7f", 6)), "a\\x00b\\x09c\\x7F");
  EXPECT_EQ(EscapeControlCharacters("nel\xC2\x85 ls\xE2\x80\xA8 ps\xE2\x80\xA9"),
            "nel\\u0085 ls\\u2028 ps\\u2029");
  EXPECT_EQ(EscapeControlCharacters("bad \xff\xC3"), "bad \\xFF\\xC3");
  // Printable text, other characters and backslashes are kept.
  EXPECT_EQ(EscapeControlCharacters("s3://b/k\\n é ✓ 𝄞 \xC2\xA0"), "s3://b/k\\n é ✓ 𝄞 \xC2\xA0");
}

TEST(Json, DumpNeverThrowsOnInvalidUtf8) {
  Json doc{{"ErrorMessage", std::string("bad \xff\xfe bytes")}};
  EXPECT_THROW((void)doc.dump(), nlohmann::json::type_error);
  std::string text = DumpJson(doc);
  Json back = ParseJson(text);
  ASSERT_FALSE(back.is_discarded());
  EXPECT_EQ(back["ErrorMessage"], "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
  EXPECT_TRUE(ParseJson("{not json").is_discarded());
}

TEST(Random, SeededIsDeterministicAndAlphabetIsRespected) {
  SeededRandom a(7), b(7);
  EXPECT_EQ(a.Hex(16), b.Hex(16));
  std::string s = a.FromAlphabet("AB", 200);
  EXPECT_EQ(s.size(), 200u);
  EXPECT_EQ(s.find_first_not_of("AB"), std::string::npos);
  SystemRandom system;
  EXPECT_NE(system.Hex(16), system.Hex(16));
}

TEST(Status, OneTableFromCodeToGlueName) {
  EXPECT_STREQ(GlueErrorName(StatusCode::kConcurrentRunsExceeded), "ConcurrentRunsExceededException");
  EXPECT_STREQ(GlueErrorName(StatusCode::kEntityNotFound), "EntityNotFoundException");
  EXPECT_EQ(HttpStatusFor(StatusCode::kInternal), 500);
  EXPECT_EQ(HttpStatusFor(StatusCode::kInvalidSignature), 403);
}

TEST(ResultDeathTest, ValueOnAnErrorAborts) {
  Result<int> r = Status::InvalidInput("nope");
  EXPECT_DEATH((void)r.value(), "InvalidInput: nope");
}

}  // namespace
}  // namespace openglue

namespace openglue {
namespace {

TEST(PercentDecode, DecodesEscapesAndKeepsBrokenOnes) {
  EXPECT_EQ(PercentDecode("a%2Fb%3d%25"), "a/b=%");
  EXPECT_EQ(PercentDecode("a+b"), "a+b");
  EXPECT_EQ(PercentDecode("%"), "%");
  EXPECT_EQ(PercentDecode("x%2"), "x%2");
  EXPECT_EQ(PercentDecode("%zz%41"), "%zzA");
}

}  // namespace
}  // namespace openglue
