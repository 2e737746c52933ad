#include "crawler/plan.h"

#include <algorithm>
#include <map>

#include "common/strings.h"

namespace openglue::crawler {

namespace {

std::vector<std::string> Segments(const std::string& folder) {
  return folder.empty() ? std::vector<std::string>() : Split(folder, '/');
}

// The segments of `folder` below `root` ("" root: all).
std::vector<std::string> Below(const std::string& root, const std::string& folder) {
  std::vector<std::string> all = Segments(folder);
  size_t skip = Segments(root).size();
  return std::vector<std::string>(all.begin() + static_cast<long>(std::min(skip, all.size())), all.end());
}

bool Compatible(const std::vector<Leaf>& leaves, const std::vector<size_t>& idx,
                const std::string& root, const PlanOptions& options) {
  const Leaf& first = leaves[idx[0]];
  size_t depth = Below(root, first.folder).size();
  for (size_t i : idx) {
    const Leaf& leaf = leaves[i];
    if (Below(root, leaf.folder).size() != depth) return false;
    if (leaf.format.FormatKey() != first.format.FormatKey()) return false;
    if (!options.combine_compatible && Similarity(first.format.schema, leaf.format.schema) < options.similarity)
      return false;
  }
  return true;
}

void MakeTable(const std::vector<Leaf>& leaves, const std::vector<size_t>& idx, const std::string& root,
               Plan* plan) {
  // One format per table: leaves of another format than the most common one are left out.
  std::map<std::string, size_t> counts;
  for (size_t i : idx) ++counts[leaves[i].format.FormatKey()];
  std::string major = std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
                        return a.second < b.second;
                      })->first;
  PlannedTable table;
  table.root = root;
  size_t depth = SIZE_MAX;
  for (size_t i : idx) depth = std::min(depth, Below(root, leaves[i].folder).size());
  bool first = true;
  for (size_t i : idx) {
    const Leaf& leaf = leaves[i];
    if (leaf.format.FormatKey() != major || Below(root, leaf.folder).size() != depth) {
      plan->skipped.push_back("folder '" + leaf.folder + "': its files (" + leaf.format.classification +
                              ") do not match the table at '" + root + "'");
      continue;
    }
    table.leaves.push_back(i);
    table.values.push_back(Below(root, leaf.folder));
    if (first) {
      table.format = leaf.format;
      first = false;
    } else {
      for (auto& c : MergeSchema(&table.format.schema, leaf.format.schema)) {
        if (std::find(table.conflicts.begin(), table.conflicts.end(), c) == table.conflicts.end())
          table.conflicts.push_back(c);
      }
      if (table.format.compression != leaf.format.compression) table.format.compression = "";
    }
    table.files += leaf.files;
    table.bytes += leaf.bytes;
    table.records += leaf.records;
  }
  // Partition keys, level by level.
  for (size_t level = 0; level < depth; ++level) {
    std::string key;
    bool hive = true;
    for (const auto& v : table.values) {
      size_t eq = v[level].find('=');
      std::string k = eq == std::string::npos ? "" : ToLower(v[level].substr(0, eq));
      if (k.empty() || (!key.empty() && k != key)) {
        hive = false;
        break;
      }
      key = k;
    }
    table.keys.push_back(hive ? key : "partition_" + std::to_string(level));
    if (hive) {
      for (auto& v : table.values) v[level] = v[level].substr(v[level].find('=') + 1);
    }
  }
  plan->tables.push_back(std::move(table));
}

void Place(const std::vector<Leaf>& leaves, const std::vector<size_t>& idx, const std::string& root,
           const PlanOptions& options, Plan* plan) {
  if (idx.empty()) return;
  size_t depth = Segments(root).size();
  bool at_level = options.table_level >= 0 && static_cast<int>(depth) >= options.table_level;
  bool above_known = std::any_of(options.known_roots.begin(), options.known_roots.end(),
                                 [&](const std::string& known) {
                                   return known != root && (root.empty() || StartsWith(known, root + "/"));
                                 });
  if (at_level || (options.table_level < 0 && !above_known && Compatible(leaves, idx, root, options))) {
    MakeTable(leaves, idx, root, plan);
    return;
  }
  std::map<std::string, std::vector<size_t>> children;
  for (size_t i : idx) {
    std::vector<std::string> below = Below(root, leaves[i].folder);
    if (below.empty()) {
      plan->skipped.push_back("files directly in '" + (root.empty() ? std::string("<include path>") : root) +
                              "' sit beside folders of other tables: not cataloged");
      continue;
    }
    children[below[0]].push_back(i);
  }
  for (const auto& [name, child] : children)
    Place(leaves, child, root.empty() ? name : root + "/" + name, options, plan);
}

}  // namespace

std::vector<std::string> PartitionValues(const std::string& root, const std::string& leaf_folder) {
  return Below(root, leaf_folder);
}

Plan PlanTables(const std::vector<Leaf>& leaves, const PlanOptions& options) {
  std::vector<size_t> idx(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return leaves[a].folder < leaves[b].folder; });
  Plan plan;
  Place(leaves, idx, "", options, &plan);
  return plan;
}

}  // namespace openglue::crawler
