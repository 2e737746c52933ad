// Table boundaries: which folders of a crawl become tables, and which folder levels below a
// table become its partitions, as Glue draws them.
//
// The input is the crawl's leaves: folders (relative to an include path) holding classified
// files, one merged schema each. Starting at the include path, a folder is a table when every
// leaf below it sits at the same depth, shares one format (classification, and for CSV the
// delimiter and header) and has a similar schema (at least `similarity` of the column names in
// common with the first leaf; CombineCompatibleSchemas drops that test). Otherwise each
// sub-folder is considered on its own, recursively. `table_level` (Grouping's
// TableLevelConfiguration, counted from the include path: 0 = the include path, 1 = its
// children) places every table at that depth instead.
//
// Below a table's folder, each level is a partition key: `key=value` folders (Hive style) with
// one key per level give that key, any other level `partition_<i>`.
//
// Pure and deterministic (no I/O); leaves in any order give the same plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crawler/classify.h"

namespace openglue::crawler {

struct Leaf {
  std::string folder;  // relative to the include path: "" or "a/b" (no leading or trailing '/')
  FileClass format;    // the files' merged schema and format
  int64_t files = 0;
  int64_t bytes = 0;
  int64_t records = 0;
};

struct PlannedTable {
  std::string root;                               // relative folder of the table ("" = include path)
  std::vector<std::string> keys;                  // partition keys, outermost first
  std::vector<size_t> leaves;                     // indices into the input
  std::vector<std::vector<std::string>> values;   // each leaf's partition values (parallel)
  FileClass format;                               // merged over the leaves
  std::vector<std::string> conflicts;             // columns whose types had to be widened to string
  int64_t files = 0, bytes = 0, records = 0;
};

struct PlanOptions {
  bool combine_compatible = false;  // Grouping.TableGroupingPolicy CombineCompatibleSchemas
  int table_level = -1;             // -1: find the level; else tables at this depth below the include path (0 = the include path)
  double similarity = 0.7;
  // Table folders of earlier crawls: a folder above one of them is not made a table (the
  // tables stay where they were when some of their siblings' data goes away).
  std::vector<std::string> known_roots;
};

struct Plan {
  std::vector<PlannedTable> tables;
  std::vector<std::string> skipped;  // why some leaves were left out (one message each)
};

Plan PlanTables(const std::vector<Leaf>& leaves, const PlanOptions& options);

// The folder segments of `leaf_folder` below `root` (both relative to the include path).
std::vector<std::string> PartitionValues(const std::string& root, const std::string& leaf_folder);

}  // namespace openglue::crawler
