// PartitionFilter: the `Expression` of GetPartitions (and of GetUnfilteredPartitionsMetadata,
// DeletePartition batches and friends), compiled once and evaluated against many partitions.
//
// Glue documents the expression as "SQL syntax similar to the SQL WHERE filter clause". The
// grammar accepted here:
//
//   expression := or
//   or         := and { OR and }
//   and        := not { AND not }
//   not        := NOT not | '(' or ')' | predicate
//   predicate  := operand cmp operand                 -- one side a key, the other a literal
//               | key [NOT] BETWEEN literal AND literal
//               | key [NOT] IN '(' literal { ',' literal } ')'
//               | key [NOT] LIKE 'pattern' [ESCAPE 'c']
//               | key IS [NOT] NULL
//   cmp        := = | <> | != | < | <= | > | >=
//   key        := identifier | `quoted` | "quoted"     -- case-insensitive
//   literal    := 'string' | [+|-] number | DATE 'string' | TIMESTAMP 'string'
//   number     := digits [. digits] [(e|E) [+|-] digits] | . digits [...]   -- 3e10, 2.5E-3
//
// Any operand (key or literal, also BETWEEN bounds and IN items) may be wrapped in parentheses:
// `(int_col) = ((2))`. A '(' that opens n parentheses around one operand closed by n ')' is an
// operand's; otherwise it groups a condition.
//
// Precedence is NOT > AND > OR; keywords and key names are case-insensitive; `< >` (as the Glue
// documentation prints it) means `<>`; '' inside a string and `` or "" inside a quoted name stand
// for the quote itself.
//
// Comparisons are typed by the partition key's declared type (string/char/varchar as bytes,
// the integer types as 64-bit integers, decimal exactly, date as a calendar day, timestamp as an
// instant). A literal may be quoted or numeric for any type as long as its text converts
// (`year = '2024'`, `s = 7` compares with "7"); a DATE/TIMESTAMP prefix only documents intent.
// Exponent forms convert exactly, for literals and decimal partition values alike ('3e14'); an
// integer key takes one when it is integral (2e3). A timestamp literal must have its time part
// ('2022-02-01' is refused; a stored partition value may be date-only, read as midnight).
// BETWEEN is inclusive and not symmetric (`BETWEEN 5 AND 3` selects nothing). LIKE applies to
// string keys only: `%` is any run, `_` one UTF-8 character, no escape character unless ESCAPE
// names one; it is case-sensitive.
//
// Evaluation uses SQL's three-valued logic: a partition value that is the Hive null
// (`__HIVE_DEFAULT_PARTITION__`) or that does not convert to the key's type makes a comparison
// UNKNOWN, NOT UNKNOWN is UNKNOWN, and only TRUE matches. So `NOT year = 1` and `year <> 1`
// select the same partitions, and only IS [NOT] NULL selects the null partition.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace openglue::catalog {

// A partition key column as the table declares it: Glue's Column Name and Type,
// e.g. {"year", "int"}, {"dt", "date"}, {"p", "decimal(10,2)"}, {"s", "varchar(10)"}.
struct PartitionKey {
  std::string name;
  std::string type;
};

// The value Hive (and Glue) store for a partition whose key value is null.
inline constexpr std::string_view kHiveNullPartitionValue = "__HIVE_DEFAULT_PARTITION__";

// A compiled GetPartitions expression. Immutable after Make, so one instance may be used by
// many threads at once.
class PartitionFilter {
 public:
  // Parses `expression` for a table whose partition keys are `keys`, in order.
  //
  // Returns InvalidInput, with a message naming the problem, when the expression is empty or
  // whitespace only, has a syntax error (the message gives the 1-based position), names a key
  // the table does not have, names a key whose type expressions cannot filter (anything but
  // string, char, varchar, date, timestamp, int, integer, bigint, long, smallint, tinyint,
  // decimal), has a literal that does not convert to its key's type, uses LIKE on a non-string
  // key, or nests parentheses/NOT deeper than kMaxNestingDepth. Never crashes on any input.
  static Result<std::unique_ptr<PartitionFilter>> Make(std::string_view expression,
                                                       const std::vector<PartitionKey>& keys);

  ~PartitionFilter();
  PartitionFilter(const PartitionFilter&) = delete;
  PartitionFilter& operator=(const PartitionFilter&) = delete;

  // True when the partition whose key values are `values` (same order and count as the keys
  // given to Make) satisfies the expression. A `values` of the wrong size matches nothing.
  // Does not allocate; literals were converted in Make.
  bool Matches(const std::vector<std::string_view>& values) const;

  // For planning index lookups. For each key position that the whole expression requires to
  // equal one of a set of literals -- from a top-level AND-chain of `key = literal` and
  // `key IN (literals)` conjuncts -- the allowed values in canonical form (see
  // CanonicalPartitionValue), without duplicates. Several conjuncts on the same key intersect,
  // which may leave an empty list: then no partition can match. Keys not so constrained are
  // absent; a top-level OR or NOT constrains nothing.
  std::map<size_t, std::vector<std::string>> RequiredEqualities() const;

  // Deepest nesting of parentheses and NOT that Make accepts.
  static constexpr int kMaxNestingDepth = 100;

  struct Node;  // the compiled expression tree: an implementation detail, defined in the .cc

 private:
  PartitionFilter(std::unique_ptr<Node> root, size_t key_count);

  std::unique_ptr<Node> root_;
  size_t key_count_;
};

// The canonical text of a partition value for a key of Glue type `type`, used as an index key
// so that values the filter considers equal share one text:
//   integer types  decimal digits with an optional '-', no leading zeros or '+' ("+007" -> "7")
//   decimal        no leading integer zeros, no trailing fraction zeros ("01.50" -> "1.5",
//                  "-0.0" -> "0", ".5" -> "0.5")
//   date           YYYY-MM-DD ("2024-1-5" -> "2024-01-05")
//   timestamp      "YYYY-MM-DD HH:MM:SS[.fraction without trailing zeros]" (a 'T' separator and
//                  a date-only value are accepted: "2024-01-05" -> "2024-01-05 00:00:00")
// Strings (string, char, varchar), unsupported types and values that do not convert (including
// the Hive null) come back unchanged.
std::string CanonicalPartitionValue(std::string_view type, std::string_view value);

}  // namespace openglue::catalog
