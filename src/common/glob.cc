#include "common/glob.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/strings.h"

namespace openglue {

namespace {

// Glue globs (Java's PathMatcher glob syntax): compiled to tokens, matched by dynamic
// programming over (pattern token, text position), so hostile patterns stay polynomial.
struct GlobToken {
  enum Kind { kLiteral, kAny, kStar, kDoubleStar, kClass };
  GlobToken(Kind k, char ch = 0) : kind(k), c(ch) {}
  Kind kind;
  char c = 0;
  bool negate = false;
  std::string set;  // for kClass: pairs (lo, hi)
};

std::vector<GlobToken> CompileGlob(std::string_view p) {
  std::vector<GlobToken> tokens;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '*') {
      if (i + 1 < p.size() && p[i + 1] == '*') {
        tokens.emplace_back(GlobToken::kDoubleStar);
        ++i;
      } else {
        tokens.emplace_back(GlobToken::kStar);
      }
    } else if (c == '?') {
      tokens.emplace_back(GlobToken::kAny);
    } else if (c == '[') {
      size_t j = i + 1;
      GlobToken t(GlobToken::kClass);
      if (j < p.size() && (p[j] == '!' || p[j] == '^')) {
        t.negate = true;
        ++j;
      }
      size_t start = j;
      while (j < p.size() && (p[j] != ']' || j == start)) {
        char lo = p[j], hi = p[j];
        if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
          hi = p[j + 2];
          j += 2;
        }
        t.set.push_back(lo);
        t.set.push_back(hi);
        ++j;
      }
      if (j >= p.size()) {  // no closing bracket: a literal '['
        tokens.emplace_back(GlobToken::kLiteral, '[');
        continue;
      }
      tokens.push_back(t);
      i = j;
    } else if (c == '\\' && i + 1 < p.size()) {
      tokens.emplace_back(GlobToken::kLiteral, p[++i]);
    } else {
      tokens.emplace_back(GlobToken::kLiteral, c);
    }
  }
  return tokens;
}

bool TokensMatch(const std::vector<GlobToken>& tokens, std::string_view text) {
  // reach[j]: the tokens so far can consume exactly text[0, j).
  std::vector<char> reach(text.size() + 1, 0), next(text.size() + 1, 0);
  reach[0] = 1;
  for (const auto& t : tokens) {
    std::fill(next.begin(), next.end(), 0);
    for (size_t j = 0; j <= text.size(); ++j) {
      if (t.kind == GlobToken::kStar || t.kind == GlobToken::kDoubleStar) {
        // Stars extend from any reachable position (including j itself).
        if (reach[j] || (j > 0 && next[j - 1] &&
                         (t.kind == GlobToken::kDoubleStar || text[j - 1] != '/'))) {
          next[j] = 1;
        }
        continue;
      }
      if (!reach[j] || j == text.size()) continue;
      char c = text[j];
      bool ok = false;
      if (t.kind == GlobToken::kLiteral) {
        ok = c == t.c;
      } else if (t.kind == GlobToken::kAny) {
        ok = c != '/';
      } else {
        for (size_t k = 0; k + 1 < t.set.size(); k += 2) {
          if (c >= t.set[k] && c <= t.set[k + 1]) ok = true;
        }
        ok = (ok != t.negate) && c != '/';
      }
      if (ok) next[j + 1] = 1;
    }
    reach.swap(next);
  }
  return reach[text.size()] != 0;
}

// The first character of `chars` at or after `from` that no backslash escapes (npos if none).
size_t FindUnescaped(const std::string& p, size_t from, std::string_view chars) {
  for (size_t i = from; i < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
      continue;
    }
    if (chars.find(p[i]) != std::string_view::npos) return i;
  }
  return std::string::npos;
}

// {a,b} alternatives expanded (not nested; at most 64 expansions); `\{`, `\,` and `\}` are
// literal characters.
void ExpandBraces(const std::string& p, std::vector<std::string>* out) {
  size_t open = FindUnescaped(p, 0, "{");
  size_t close = open == std::string::npos ? open : FindUnescaped(p, open + 1, "}");
  if (open == std::string::npos || close == std::string::npos || out->size() > 64) {
    out->push_back(p);
    return;
  }
  const std::string head = p.substr(0, open), tail = p.substr(close + 1);
  for (size_t start = open + 1;;) {
    size_t end = FindUnescaped(p, start, ",}");  // at `close` at the latest
    ExpandBraces(head + p.substr(start, end - start) + tail, out);
    if (end >= close) break;
    start = end + 1;
  }
}

}  // namespace

bool GlobMatches(std::string_view pattern, std::string_view uri) {
  if (pattern.size() > kMaxGlobLength) return false;
  std::vector<std::string> alternatives;
  ExpandBraces(std::string(pattern), &alternatives);
  for (const auto& alt : alternatives) {
    if (TokensMatch(CompileGlob(alt), uri)) return true;
  }
  return false;
}

}  // namespace openglue
