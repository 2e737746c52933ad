#include "logs/filter_pattern.h"

#include <algorithm>
#include <deque>
#include <map>

#include "common/strings.h"

namespace openglue::logs {
namespace {

// Code points; `text` may be ill-formed (each stray byte counts as one).
size_t CharacterCount(std::string_view text) {
  size_t n = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

}  // namespace

Result<FilterPattern> FilterPattern::Parse(std::string_view text) {
  // Checked before anything else, so an oversized pattern costs nothing.
  if (text.size() > 4 * kMaxFilterPatternLength ||
      CharacterCount(text) > kMaxFilterPatternLength) {
    return Status::InvalidInput("1 validation error detected: Value at 'filterPattern' failed "
                                "to satisfy constraint: Member must have length less than or "
                                "equal to " + std::to_string(kMaxFilterPatternLength));
  }
  FilterPattern pattern;
  const std::string t = Trim(text);
  if (t.empty()) return pattern;
  if (t[0] == '{' || t[0] == '[' || t[0] == '%') {
    return Status::InvalidInput(
        "Unsupported filter pattern: only terms, \"quoted phrases\", ?optional and -excluded "
        "terms are supported");
  }
  std::map<std::string, uint32_t> ids;
  size_t i = 0;
  const size_t n = t.size();
  while (i < n) {
    while (i < n && (t[i] == ' ' || t[i] == '\t')) ++i;
    if (i >= n) break;
    char kind = 0;
    if ((t[i] == '?' || t[i] == '-') && i + 1 < n && t[i + 1] != ' ') kind = t[i++];
    std::string term;
    if (t[i] == '"') {
      ++i;
      bool closed = false;
      while (i < n) {
        if (t[i] == '\\' && i + 1 < n) {
          term += t[i + 1];
          i += 2;
        } else if (t[i] == '"') {
          ++i;
          closed = true;
          break;
        } else {
          term += t[i++];
        }
      }
      if (!closed) return Status::InvalidInput("Invalid filter pattern: unclosed quote");
    } else {
      while (i < n && t[i] != ' ' && t[i] != '\t') term += t[i++];
    }
    if (term.empty()) continue;
    auto [it, added] = ids.emplace(term, static_cast<uint32_t>(pattern.terms_.size()));
    if (added) pattern.terms_.push_back(std::move(term));
    std::vector<uint32_t>& list =
        kind == '?' ? pattern.any_ : kind == '-' ? pattern.none_ : pattern.all_;
    list.push_back(it->second);
  }
  pattern.Build();
  return pattern;
}

void FilterPattern::Build() {
  // A trie of the terms (at most 4 KiB of them, so at most 4,097 states of 256 transitions).
  size_t states = 1;
  for (const std::string& term : terms_) states += term.size();
  delta_.assign(states * 256, 0);
  term_at_.assign(states, -1);
  output_.assign(states, 0);
  found_.assign(terms_.size(), 0);
  generation_ = 0;
  std::vector<bool> trie_edge(states * 256, false);
  uint32_t next = 1;
  for (size_t id = 0; id < terms_.size(); ++id) {
    uint32_t node = 0;
    for (unsigned char c : terms_[id]) {
      size_t edge = static_cast<size_t>(node) * 256 + c;
      if (!trie_edge[edge]) {
        trie_edge[edge] = true;
        delta_[edge] = next++;
      }
      node = delta_[edge];
    }
    term_at_[node] = static_cast<int32_t>(id);
  }
  // Breadth first: failure links, then every missing transition follows its failure link, so
  // a scan takes exactly one step per byte.
  std::vector<uint32_t> fail(states, 0);
  std::deque<uint32_t> queue;
  for (int c = 0; c < 256; ++c) {
    if (trie_edge[c]) queue.push_back(delta_[c]);
  }
  while (!queue.empty()) {
    uint32_t u = queue.front();
    queue.pop_front();
    for (int c = 0; c < 256; ++c) {
      size_t edge = static_cast<size_t>(u) * 256 + c;
      uint32_t via_fail = delta_[static_cast<size_t>(fail[u]) * 256 + c];
      if (trie_edge[edge]) {
        uint32_t v = delta_[edge];
        fail[v] = via_fail;
        output_[v] = term_at_[via_fail] >= 0 ? via_fail : output_[via_fail];
        queue.push_back(v);
      } else {
        delta_[edge] = via_fail;
      }
    }
  }
}

bool FilterPattern::Matches(std::string_view message) const {
  if (terms_.empty()) return true;
  if (++generation_ == 0) {  // wrapped: forget every old mark
    std::fill(found_.begin(), found_.end(), 0);
    generation_ = 1;
  }
  const uint32_t gen = generation_;
  uint32_t state = 0;
  for (unsigned char c : message) {
    state = delta_[static_cast<size_t>(state) * 256 + c];
    uint32_t node = term_at_[state] >= 0 ? state : output_[state];
    // Each term is marked once per message: a marked term's suffix chain is marked already.
    while (node != 0 && found_[term_at_[node]] != gen) {
      found_[term_at_[node]] = gen;
      node = output_[node];
    }
  }
  auto found = [&](uint32_t id) { return found_[id] == gen; };
  if (!std::all_of(all_.begin(), all_.end(), found)) return false;
  if (std::any_of(none_.begin(), none_.end(), found)) return false;
  return any_.empty() || std::any_of(any_.begin(), any_.end(), found);
}

}  // namespace openglue::logs
