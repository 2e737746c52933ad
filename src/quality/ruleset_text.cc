#include "quality/ruleset_text.h"

#include <string>
#include <utility>
#include <vector>

namespace openglue::quality {
namespace {

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// "line L, column C" of byte `offset` (both from 1), for messages.
std::string Where(std::string_view text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

char CloserOf(char opener) { return opener == '[' ? ']' : opener == '(' ? ')' : '}'; }

// Walks DQDL text, skipping quoted strings and comments, and tracking the brackets open.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  // Steps over the character at `i` (a whole string or comment when one starts there) and
  // returns the offset after it. Sets *code to the character when it is outside strings and
  // comments ('\0' otherwise). InvalidInput for an unclosed string or a closer that closes
  // nothing or the wrong bracket.
  Status Step(size_t* i, char* code) {
    char c = text_[*i];
    *code = '\0';
    last_was_string_ = false;
    if (c == '"' || c == '\'') {
      size_t start = *i;
      for (size_t j = *i + 1; j < text_.size(); ++j) {
        if (text_[j] == '\\') {
          ++j;
          continue;
        }
        if (text_[j] == c) {
          *i = j + 1;
          last_was_string_ = true;
          return Status::OK();
        }
      }
      return Status::InvalidInput(std::string("The ruleset has a string opened at ") +
                                  Where(text_, start) + " (" + c + ") that is never closed.");
    }
    if (c == '#') {
      size_t end = text_.find('\n', *i);
      *i = end == std::string_view::npos ? text_.size() : end;
      return Status::OK();
    }
    if (c == '[' || c == '(' || c == '{') {
      open_.push_back({c, *i});
    } else if (c == ']' || c == ')' || c == '}') {
      if (open_.empty())
        return Status::InvalidInput(std::string("The ruleset has a '") + c + "' at " +
                                    Where(text_, *i) + " that closes nothing.");
      if (CloserOf(open_.back().first) != c)
        return Status::InvalidInput(std::string("The ruleset has a '") + c + "' at " +
                                    Where(text_, *i) + " where the '" + open_.back().first +
                                    "' opened at " + Where(text_, open_.back().second) +
                                    " needs a '" + CloserOf(open_.back().first) + "'.");
      open_.pop_back();
    }
    *code = c;
    ++*i;
    return Status::OK();
  }

  size_t depth() const { return open_.size(); }
  // Whether the last Step stepped over a quoted string.
  bool last_was_string() const { return last_was_string_; }

 private:
  std::string_view text_;
  bool last_was_string_ = false;
  std::vector<std::pair<char, size_t>> open_;
};

}  // namespace

Result<int64_t> CheckRuleset(std::string_view dqdl) {
  bool blank = true;
  for (char c : dqdl) blank = blank && IsBlank(c);
  if (blank) return Status::InvalidInput("The ruleset is empty: it needs a `Rules = [ ... ]` list.");

  // Find `Rules` at depth 0, outside strings and comments, as a whole word.
  Scanner scanner(dqdl);
  size_t i = 0;
  size_t rules_end = std::string_view::npos;
  while (i < dqdl.size()) {
    size_t at = i;
    size_t depth_before = scanner.depth();
    char code = '\0';
    OG_RETURN_NOT_OK(scanner.Step(&i, &code));
    if (code == 'R' && depth_before == 0 && dqdl.substr(at, 5) == "Rules" &&
        (at == 0 || !IsWordChar(dqdl[at - 1])) &&
        (at + 5 >= dqdl.size() || !IsWordChar(dqdl[at + 5]))) {
      rules_end = at + 5;
      break;
    }
  }
  if (rules_end == std::string_view::npos)
    return Status::InvalidInput("The ruleset has no `Rules = [ ... ]` list (DQDL: Rules = [ "
                                "IsComplete \"id\", ... ]).");

  // `=` (optional), then `[`.
  i = rules_end;
  bool equals = false;
  while (i < dqdl.size() && (IsBlank(dqdl[i]) || (!equals && dqdl[i] == '='))) {
    if (dqdl[i] == '=') equals = true;
    ++i;
  }
  if (i >= dqdl.size() || dqdl[i] != '[')
    return Status::InvalidInput("The ruleset's `Rules` at " + Where(dqdl, rules_end - 5) +
                                " is not followed by a `[` opening its list of rules.");
  size_t open_at = i;

  // The list: count the non-blank pieces between commas at depth 1 (inside the `[`).
  Scanner list(dqdl);
  char code = '\0';
  OG_RETURN_NOT_OK(list.Step(&i, &code));  // the `[`
  int64_t rules = 0;
  bool piece = false;  // the current piece has code in it
  while (i < dqdl.size()) {
    size_t depth_before = list.depth();
    OG_RETURN_NOT_OK(list.Step(&i, &code));
    if (list.depth() == 0) {  // the list's `]`
      if (piece) ++rules;
      return rules;
    }
    if (depth_before == 1 && code == ',') {
      if (piece) ++rules;
      piece = false;
    } else if ((code != '\0' && !IsBlank(code)) || list.last_was_string()) {
      piece = true;  // code or a string; comments and blanks do not make a rule
    }
  }
  return Status::InvalidInput("The ruleset's `Rules` list opened at " + Where(dqdl, open_at) +
                              " is never closed with a `]`.");
}

}  // namespace openglue::quality
