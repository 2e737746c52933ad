// Partitions and partition indexes.
//
// A partition is stored under (catalog, database, table, v1, ..., vn): the table's partitions
// are one key range in value order, which also serves equality filters on leading string keys.
// A partition index adds one entry per partition under
// (catalog, database, table, index, c1, ..., ck) + value key, where ci is the canonical text of
// the i-th index key's value (so "02" and "2" meet for an int key). GetPartitions plans from the
// Expression's required equalities: the index (or the table's own order) whose leading keys are
// pinned gives the candidate ranges; every candidate is then checked against the whole filter.
#include <algorithm>
#include <map>
#include <queue>

#include "catalog/catalog.h"
#include "catalog/catalog_util.h"
#include "catalog/partition_filter.h"
#include "common/strings.h"

namespace openglue::catalog {
namespace {

constexpr int kMaxPartitionIndexes = 3;
constexpr size_t kMaxPlanRanges = 4096;

struct TableContext {
  std::string catalog_id;
  std::string database;
  std::string table;
  Json doc;
  std::vector<PartitionKey> keys;
  std::string prefix;  // partitions of this table: prefix + value key
};

struct IndexInfo {
  std::string name;
  std::vector<size_t> positions;  // partition key positions, in index order
  std::string entry_prefix;       // entries: entry_prefix + c1 SEP ... ck SEP + value key
};

Result<TableContext> LoadTableContext(store::Transaction* txn, const Json& request,
                                      const std::string& default_catalog) {
  TableContext ctx;
  ctx.catalog_id = GetString(request, "CatalogId", default_catalog);
  ctx.database = GetName(request, "DatabaseName");
  ctx.table = GetName(request, "TableName");
  OG_ASSIGN_OR_RETURN(ctx.doc, LoadTable(txn, ctx.catalog_id, ctx.database, ctx.table));
  for (const Json& key : ctx.doc.value("PartitionKeys", Json::array()))
    ctx.keys.push_back({ToLower(GetString(key, "Name")), ToLower(GetString(key, "Type", "string"))});
  ctx.prefix = store::PrefixOf({ctx.catalog_id, ctx.database, ctx.table});
  return ctx;
}

Result<std::vector<IndexInfo>> LoadIndexes(store::Transaction* txn, const TableContext& ctx) {
  store::ScanOptions scan{ctx.prefix, "", -1, false};
  OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kPartitionIndex, scan));
  std::vector<IndexInfo> indexes;
  for (const auto& row : rows) {
    OG_ASSIGN_OR_RETURN(Json descriptor, ParseDoc(row.doc));
    IndexInfo info;
    info.name = row.key.substr(ctx.prefix.size());
    for (const Json& key : descriptor["Keys"]) {
      std::string name = ToLower(GetString(key, "Name"));
      for (size_t i = 0; i < ctx.keys.size(); ++i)
        if (ctx.keys[i].name == name) info.positions.push_back(i);
    }
    // An index whose keys no longer match the table's partition keys cannot be used.
    if (info.positions.size() != descriptor["Keys"].size()) continue;
    info.entry_prefix = store::PrefixOf({ctx.catalog_id, ctx.database, ctx.table, info.name});
    indexes.push_back(std::move(info));
  }
  return indexes;
}

std::string IndexEntryKey(const IndexInfo& index, const TableContext& ctx,
                          const std::vector<std::string_view>& values,
                          const std::string& value_key) {
  std::string key = index.entry_prefix;
  for (size_t position : index.positions) {
    key += CanonicalPartitionValue(ctx.keys[position].type, values[position]);
    key.push_back(store::kKeySep);
  }
  key += value_key;
  return key;
}

Status CheckValueCount(const TableContext& ctx, const Json& values) {
  if (values.size() != ctx.keys.size())
    return Status::InvalidInput("The number of partition values (" + std::to_string(values.size()) +
                                ") does not match the number of partition keys (" +
                                std::to_string(ctx.keys.size()) + ") of table " + ctx.table);
  return Status::OK();
}

Json PartitionFromInput(const Json& input, const TableContext& ctx, double creation_time) {
  Json partition = Json::object();
  partition["Values"] = input.value("Values", Json::array());
  partition["DatabaseName"] = ctx.database;
  partition["TableName"] = ctx.table;
  partition["CreationTime"] = creation_time;
  for (const char* member : {"LastAccessTime", "StorageDescriptor", "Parameters", "LastAnalyzedTime"})
    if (input.contains(member) && !input[member].is_null()) partition[member] = input[member];
  if (!partition.contains("Parameters")) partition["Parameters"] = Json::object();
  partition["CatalogId"] = ctx.catalog_id;
  return partition;
}

// Inserts one partition and its index entries. AlreadyExists if it is there.
Status InsertPartition(store::Transaction* txn, const TableContext& ctx,
                       const std::vector<IndexInfo>& indexes, const Json& partition) {
  OG_RETURN_NOT_OK(CheckValueCount(ctx, partition["Values"]));
  OG_ASSIGN_OR_RETURN(std::string value_key, PartitionValueKey(partition["Values"]));
  Status st = txn->Insert(kPartition, ctx.prefix + value_key, DumpJson(partition));
  if (st.code() == StatusCode::kAlreadyExists) return Status::AlreadyExists("Partition already exists.");
  OG_RETURN_NOT_OK(st);
  if (!indexes.empty()) {
    std::vector<std::string_view> values = SplitValueKey(value_key);
    for (const IndexInfo& index : indexes)
      OG_RETURN_NOT_OK(txn->Put(kPartitionIndexEntry, IndexEntryKey(index, ctx, values, value_key), ""));
  }
  return Status::OK();
}

// Deletes one partition, its index entries and column statistics. EntityNotFound if absent.
Status RemovePartition(store::Transaction* txn, const TableContext& ctx,
                       const std::vector<IndexInfo>& indexes, const Json& values_json) {
  OG_RETURN_NOT_OK(CheckValueCount(ctx, values_json));
  OG_ASSIGN_OR_RETURN(std::string value_key, PartitionValueKey(values_json));
  OG_ASSIGN_OR_RETURN(bool existed, txn->Delete(kPartition, ctx.prefix + value_key));
  if (!existed) return Status::EntityNotFound("Partition not found.");
  std::vector<std::string_view> values = SplitValueKey(value_key);
  for (const IndexInfo& index : indexes)
    OG_RETURN_NOT_OK(txn->Delete(kPartitionIndexEntry, IndexEntryKey(index, ctx, values, value_key)).status());
  OG_RETURN_NOT_OK(txn->DeletePrefix(kPartitionColumnStats, ctx.prefix + value_key + kColumnSep).status());
  return Status::OK();
}

Result<Json> LoadPartition(store::Transaction* txn, const TableContext& ctx, const Json& values) {
  OG_RETURN_NOT_OK(CheckValueCount(ctx, values));
  OG_ASSIGN_OR_RETURN(std::string value_key, PartitionValueKey(values));
  OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kPartition, ctx.prefix + value_key));
  if (!doc) return Status::EntityNotFound("Partition not found.");
  return ParseDoc(*doc);
}

// Replaces the partition `old_values` by `input` (possibly with new values).
Status ReplacePartition(store::Transaction* txn, const TableContext& ctx,
                        const std::vector<IndexInfo>& indexes, const Json& old_values,
                        const Json& input) {
  OG_ASSIGN_OR_RETURN(Json old, LoadPartition(txn, ctx, old_values));
  Json merged_input = input;
  if (!merged_input.contains("Values")) merged_input["Values"] = old_values;
  Json partition = PartitionFromInput(merged_input, ctx, old.value("CreationTime", 0.0));
  OG_RETURN_NOT_OK(CheckValueCount(ctx, partition["Values"]));
  OG_ASSIGN_OR_RETURN(std::string value_key, PartitionValueKey(partition["Values"]));
  if (partition["Values"] == old["Values"]) {
    return txn->Put(kPartition, ctx.prefix + value_key, DumpJson(partition));
  }
  // Refuse before removing anything: a failed item of a batch must leave its partition as it
  // was, since the batch's transaction still commits.
  OG_ASSIGN_OR_RETURN(auto taken, txn->Get(kPartition, ctx.prefix + value_key));
  if (taken) return Status::AlreadyExists("Partition already exists.");
  OG_RETURN_NOT_OK(RemovePartition(txn, ctx, indexes, old_values));
  return InsertPartition(txn, ctx, indexes, partition);
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

bool IndexableType(const std::string& type) {
  static const char* kTypes[] = {"string", "int", "integer", "bigint", "long", "tinyint",
                                 "smallint", "date"};
  for (const char* t : kTypes)
    if (type == t) return true;
  return StartsWith(type, "varchar") || StartsWith(type, "char");
}

bool StringType(const std::string& type) {
  return type == "string" || StartsWith(type, "varchar") || StartsWith(type, "char");
}

// Key prefixes, in key order, covering every partition a filter can match; empty when the
// filter pins no leading key (scan the whole table).
struct ScanPlan {
  std::string_view kind = kPartition;
  std::vector<std::string> prefixes;  // ranges to scan (sorted)
  size_t index_key_count = 0;         // for index entries: how many components precede the value key
  // For index entries: every index key is pinned, so under each prefix the entries follow the
  // partitions' key order and a page can stop after limit + 1 matches.
  bool entries_in_key_order = false;
  std::string description = "full scan";
};

// All combinations of the allowed values of `positions`, each as "v1 SEP ... vj SEP".
std::vector<std::string> Combinations(const std::vector<size_t>& positions,
                                      const std::map<size_t, std::vector<std::string>>& allowed,
                                      bool canonical, const TableContext& ctx) {
  std::vector<std::string> combos = {""};
  for (size_t position : positions) {
    std::vector<std::string> next;
    for (const std::string& prefix : combos) {
      for (const std::string& value : allowed.at(position)) {
        if (value.find(store::kKeySep) != std::string::npos) continue;
        next.push_back(prefix + (canonical ? CanonicalPartitionValue(ctx.keys[position].type, value) : value) +
                       store::kKeySep);
        if (next.size() > kMaxPlanRanges) return {};
      }
    }
    combos = std::move(next);
  }
  std::sort(combos.begin(), combos.end());
  combos.erase(std::unique(combos.begin(), combos.end()), combos.end());
  return combos;
}

ScanPlan Plan(const TableContext& ctx, const std::vector<IndexInfo>& indexes,
              const PartitionFilter* filter) {
  ScanPlan plan;
  if (filter == nullptr) return plan;
  std::map<size_t, std::vector<std::string>> allowed = filter->RequiredEqualities();
  if (allowed.empty()) return plan;
  // The table's own key order serves leading string keys pinned to values.
  size_t own = 0;
  while (own < ctx.keys.size() && allowed.count(own) && StringType(ctx.keys[own].type)) ++own;
  const IndexInfo* best = nullptr;
  size_t best_count = 0;
  for (const IndexInfo& index : indexes) {
    size_t count = 0;
    while (count < index.positions.size() && allowed.count(index.positions[count])) ++count;
    if (count > best_count) {
      best = &index;
      best_count = count;
    }
  }
  if (best != nullptr && best_count > own) {
    std::vector<size_t> positions(best->positions.begin(), best->positions.begin() + best_count);
    std::vector<std::string> combos = Combinations(positions, allowed, true, ctx);
    if (combos.empty()) return plan;
    plan.kind = kPartitionIndexEntry;
    plan.index_key_count = best->positions.size();
    plan.entries_in_key_order = best_count == best->positions.size();
    for (const std::string& combo : combos) plan.prefixes.push_back(best->entry_prefix + combo);
    plan.description = "index " + best->name;
    return plan;
  }
  if (own > 0) {
    std::vector<size_t> positions;
    for (size_t i = 0; i < own; ++i) positions.push_back(i);
    std::vector<std::string> combos = Combinations(positions, allowed, false, ctx);
    if (combos.empty()) return plan;
    for (const std::string& combo : combos) {
      // The last value of a partition key has no separator after it; candidates that merely
      // start with it are dropped by the filter check.
      std::string prefix = ctx.prefix + combo;
      if (own == ctx.keys.size()) prefix.pop_back();
      plan.prefixes.push_back(std::move(prefix));
    }
    plan.description = "table key prefix";
  }
  return plan;
}

// The value key inside an index entry key: skip the entry prefix and k canonical values.
std::string_view ValueKeyOfEntry(std::string_view entry, size_t prefix_size, size_t k) {
  size_t pos = prefix_size;
  for (size_t i = 0; i < k; ++i) {
    pos = entry.find(store::kKeySep, pos);
    if (pos == std::string_view::npos) return {};
    ++pos;
  }
  return entry.substr(pos);
}

Json PresentPartition(Json partition, bool exclude_columns) {
  if (exclude_columns && partition.contains("StorageDescriptor"))
    partition["StorageDescriptor"].erase("Columns");
  return partition;
}

}  // namespace

Status CreatePartitionIndexInTxn(store::Transaction* txn, const std::string& catalog_id,
                                 const Json& table_doc, const Json& index) {
  TableContext ctx;
  ctx.catalog_id = catalog_id;
  ctx.database = GetString(table_doc, "DatabaseName");
  ctx.table = GetString(table_doc, "Name");
  ctx.doc = table_doc;
  for (const Json& key : table_doc.value("PartitionKeys", Json::array()))
    ctx.keys.push_back({ToLower(GetString(key, "Name")), ToLower(GetString(key, "Type", "string"))});
  ctx.prefix = store::PrefixOf({ctx.catalog_id, ctx.database, ctx.table});

  std::string name = ToLower(GetString(index, "IndexName"));
  if (name.empty()) return Status::InvalidInput("PartitionIndex.IndexName must not be empty");
  for (char c : name)
    if (static_cast<unsigned char>(c) < 0x20)
      return Status::InvalidInput("PartitionIndex.IndexName must not contain control characters");
  Json descriptor_keys = Json::array();
  std::vector<std::string> seen;
  for (const Json& key_name : index.value("Keys", Json::array())) {
    std::string wanted = ToLower(key_name.get<std::string>());
    if (std::find(seen.begin(), seen.end(), wanted) != seen.end())
      return Status::InvalidInput("Partition index key '" + wanted + "' is listed twice");
    seen.push_back(wanted);
    auto it = std::find_if(ctx.keys.begin(), ctx.keys.end(),
                           [&](const PartitionKey& k) { return k.name == wanted; });
    if (it == ctx.keys.end())
      return Status::InvalidInput("Partition index key '" + wanted + "' is not a partition key of table " + ctx.table);
    if (!IndexableType(it->type))
      return Status::InvalidInput("Partition index key '" + wanted + "' has type " + it->type +
                                  "; indexes support string, date, int, bigint, long, tinyint and smallint keys");
    descriptor_keys.push_back({{"Name", it->name}, {"Type", it->type}});
  }
  if (descriptor_keys.empty()) return Status::InvalidInput("PartitionIndex.Keys must name at least one partition key");
  OG_ASSIGN_OR_RETURN(int64_t existing, txn->Count(kPartitionIndex, ctx.prefix));
  std::string index_key = ctx.prefix + name;
  OG_ASSIGN_OR_RETURN(auto present, txn->Get(kPartitionIndex, index_key));
  if (present) return Status::AlreadyExists("Partition index " + name + " already exists on table " + ctx.table);
  if (existing >= kMaxPartitionIndexes)
    return Status::ResourceNumberLimitExceeded("Table " + ctx.table + " already has the maximum of " +
                                               std::to_string(kMaxPartitionIndexes) + " partition indexes");
  Json descriptor{{"IndexName", name}, {"Keys", descriptor_keys}, {"IndexStatus", "ACTIVE"}};
  OG_RETURN_NOT_OK(txn->Put(kPartitionIndex, index_key, DumpJson(descriptor)));
  // Backfill: index the partitions the table already has.
  OG_ASSIGN_OR_RETURN(std::vector<IndexInfo> indexes, LoadIndexes(txn, ctx));
  auto info = std::find_if(indexes.begin(), indexes.end(), [&](const IndexInfo& i) { return i.name == name; });
  if (info == indexes.end()) return Status::Internal("partition index vanished during creation");
  std::string after;
  while (true) {
    store::ScanOptions scan{ctx.prefix, after, 4096, true};
    OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kPartition, scan));
    for (const auto& row : rows) {
      std::string value_key = row.key.substr(ctx.prefix.size());
      OG_RETURN_NOT_OK(txn->Put(kPartitionIndexEntry,
                             IndexEntryKey(*info, ctx, SplitValueKey(value_key), value_key), ""));
      after = row.key;
    }
    if (rows.size() < 4096) break;
  }
  return Status::OK();
}

Result<Json> Catalog::CreatePartition(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(TableContext ctx, LoadTableContext(txn.get(), request, options_.account_id));
  OG_ASSIGN_OR_RETURN(std::vector<IndexInfo> indexes, LoadIndexes(txn.get(), ctx));
  Json partition = PartitionFromInput(request.at("PartitionInput"), ctx, clock_->NowSeconds());
  OG_RETURN_NOT_OK(InsertPartition(txn.get(), ctx, indexes, partition));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::BatchCreatePartition(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(TableContext ctx, LoadTableContext(txn.get(), request, options_.account_id));
  OG_ASSIGN_OR_RETURN(std::vector<IndexInfo> indexes, LoadIndexes(txn.get(), ctx));
  double now = clock_->NowSeconds();
  Json errors = Json::array();
  for (const Json& input : request.at("PartitionInputList")) {
    Json partition = PartitionFromInput(input, ctx, now);
    Status st = InsertPartition(txn.get(), ctx, indexes, partition);
    OG_RETURN_NOT_OK(RecordItemError(st, {{"PartitionValues", partition["Values"]}}, &errors));
  }
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"Errors", std::move(errors)}};
}

Result<Json> Catalog::GetPartition(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(TableContext ctx, LoadTableContext(txn.get(), request, options_.account_id));
  OG_ASSIGN_OR_RETURN(Json partition, LoadPartition(txn.get(), ctx, request.at("PartitionValues")));
  return Json{{"Partition", std::move(partition)}};
}

Result<Json> Catalog::GetPartitions(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(TableContext ctx, LoadTableContext(txn.get(), request, options_.account_id));
  std::unique_ptr<PartitionFilter> filter;
  std::string expression = Trim(GetString(request, "Expression"));
  if (!expression.empty()) {
    OG_ASSIGN_OR_RETURN(filter, PartitionFilter::Make(expression, ctx.keys));
  }
  int64_t segment = 0, total_segments = 1;
  if (request.contains("Segment")) {
    segment = request["Segment"].value("SegmentNumber", int64_t{0});
    total_segments = request["Segment"].value("TotalSegments", int64_t{1});
    if (segment < 0 || segment >= total_segments)
      return Status::InvalidInput("Segment.SegmentNumber " + std::to_string(segment) +
                                  " must be less than TotalSegments " + std::to_string(total_segments));
  }
  OG_ASSIGN_OR_RETURN(std::string after, DecodeToken(request, ctx.prefix));
  int64_t limit = PageSize(request, 1000);
  bool exclude_columns = request.value("ExcludeColumnSchema", false);

  OG_ASSIGN_OR_RETURN(std::vector<IndexInfo> indexes, LoadIndexes(txn.get(), ctx));
  ScanPlan plan = Plan(ctx, indexes, filter.get());
  if (plan.prefixes.empty()) plan.prefixes.push_back(ctx.prefix);

  // Candidate partition keys in key order, each checked against segment and filter.
  std::vector<std::string> matched;
  bool more = false;
  std::vector<std::string_view> values;
  auto passes = [&](std::string_view full_key) {
    std::string_view value_key = full_key.substr(ctx.prefix.size());
    if (total_segments > 1 &&
        static_cast<int64_t>(Fnv1a(value_key) % static_cast<uint64_t>(total_segments)) != segment)
      return false;
    if (filter) {
      values = SplitValueKey(value_key);
      if (values.size() != ctx.keys.size() || !filter->Matches(values)) return false;
    }
    return true;
  };
  auto consider = [&](std::string_view full_key) {
    if (!after.empty() && full_key <= after) return true;
    // Plan ranges can nest (a last value "20" also covers "2024"): every key is considered
    // once, in key order, by moving `after` past it.
    after = std::string(full_key);
    if (!passes(full_key)) return true;
    if (static_cast<int64_t>(matched.size()) == limit) {
      more = true;
      return false;
    }
    matched.emplace_back(full_key);
    return true;
  };

  if (plan.kind == kPartition) {
    for (const std::string& prefix : plan.prefixes) {
      std::string start = after > prefix ? after : "";
      bool go_on = true;
      while (go_on) {
        store::ScanOptions scan{prefix, start, 4096, true};
        OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kPartition, scan));
        for (const auto& row : rows) {
          if (!(go_on = consider(row.key))) break;
        }
        if (rows.size() < 4096) break;
        start = rows.back().key;
      }
      if (!go_on) break;
    }
  } else if (plan.entries_in_key_order) {
    // Entry = prefix (index, all k canonical values) + value key: under each prefix, entries
    // are in partition key order. Merge the prefixes lazily, each read in small chunks from
    // the token on, so a page reads about what it returns plus one more match.
    const int64_t chunk = std::min<int64_t>(limit + 1, 256);
    struct Cursor {
      std::string prefix;
      std::string start_after;  // last entry key read
      std::vector<std::string> keys;  // partition keys read and not yet consumed
      size_t next = 0;
      bool exhausted = false;
    };
    std::vector<Cursor> cursors(plan.prefixes.size());
    auto refill = [&](Cursor& c) -> Status {
      c.keys.clear();
      c.next = 0;
      if (c.exhausted) return Status::OK();
      store::ScanOptions scan{c.prefix, c.start_after, chunk, true};
      OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kPartitionIndexEntry, scan));
      if (static_cast<int64_t>(rows.size()) < chunk) c.exhausted = true;
      for (const auto& row : rows) {
        c.start_after = row.key;
        c.keys.push_back(ctx.prefix + row.key.substr(c.prefix.size()));
      }
      return Status::OK();
    };
    using Head = std::pair<std::string, size_t>;  // (partition key, cursor)
    std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
    for (size_t i = 0; i < cursors.size(); ++i) {
      Cursor& c = cursors[i];
      c.prefix = plan.prefixes[i];
      if (!after.empty()) c.start_after = c.prefix + after.substr(ctx.prefix.size());
      OG_RETURN_NOT_OK(refill(c));
      if (!c.keys.empty()) heads.emplace(c.keys[0], i);
    }
    while (!heads.empty()) {
      auto [key, i] = heads.top();
      heads.pop();
      if (!consider(key)) break;
      Cursor& c = cursors[i];
      if (++c.next == c.keys.size()) OG_RETURN_NOT_OK(refill(c));
      if (c.next < c.keys.size()) heads.emplace(c.keys[c.next], i);
    }
  } else {
    // Only leading index keys are pinned: entries under a prefix are ordered by the other
    // index keys first, not by partition key. Every candidate is read, but only the page's
    // limit + 1 smallest matching keys after the token are held.
    std::priority_queue<std::string> smallest;  // max-heap of at most limit + 1 keys
    const size_t keep = static_cast<size_t>(limit) + 1;
    for (const std::string& prefix : plan.prefixes) {
      std::string start;
      while (true) {
        store::ScanOptions scan{prefix, start, 4096, true};
        OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kPartitionIndexEntry, scan));
        for (const auto& row : rows) {
          size_t name_end = row.key.find(store::kKeySep, ctx.prefix.size());
          if (name_end == std::string::npos) continue;
          std::string_view value_key = ValueKeyOfEntry(row.key, name_end + 1, plan.index_key_count);
          std::string key = ctx.prefix + std::string(value_key);
          if (!after.empty() && key <= after) continue;
          if (smallest.size() == keep && key >= smallest.top()) continue;
          if (!passes(key)) continue;
          smallest.push(std::move(key));
          if (smallest.size() > keep) smallest.pop();
        }
        if (rows.size() < 4096) break;
        start = rows.back().key;
      }
    }
    std::vector<std::string> keys;
    while (!smallest.empty()) {
      keys.push_back(smallest.top());
      smallest.pop();
    }
    std::reverse(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    for (const std::string& key : keys)
      if (!consider(key)) break;
  }

  Json list = Json::array();
  for (const std::string& key : matched) {
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kPartition, key));
    if (!doc) continue;  // an index entry without its partition: skip it
    OG_ASSIGN_OR_RETURN(Json partition, ParseDoc(*doc));
    list.push_back(PresentPartition(std::move(partition), exclude_columns));
  }
  Json response{{"Partitions", std::move(list)}};
  if (more) response["NextToken"] = EncodeToken(matched.back());
  return response;
}

Result<Json> Catalog::BatchGetPartition(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(TableContext ctx, LoadTableContext(txn.get(), request, options_.account_id));
  Json partitions = Json::array();
  for (const Json& entry : request.at("PartitionsToGet")) {
    Result<Json> partition = LoadPartition(txn.get(), ctx, entry.value("Values", Json::array()));
    if (partition.ok()) partitions.push_back(std::move(*partition));
    // Glue's response has no per-item error list: an item that fails (a partition that does not
    // exist, values that cannot name one) is left out, as a missing partition is.
    else OG_RETURN_NOT_OK(RecordItemError(partition.status(), Json(), nullptr));
  }
  return Json{{"Partitions", std::move(partitions)}, {"UnprocessedKeys", Json::array()}};
}

Result<Json> Catalog::UpdatePartition(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(TableContext ctx, LoadTableContext(txn.get(), request, options_.account_id));
  OG_ASSIGN_OR_RETURN(std::vector<IndexInfo> indexes, LoadIndexes(txn.get(), ctx));
  OG_RETURN_NOT_OK(ReplacePartition(txn.get(), ctx, indexes, request.at("PartitionValueList"),
                                 request.at("PartitionInput")));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::BatchUpdatePartition(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(TableContext ctx, LoadTableContext(txn.get(), request, options_.account_id));
  OG_ASSIGN_OR_RETURN(std::vector<IndexInfo> indexes, LoadIndexes(txn.get(), ctx));
  Json errors = Json::array();
  for (const Json& entry : request.at("Entries")) {
    const Json& old_values = entry.at("PartitionValueList");
    Status st = ReplacePartition(txn.get(), ctx, indexes, old_values, entry.at("PartitionInput"));
    OG_RETURN_NOT_OK(RecordItemError(st, {{"PartitionValueList", old_values}}, &errors));
  }
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"Errors", std::move(errors)}};
}

Result<Json> Catalog::DeletePartition(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(TableContext ctx, LoadTableContext(txn.get(), request, options_.account_id));
  OG_ASSIGN_OR_RETURN(std::vector<IndexInfo> indexes, LoadIndexes(txn.get(), ctx));
  OG_RETURN_NOT_OK(RemovePartition(txn.get(), ctx, indexes, request.at("PartitionValues")));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::BatchDeletePartition(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(TableContext ctx, LoadTableContext(txn.get(), request, options_.account_id));
  OG_ASSIGN_OR_RETURN(std::vector<IndexInfo> indexes, LoadIndexes(txn.get(), ctx));
  Json errors = Json::array();
  for (const Json& entry : request.at("PartitionsToDelete")) {
    Json values = entry.value("Values", Json::array());
    Status st = RemovePartition(txn.get(), ctx, indexes, values);
    OG_RETURN_NOT_OK(RecordItemError(st, {{"PartitionValues", values}}, &errors));
  }
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"Errors", std::move(errors)}};
}

Result<Json> Catalog::CreatePartitionIndex(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(TableContext ctx, LoadTableContext(txn.get(), request, options_.account_id));
  OG_RETURN_NOT_OK(CreatePartitionIndexInTxn(txn.get(), ctx.catalog_id, ctx.doc, request.at("PartitionIndex")));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

Result<Json> Catalog::GetPartitionIndexes(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(TableContext ctx, LoadTableContext(txn.get(), request, options_.account_id));
  store::ScanOptions scan{ctx.prefix, "", -1, false};
  OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kPartitionIndex, scan));
  Json list = Json::array();
  for (const auto& row : rows) {
    OG_ASSIGN_OR_RETURN(Json descriptor, ParseDoc(row.doc));
    list.push_back(std::move(descriptor));
  }
  return Json{{"PartitionIndexDescriptorList", std::move(list)}};
}

Result<Json> Catalog::DeletePartitionIndex(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(TableContext ctx, LoadTableContext(txn.get(), request, options_.account_id));
  std::string name = ToLower(GetString(request, "IndexName"));
  OG_ASSIGN_OR_RETURN(bool existed, txn->Delete(kPartitionIndex, ctx.prefix + name));
  if (!existed) return Status::EntityNotFound("Partition index " + name + " not found on table " + ctx.table);
  OG_RETURN_NOT_OK(txn->DeletePrefix(kPartitionIndexEntry,
                                  store::PrefixOf({ctx.catalog_id, ctx.database, ctx.table, name})).status());
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

}  // namespace openglue::catalog
