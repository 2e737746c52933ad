#include "crawler/crawl.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "common/glob.h"
#include "common/strings.h"
#include "crawler/classify.h"
#include "crawler/plan.h"
#include "storage/location.h"

namespace openglue::crawler {

// ---- configuration, log, summary ----------------------------------------------------------------

Result<CrawlerConfiguration> ParseCrawlerConfiguration(const std::string& text) {
  CrawlerConfiguration out;
  if (Trim(text).empty()) return out;
  Json doc = ParseJson(text);
  if (doc.is_discarded() || !doc.is_object())
    return Status::InvalidInput("Crawler configuration not valid: it is not a JSON object");
  for (const auto& [key, value] : doc.items()) {
    if (key != "Version" && key != "Grouping" && key != "CrawlerOutput" && key != "CreatePartitionIndex")
      return Status::InvalidInput("Crawler configuration not valid: unknown member '" + key + "'");
  }
  if (doc.contains("Version") && !(doc["Version"].is_number() && doc["Version"].get<double>() == 1.0))
    return Status::InvalidInput("Crawler configuration not valid: Version must be 1.0");
  Json grouping = doc.value("Grouping", Json::object());
  if (!grouping.is_object()) return Status::InvalidInput("Crawler configuration not valid: Grouping must be an object");
  for (const auto& [key, value] : grouping.items()) {
    if (key == "TableGroupingPolicy") {
      if (value != "CombineCompatibleSchemas")
        return Status::InvalidInput("Crawler configuration not valid: TableGroupingPolicy must be CombineCompatibleSchemas");
      out.combine_compatible = true;
    } else if (key == "TableLevelConfiguration") {
      if (!value.is_number_integer() || value.get<int64_t>() < 1 || value.get<int64_t>() > 64)
        return Status::InvalidInput("Crawler configuration not valid: TableLevelConfiguration must be an integer from 1");
      out.table_level = value.get<int>();
    } else {
      return Status::InvalidInput("Crawler configuration not valid: unknown Grouping member '" + key + "'");
    }
  }
  Json output = doc.value("CrawlerOutput", Json::object());
  if (!output.is_object()) return Status::InvalidInput("Crawler configuration not valid: CrawlerOutput must be an object");
  for (const auto& [key, value] : output.items()) {
    if (key == "Partitions") {
      if (!value.is_object() || value.value("AddOrUpdateBehavior", "") != "InheritFromTable")
        return Status::InvalidInput("Crawler configuration not valid: Partitions.AddOrUpdateBehavior must be InheritFromTable");
      out.inherit_from_table = true;
    } else if (key == "Tables") {
      if (!value.is_object()) return Status::InvalidInput("Crawler configuration not valid: Tables must be an object");
      for (const auto& [k, v] : value.items()) {
        if (k == "AddOrUpdateBehavior") {
          if (v != "MergeNewColumns")
            return Status::InvalidInput("Crawler configuration not valid: Tables.AddOrUpdateBehavior must be MergeNewColumns");
          out.merge_new_columns = true;
        } else if (k == "TableThreshold") {
          if (!v.is_number_integer() || v.get<int64_t>() < 1)
            return Status::InvalidInput("Crawler configuration not valid: TableThreshold must be a positive integer");
          out.table_threshold = static_cast<int>(std::min<int64_t>(v.get<int64_t>(), 1 << 30));
        } else {
          return Status::InvalidInput("Crawler configuration not valid: unknown Tables member '" + k + "'");
        }
      }
    } else {
      return Status::InvalidInput("Crawler configuration not valid: unknown CrawlerOutput member '" + key + "'");
    }
  }
  return out;
}

void CrawlLog::Add(const char* level, const std::string& message) {
  // Each line becomes one log event: a newline in an object key or a table name must not end it
  // (and start a forged event), so control characters are escaped.
  pending_.push_back("[" + crawl_id_ + "] " + level + " : " + EscapeControlCharacters(message));
  if (pending_.size() >= 64) Flush();
}

void CrawlLog::Flush() {
  if (writer_ && !pending_.empty()) writer_(stream_, pending_);
  pending_.clear();
}

std::string CrawlOutcome::Summary() const {
  Json summary = Json::object();
  auto add = [&](const char* what, const char* action, int64_t n) {
    if (n > 0) summary[what][action] = {{"Count", n}};
  };
  add("TABLE", "ADD", tables_created);
  add("TABLE", "UPDATE", tables_updated);
  add("TABLE", "DELETE", tables_deleted);
  add("PARTITION", "ADD", partitions_created);
  add("PARTITION", "UPDATE", partitions_updated);
  add("PARTITION", "DELETE", partitions_deleted);
  return DumpJson(summary);
}

namespace {

// ---- listing ------------------------------------------------------------------------------------

struct Target {
  std::string path;                 // as the crawler gives it
  std::string bucket;
  std::string prefix;               // key prefix of the include path, "" or ending with '/'
  std::string name;                 // the include path's own name (table name of its root)
  int64_t sample_size = 0;          // 0 = every file
  std::vector<std::string> exclusions;
  // A catalog target's table: its data is crawled into it (database, name, partition keys).
  std::string catalog_database, catalog_table;
  std::vector<std::string> catalog_keys;
  std::map<std::string, std::vector<storage::ObjectInfo>> folders;  // relative folder -> files
};

bool Hidden(const std::string& relative) {
  for (const std::string& part : Split(relative, '/'))
    if (!part.empty() && (part[0] == '_' || part[0] == '.')) return true;
  return false;
}

Status ListTarget(storage::ObjectStore* objects, Target* target, const std::set<std::string>& known,
                  const std::atomic<bool>* cancel, int64_t* old_skipped) {
  storage::ListRequest request;
  request.bucket = target->bucket;
  request.prefix = target->prefix;
  for (;;) {
    OG_ASSIGN_OR_RETURN(storage::ListResult page, objects->List(request));
    for (storage::ObjectInfo& object : page.objects) {
      if (object.key.size() <= target->prefix.size() || object.key.back() == '/') continue;
      std::string relative = object.key.substr(target->prefix.size());
      if (Hidden(relative)) continue;
      std::string uri = "s3://" + target->bucket + "/" + object.key;
      bool excluded = false;
      for (const std::string& glob : target->exclusions) {
        if (GlobMatches(glob, relative) || GlobMatches(glob, uri)) {
          excluded = true;
          break;
        }
      }
      if (excluded) continue;
      size_t slash = relative.rfind('/');
      std::string folder = slash == std::string::npos ? "" : relative.substr(0, slash);
      if (known.count(folder)) {
        ++*old_skipped;
        continue;
      }
      target->folders[folder].push_back(std::move(object));
    }
    if (cancel->load()) return Status::OK();
    if (page.next_continuation.empty()) return Status::OK();
    request.continuation = page.next_continuation;
  }
}

// ---- catalog output -------------------------------------------------------------------------------

std::string Fnv8(const std::string& text) {
  uint32_t h = 2166136261u;
  for (unsigned char c : text) h = (h ^ c) * 16777619u;
  char out[16];
  std::snprintf(out, sizeof out, "%08x", h);
  return out;
}

Json ColumnsJson(const Schema& schema) {
  Json columns = Json::array();
  for (const Column& c : schema) columns.push_back({{"Name", ToLower(c.name)}, {"Type", c.type.ToHive()}});
  return columns;
}

struct TableSpec {
  std::string name;
  std::string location;  // ends with '/'
  std::vector<std::string> keys;
  FileClass format;
  int64_t files = 0, bytes = 0, records = 0;
};

Json StorageDescriptor(const TableSpec& spec, const Json& columns, const Json& params) {
  const std::string& c = spec.format.classification;
  Json serde;
  std::string input = "org.apache.hadoop.mapred.TextInputFormat";
  std::string output = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat";
  if (c == "parquet") {
    input = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat";
    output = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat";
    serde = {{"SerializationLibrary", "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"},
             {"Parameters", {{"serialization.format", "1"}}}};
  } else if (c == "orc") {
    input = "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat";
    output = "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat";
    serde = {{"SerializationLibrary", "org.apache.hadoop.hive.ql.io.orc.OrcSerde"},
             {"Parameters", {{"serialization.format", "1"}}}};
  } else if (c == "avro") {
    input = "org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat";
    output = "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat";
    serde = {{"SerializationLibrary", "org.apache.hadoop.hive.serde2.avro.AvroSerDe"},
             {"Parameters", {{"serialization.format", "1"}}}};
  } else if (c == "json") {
    std::vector<std::string> paths;
    for (const Column& col : spec.format.schema) paths.push_back(col.name);
    serde = {{"SerializationLibrary", "org.openx.data.jsonserde.JsonSerDe"},
             {"Parameters", {{"paths", Join(paths, ",")}}}};
  } else {
    std::string delimiter(1, spec.format.delimiter);
    if (spec.format.quoted) {
      serde = {{"SerializationLibrary", "org.apache.hadoop.hive.serde2.OpenCSVSerde"},
               {"Parameters", {{"separatorChar", delimiter}, {"quoteChar", "\""}}}};
    } else {
      serde = {{"SerializationLibrary", "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"},
               {"Parameters", {{"field.delim", delimiter}}}};
    }
  }
  if (!spec.format.serde.empty() || !spec.format.serde_parameters.empty()) {
    Json p = Json::object();
    for (const auto& [k, v] : spec.format.serde_parameters) p[k] = v;
    serde = {{"Parameters", p}};
    if (!spec.format.serde.empty()) serde["SerializationLibrary"] = spec.format.serde;
  }
  return {{"Columns", columns},
          {"Location", spec.location},
          {"InputFormat", input},
          {"OutputFormat", output},
          {"Compressed", !spec.format.compression.empty()},
          {"NumberOfBuckets", -1},
          {"SerdeInfo", serde},
          {"BucketColumns", Json::array()},
          {"SortColumns", Json::array()},
          {"Parameters", params},
          {"StoredAsSubDirectories", false}};
}

Json TableParameters(const TableSpec& spec, const std::string& crawler) {
  const FileClass& f = spec.format;
  Json params = {{"classification", f.classification},
                 {"compressionType", f.compression.empty() ? "none" : f.compression},
                 {"typeOfData", "file"},
                 {"objectCount", std::to_string(spec.files)},
                 {"sizeKey", std::to_string(spec.bytes)},
                 {"recordCount", std::to_string(spec.records)},
                 {"averageRecordSize", std::to_string(spec.records > 0 ? spec.bytes / spec.records : 0)},
                 {"UPDATED_BY_CRAWLER", crawler},
                 {"CrawlerSchemaSerializerVersion", "1.0"},
                 {"CrawlerSchemaDeserializerVersion", "1.0"}};
  for (const auto& [k, v] : f.parameters) params[k] = v;
  if (f.classification == "csv") {
    params["delimiter"] = std::string(1, f.delimiter);
    params["areColumnsQuoted"] = f.quoted ? "true" : "false";
    params["columnsOrdered"] = "true";
    if (f.header) params["skip.header.line.count"] = "1";
  }
  return params;
}

class Writer {
 public:
  // `catalog` (borrowed) is the one the crawl writes through: the crawl's transaction.
  Writer(const CrawlContext& ctx, catalog::Catalog* catalog, const Json& crawler, const CrawlerConfiguration& config,
         CrawlOutcome* out)
      : ctx_(ctx), catalog_(catalog), out_(out), config_(config) {
    name_ = crawler.value("Name", "");
    database_ = crawler.value("DatabaseName", "");
    Json policy = crawler.value("SchemaChangePolicy", Json::object());
    update_ = policy.value("UpdateBehavior", "UPDATE_IN_DATABASE");
    delete_ = policy.value("DeleteBehavior", "DEPRECATE_IN_DATABASE");
  }

  void SetDatabase(const std::string& database) { database_ = database; }

  Result<std::optional<Json>> GetTable(const std::string& table) {
    Result<Json> got = catalog_->GetTable({{"DatabaseName", database_}, {"Name", table}});
    if (!got.ok()) {
      if (got.status().code() == StatusCode::kEntityNotFound) return std::optional<Json>();
      return got.status();
    }
    return std::optional<Json>((*got)["Table"]);
  }

  // Creates or updates the table, then adds its new partitions (`partitions`: values -> folder
  // location), and with `full` (a CRAWL_EVERYTHING crawl) applies DeleteBehavior to the
  // partitions that no longer have data.
  Status WriteTable(const TableSpec& spec, const std::vector<std::pair<std::vector<std::string>, std::string>>& partitions,
                    bool full) {
    OG_ASSIGN_OR_RETURN(std::optional<Json> existing, GetTable(spec.name));
    Json params = TableParameters(spec, name_);
    Json columns = ColumnsJson(spec.format.schema);
    Json keys = Json::array();
    for (const std::string& k : spec.keys) keys.push_back({{"Name", k}, {"Type", "string"}});
    Json sd;
    bool updated = false;
    if (!existing) {
      sd = StorageDescriptor(spec, columns, params);
      Json input = {{"Name", spec.name}, {"StorageDescriptor", sd}, {"PartitionKeys", keys},
                    {"TableType", "EXTERNAL_TABLE"}, {"Parameters", params}, {"Retention", 0}};
      OG_RETURN_NOT_OK(catalog_->CreateTable({{"DatabaseName", database_}, {"TableInput", input}}).status());
      ++out_->tables_created;
      ctx_.log->Info("Created table " + spec.name + " in database " + database_);
    } else {
      const Json& old = *existing;
      Json old_sd = old.value("StorageDescriptor", Json::object());
      Json old_columns = old_sd.value("Columns", Json::array());
      if (config_.merge_new_columns) {
        // Keep every column as it is; only add the new ones.
        Json merged = old_columns;
        std::set<std::string> have;
        for (const Json& c : old_columns) have.insert(ToLower(c.value("Name", "")));
        for (const Json& c : columns)
          if (!have.count(c.value("Name", ""))) merged.push_back(c);
        columns = merged;
      }
      sd = StorageDescriptor(spec, columns, params);
      Json old_params = old.value("Parameters", Json::object());
      bool changed = old_columns != columns || old.value("PartitionKeys", Json::array()) != keys ||
                     old_params.value("classification", "") != spec.format.classification ||
                     old_sd.value("SerdeInfo", Json::object()) != sd["SerdeInfo"] ||
                     old_params.contains("DEPRECATED_BY_CRAWLER");
      if (changed && update_ == "LOG") {
        ctx_.log->Warn("Table " + spec.name + " in database " + database_ +
                       ": the schema changed; not applied (UpdateBehavior LOG)");
        sd = old_sd;
      } else if (changed) {
        Json input = {{"Name", spec.name}, {"StorageDescriptor", sd}, {"PartitionKeys", keys},
                      {"TableType", "EXTERNAL_TABLE"}, {"Parameters", params}, {"Retention", 0}};
        OG_RETURN_NOT_OK(catalog_->UpdateTable({{"DatabaseName", database_}, {"TableInput", input}}).status());
        ++out_->tables_updated;
        updated = true;
        ctx_.log->Info("Updated table " + spec.name + " in database " + database_);
      } else {
        sd = old_sd;
      }
    }
    return WritePartitions(spec.name, sd, partitions, full, updated && config_.inherit_from_table);
  }

  // `inherit`: the table's schema changed and CrawlerOutput.Partitions says InheritFromTable:
  // existing partitions take the table's StorageDescriptor too (keeping their Location).
  Status WritePartitions(const std::string& table, const Json& sd,
                         const std::vector<std::pair<std::vector<std::string>, std::string>>& partitions,
                         bool full, bool inherit = false) {
    if (partitions.empty() || (partitions.size() == 1 && partitions[0].first.empty())) return Status::OK();
    std::set<std::vector<std::string>> existing;
    Json request = {{"DatabaseName", database_}, {"TableName", table}};
    Json updates = Json::array();
    for (;;) {
      OG_ASSIGN_OR_RETURN(Json page, catalog_->GetPartitions(request));
      for (const Json& p : page.value("Partitions", Json::array())) {
        existing.insert(p.value("Values", std::vector<std::string>()));
        if (inherit) {
          Json psd = sd;
          psd["Location"] = p.value("StorageDescriptor", Json::object()).value("Location", "");
          updates.push_back({{"PartitionValueList", p.value("Values", Json::array())},
                             {"PartitionInput", {{"Values", p.value("Values", Json::array())},
                                                 {"StorageDescriptor", psd},
                                                 {"Parameters", p.value("Parameters", Json::object())}}}});
        }
      }
      std::string token = page.value("NextToken", "");
      if (token.empty()) break;
      request["NextToken"] = token;
    }
    for (size_t i = 0; i < updates.size(); i += 100) {
      Json part = Json::array();
      for (size_t j = i; j < std::min(updates.size(), i + 100); ++j) part.push_back(updates[j]);
      OG_ASSIGN_OR_RETURN(Json response, catalog_->BatchUpdatePartition(
                                             {{"DatabaseName", database_}, {"TableName", table}, {"Entries", part}}));
      out_->partitions_updated += static_cast<int64_t>(part.size() - response.value("Errors", Json::array()).size());
    }
    if (!updates.empty())
      ctx_.log->Info("Updated " + std::to_string(updates.size()) + " partition(s) of table " + table +
                     " to the table's schema (InheritFromTable)");
    Json batch = Json::array();
    auto flush = [&]() -> Status {
      if (batch.empty()) return Status::OK();
      OG_ASSIGN_OR_RETURN(Json response, catalog_->BatchCreatePartition(
                                             {{"DatabaseName", database_}, {"TableName", table},
                                              {"PartitionInputList", batch}}));
      int64_t failed = 0;
      for (const Json& e : response.value("Errors", Json::array())) {
        ++failed;
        ctx_.log->Warn("Partition of " + table + " not created: " +
                       e.value("ErrorDetail", Json::object()).value("ErrorMessage", ""));
      }
      out_->partitions_created += static_cast<int64_t>(batch.size()) - failed;
      batch = Json::array();
      return Status::OK();
    };
    std::set<std::vector<std::string>> current;
    int64_t created_before = out_->partitions_created;
    for (const auto& [values, location] : partitions) {
      current.insert(values);
      if (existing.count(values)) continue;
      Json psd = sd;
      psd["Location"] = location;
      batch.push_back({{"Values", values}, {"StorageDescriptor", psd}, {"Parameters", sd.value("Parameters", Json::object())}});
      if (batch.size() >= 100) OG_RETURN_NOT_OK(flush());
    }
    OG_RETURN_NOT_OK(flush());
    if (out_->partitions_created > created_before)
      ctx_.log->Info("Created " + std::to_string(out_->partitions_created - created_before) +
                     " partition(s) of table " + table + " in database " + database_);
    if (!full) return Status::OK();
    Json gone = Json::array();
    for (const auto& values : existing) {
      if (current.count(values)) continue;
      if (delete_ == "DELETE_FROM_DATABASE") {
        gone.push_back({{"Values", values}});
      } else {
        ctx_.log->Warn("Partition [" + Join(values, ", ") + "] of table " + table +
                       " has no data any more; kept (DeleteBehavior " + delete_ + ")");
      }
    }
    for (size_t i = 0; i < gone.size(); i += 25) {
      Json part = Json::array();
      for (size_t j = i; j < std::min(gone.size(), i + 25); ++j) part.push_back(gone[j]);
      OG_ASSIGN_OR_RETURN(Json response, catalog_->BatchDeletePartition(
                                             {{"DatabaseName", database_}, {"TableName", table},
                                              {"PartitionsToDelete", part}}));
      out_->partitions_deleted += static_cast<int64_t>(part.size() - response.value("Errors", Json::array()).size());
    }
    if (!gone.empty())
      ctx_.log->Info("Deleted " + std::to_string(gone.size()) + " partition(s) of table " + table);
    return Status::OK();
  }

  // A table of a database reached through a JDBC connection: created, or updated as
  // UpdateBehavior says.
  Status WriteJdbcTable(const std::string& name, const std::string& location, const std::string& connection,
                        const std::string& vendor, const Json& columns) {
    OG_ASSIGN_OR_RETURN(std::optional<Json> existing, GetTable(name));
    Json params = {{"classification", vendor}, {"connectionName", connection}, {"typeOfData", "table"},
                   {"UPDATED_BY_CRAWLER", name_}, {"CrawlerSchemaSerializerVersion", "1.0"},
                   {"CrawlerSchemaDeserializerVersion", "1.0"}};
    Json input = {{"Name", name},
                  {"StorageDescriptor", {{"Columns", columns}, {"Location", location}, {"Compressed", false},
                                         {"NumberOfBuckets", -1}, {"Parameters", params},
                                         {"SerdeInfo", {{"Parameters", Json::object()}}}}},
                  {"PartitionKeys", Json::array()}, {"TableType", "EXTERNAL_TABLE"}, {"Parameters", params}};
    if (!existing) {
      OG_RETURN_NOT_OK(catalog_->CreateTable({{"DatabaseName", database_}, {"TableInput", input}}).status());
      ++out_->tables_created;
      ctx_.log->Info("Created table " + name + " in database " + database_);
      return Status::OK();
    }
    Json old_sd = existing->value("StorageDescriptor", Json::object());
    bool changed = old_sd.value("Columns", Json::array()) != columns || old_sd.value("Location", "") != location ||
                   existing->value("Parameters", Json::object()).contains("DEPRECATED_BY_CRAWLER");
    if (!changed) return Status::OK();
    if (update_ == "LOG") {
      ctx_.log->Warn("Table " + name + " in database " + database_ + ": the schema changed; not applied (UpdateBehavior LOG)");
      return Status::OK();
    }
    OG_RETURN_NOT_OK(catalog_->UpdateTable({{"DatabaseName", database_}, {"TableInput", input}}).status());
    ++out_->tables_updated;
    ctx_.log->Info("Updated table " + name + " in database " + database_);
    return Status::OK();
  }

  // A table this crawler drew before whose data is gone: DeleteBehavior.
  Status RetireTable(const std::string& table) {
    OG_ASSIGN_OR_RETURN(std::optional<Json> existing, GetTable(table));
    if (!existing) return Status::OK();
    Json params = existing->value("Parameters", Json::object());
    if (params.value("UPDATED_BY_CRAWLER", "") != name_) return Status::OK();
    if (delete_ == "DELETE_FROM_DATABASE") {
      OG_RETURN_NOT_OK(catalog_->DeleteTable({{"DatabaseName", database_}, {"Name", table}}).status());
      ++out_->tables_deleted;
      ctx_.log->Info("Deleted table " + table + " in database " + database_ + ": its data is gone");
    } else if (delete_ == "DEPRECATE_IN_DATABASE") {
      if (params.contains("DEPRECATED_BY_CRAWLER")) return Status::OK();
      Json input = *existing;
      for (const char* k : {"DatabaseName", "CreateTime", "UpdateTime", "CreatedBy", "IsRegisteredWithLakeFormation",
                            "CatalogId", "VersionId", "IsMultiDialectView", "FederatedTable", "LastAccessTime",
                            "LastAnalyzedTime"})
        input.erase(k);
      input["Parameters"]["DEPRECATED_BY_CRAWLER"] = "1";
      OG_RETURN_NOT_OK(catalog_->UpdateTable({{"DatabaseName", database_}, {"TableInput", input}}).status());
      ++out_->tables_deleted;
      ctx_.log->Info("Deprecated table " + table + " in database " + database_ + ": its data is gone");
    } else {
      ctx_.log->Warn("Table " + table + " in database " + database_ + " has no data any more; kept (DeleteBehavior LOG)");
    }
    return Status::OK();
  }

 private:
  const CrawlContext& ctx_;
  catalog::Catalog* catalog_;
  CrawlOutcome* out_;
  const CrawlerConfiguration& config_;
  std::string name_, database_, update_, delete_;
};

// ---- classification -------------------------------------------------------------------------------

struct FileWork {
  size_t target;
  std::string folder;
  const storage::ObjectInfo* object;
  Result<FileClass> result = Status::Internal("not classified");
};

void ClassifyAll(const CrawlContext& ctx, const std::vector<Target>& targets,
                 const std::vector<CustomClassifier>& custom, std::vector<FileWork>* work) {
  std::atomic<size_t> next{0};
  FooterBudget footers(kCrawlFooterBudget);  // shared by this crawl's threads
  auto worker = [&]() {
    for (;;) {
      size_t i = next.fetch_add(1);
      if (i >= work->size() || ctx.cancel->load()) return;
      FileWork& w = (*work)[i];
      w.result = ClassifyObject(ctx.objects, targets[w.target].bucket, *w.object, custom, &footers);
    }
  };
  size_t n = std::min<size_t>(static_cast<size_t>(ctx.classify_threads), work->size());
  std::vector<std::thread> threads;
  for (size_t t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
}

std::string ObjectUri(const Target& t, const storage::ObjectInfo& o) { return "s3://" + t.bucket + "/" + o.key; }

std::string FolderUri(const Target& t, const std::string& folder) {
  return "s3://" + t.bucket + "/" + t.prefix + (folder.empty() ? "" : folder + "/");
}

// One crawl, phase by phase, as DuckDB splits its CSV sniffer: Configure (the crawler's
// settings, database, recrawl state and classifiers) -> ReadJdbcTargets -> ListTargets ->
// Classify -> MergeLeaves (per folder, the files of its most common format) -> PlanOutputs (the
// tables and partitions to write) -> Write (one store transaction). A phase returns false when
// the crawl ends early; `out_` then says how (FAILED with its error, or CANCELLED).
class CrawlRun {
 public:
  CrawlRun(const Json& crawler, const CrawlContext& ctx)
      : crawler_(crawler), ctx_(ctx), log_(*ctx.log), name_(crawler.value("Name", "")) {}

  CrawlOutcome Run() {
    log_.Benchmark("Running Start Crawl for Crawler " + name_);
    if (Configure() && ReadJdbcTargets() && ListTargets() && Classify()) {
      MergeLeaves();
      if (PlanOutputs()) Write();
    }
    return std::move(out_);
  }

 private:
  struct JdbcTable {
    std::string name, location, connection, vendor, target;
    Json columns;
  };
  // A table, or new partitions of a table drawn before, that the crawl writes.
  struct Output {
    TableSpec spec;
    std::vector<std::pair<std::vector<std::string>, std::string>> partitions;
    bool full = true;
    std::string target, root;
    std::string database;  // a catalog target's database ("" = the crawler's)
  };

  bool Fail(const std::string& message) {
    out_.state = "FAILED";
    out_.error = message;
    if (out_.writes) {
      // Nothing of a failed crawl reaches the catalog: its transaction is rolled back.
      out_.writes.reset();
      out_.tables_created = out_.tables_updated = out_.tables_deleted = 0;
      out_.partitions_created = out_.partitions_updated = out_.partitions_deleted = 0;
    }
    return false;
  }

  // Whether the crawl goes on: false, and CANCELLED, once StopCrawler asked it to end.
  bool Continue() {
    if (!ctx_.cancel->load()) return true;
    out_.state = "CANCELLED";
    log_.Info("The crawl was stopped before the catalog was written");
    return false;
  }

  bool Configure();
  bool ReadJdbcTargets();
  bool ListTargets();
  bool Classify();
  void MergeLeaves();
  bool PlanOutputs();
  bool Write();

  const Json& crawler_;
  const CrawlContext& ctx_;
  CrawlLog& log_;
  const std::string name_;
  CrawlOutcome out_;
  CrawlerConfiguration config_;
  std::string database_;
  Json targets_doc_;
  bool new_only_ = false;
  Json state_ = Json::object();  // the recrawl state of earlier successful crawls
  Json new_state_ = {{"targets", Json::object()}, {"tables", Json::array()}};
  std::vector<CustomClassifier> custom_;  // the crawler's classifiers, tried first, in its order
  std::vector<JdbcTable> jdbc_tables_;
  std::vector<Target> targets_;
  int64_t classify_start_ = 0;
  std::vector<FileWork> work_;
  std::vector<std::vector<Leaf>> leaves_;  // per target
  std::vector<Output> outputs_;
};

bool CrawlRun::Configure() {
  Result<CrawlerConfiguration> parsed = ParseCrawlerConfiguration(crawler_.value("Configuration", ""));
  if (!parsed.ok()) return Fail(parsed.status().message());
  config_ = *parsed;
  database_ = crawler_.value("DatabaseName", "");
  targets_doc_ = crawler_.value("Targets", Json::object());
  size_t target_count = 0;
  for (const auto& [kind, list] : targets_doc_.items())
    if (list.is_array()) target_count += list.size();
  if (target_count == 0)
    return Fail("The crawler has no targets to crawl: give it S3Targets, JdbcTargets or "
                "CatalogTargets (UpdateCrawler)");
  for (const auto& [kind, list] : targets_doc_.items()) {
    if (kind != "S3Targets" && kind != "CatalogTargets" && kind != "JdbcTargets" && list.is_array() &&
        !list.empty())
      return Fail(kind + " are not crawled by OpenGlue yet (only S3Targets, JdbcTargets and CatalogTargets)");
  }
  if (!targets_doc_.value("S3Targets", Json::array()).empty() ||
      !targets_doc_.value("JdbcTargets", Json::array()).empty()) {
    if (database_.empty()) return Fail("The crawler has no DatabaseName to write its tables to");
    if (Result<Json> db = ctx_.catalog->GetDatabase({{"Name", database_}}); !db.ok())
      return Fail(db.status().code() == StatusCode::kEntityNotFound ? "Database " + database_ + " not found"
                                                                    : db.status().message());
  }
  new_only_ = crawler_.value("RecrawlPolicy", Json::object()).value("RecrawlBehavior", "") ==
              "CRAWL_NEW_FOLDERS_ONLY";
  Json policy = crawler_.value("SchemaChangePolicy", Json::object());
  log_.Info("Crawler configured with SchemaChangePolicy " + DumpJson(policy) + ", RecrawlPolicy " +
            (new_only_ ? "CRAWL_NEW_FOLDERS_ONLY" : "CRAWL_EVERYTHING"));

  // Recrawl state of earlier successful crawls.
  {
    Result<std::unique_ptr<store::Transaction>> txn = ctx_.store->BeginRead();
    if (!txn.ok()) return Fail(txn.status().message());
    Result<std::optional<std::string>> doc = (*txn)->Get(kCrawlerState, name_);
    if (!doc.ok()) return Fail(doc.status().message());
    if (*doc) {
      state_ = ParseJson(**doc);
      if (!state_.is_object()) state_ = Json::object();
    }
  }
  // The crawler's custom classifiers, tried first, in its order.
  for (const Json& cname : crawler_.value("Classifiers", Json::array())) {
    if (!cname.is_string()) continue;
    const std::string cn = cname.get<std::string>();
    Result<std::optional<std::string>> doc = [&]() -> Result<std::optional<std::string>> {
      OG_ASSIGN_OR_RETURN(auto txn, ctx_.store->BeginRead());
      return txn->Get("classifier", cn);
    }();
    if (!doc.ok()) return Fail(doc.status().message());
    if (!*doc) return Fail("Classifier " + cn + " does not exist");
    Result<CustomClassifier> made = CustomClassifier::FromDocument(cn, **doc);
    if (!made.ok()) return Fail("Classifier " + cn + ": " + made.status().message());
    custom_.push_back(std::move(*made));
  }
  return true;
}

bool CrawlRun::ReadJdbcTargets() {
  // JDBC targets: the tables of each target's database, through the connection it names.
  for (const Json& t : targets_doc_.value("JdbcTargets", Json::array())) {
    std::string connection = t.value("ConnectionName", ""), path = t.value("Path", "");
    Result<Json> conn = ctx_.catalog->GetConnection({{"Name", connection}, {"HidePassword", false}});
    if (!conn.ok()) return Fail("JDBC target " + path + ": connection " + connection + ": " + conn.status().message());
    Json props = (*conn)["Connection"].value("ConnectionProperties", Json::object());
    if (!ctx_.jdbc) return Fail("JDBC targets need the server's Python runtime (awsglue.crawl_jdbc)");
    Json request = {{"url", props.value("JDBC_CONNECTION_URL", "")}, {"user", props.value("USERNAME", "")},
                    {"password", props.value("PASSWORD", "")}, {"path", path},
                    {"exclusions", t.value("Exclusions", Json::array())}};
    Result<Json> answer = ctx_.jdbc(request);
    if (!answer.ok()) return Fail("JDBC target " + path + ": " + answer.status().message());
    if (answer->contains("error")) return Fail("JDBC target " + path + ": " + answer->value("error", ""));
    std::string vendor = answer->value("vendor", "");
    for (const Json& table : answer->value("tables", Json::array())) {
      JdbcTable jt;
      std::string db = table.value("database", ""), schema = table.value("schema", ""), tn = table.value("name", "");
      jt.name = CatalogName(crawler_.value("TablePrefix", "") + db + "_" + (schema.empty() ? "" : schema + "_") + tn);
      jt.location = db + "." + (schema.empty() ? "" : schema + ".") + tn;
      jt.connection = connection;
      jt.vendor = vendor;
      jt.target = "jdbc:" + connection + ":" + path;
      jt.columns = Json::array();
      for (const Json& c : table.value("columns", Json::array()))
        jt.columns.push_back({{"Name", ToLower(c.value("name", ""))}, {"Type", c.value("type", "string")}});
      jdbc_tables_.push_back(std::move(jt));
    }
    log_.Info("JDBC target " + path + " (connection " + connection + "): " +
              std::to_string(answer->value("tables", Json::array()).size()) + " table(s)");
  }
  return Continue();
}

// S3 targets as they are; a catalog target's tables as S3 targets of their locations.
bool CrawlRun::ListTargets() {
  const int64_t list_start = ctx_.clock->NowMillis();
  int64_t old_skipped = 0;
  std::vector<std::pair<Target, Json>> wanted;
  for (const Json& t : targets_doc_.value("S3Targets", Json::array())) {
    Target target;
    target.path = t.value("Path", "");
    wanted.emplace_back(std::move(target), t);
  }
  for (const Json& t : targets_doc_.value("CatalogTargets", Json::array())) {
    std::string db = t.value("DatabaseName", "");
    for (const Json& name : t.value("Tables", Json::array())) {
      if (!name.is_string()) continue;
      Result<Json> got = ctx_.catalog->GetTable({{"DatabaseName", db}, {"Name", name}});
      if (!got.ok())
        return Fail("Catalog target " + db + "." + name.get<std::string>() + ": " + got.status().message());
      const Json& table = (*got)["Table"];
      Target target;
      target.path = table.value("StorageDescriptor", Json::object()).value("Location", "");
      if (!StartsWith(target.path, "s3://") && !StartsWith(target.path, "s3a://") && !StartsWith(target.path, "s3n://"))
        return Fail("Catalog target " + db + "." + name.get<std::string>() + ": its Location '" + target.path +
                    "' is not an s3:// location");
      target.catalog_database = db;
      target.catalog_table = table.value("Name", name.get<std::string>());
      for (const Json& k : table.value("PartitionKeys", Json::array())) target.catalog_keys.push_back(k.value("Name", ""));
      wanted.emplace_back(std::move(target), Json::object());
    }
  }
  for (auto& [target, t] : wanted) {
    Result<storage::Location> location = storage::ParseLocation(target.path);
    if (!location.ok()) return Fail(location.status().message());
    target.bucket = location->bucket;
    target.prefix = location->key;
    if (!target.prefix.empty() && target.prefix.back() != '/') target.prefix += '/';
    std::vector<std::string> segments = Split(target.prefix, '/');
    while (!segments.empty() && segments.back().empty()) segments.pop_back();
    target.name = segments.empty() ? target.bucket : segments.back();
    if (!target.catalog_table.empty()) target.name = target.catalog_table;
    if (t.contains("SampleSize") && t["SampleSize"].is_number_integer()) target.sample_size = t["SampleSize"].get<int64_t>();
    for (const Json& e : t.value("Exclusions", Json::array()))
      if (e.is_string()) target.exclusions.push_back(e.get<std::string>());
    std::set<std::string> known;
    Json old_folders = state_.value("targets", Json::object()).value(target.path, Json::array());
    if (new_only_)
      for (const Json& f : old_folders) if (f.is_string()) known.insert(f.get<std::string>());
    Status listed = ListTarget(ctx_.objects, &target, known, ctx_.cancel, &old_skipped);
    if (!listed.ok()) return Fail("Cannot list " + target.path + ": " + listed.message());
    if (!Continue()) return false;
    // The folders this crawl has seen (and, for new-folders-only, those seen before).
    Json folders = new_only_ ? old_folders : Json::array();
    for (const auto& [folder, files] : target.folders) folders.push_back(folder);
    new_state_["targets"][target.path] = folders;
    targets_.push_back(std::move(target));
  }
  int64_t listed_files = 0;
  for (const Target& t : targets_)
    for (const auto& [folder, files] : t.folders) listed_files += static_cast<int64_t>(files.size());
  classify_start_ = ctx_.clock->NowMillis();
  log_.Benchmark("Listed " + std::to_string(listed_files) + " file(s) to read" +
                 (new_only_ ? " (" + std::to_string(old_skipped) + " in folders crawled before, not read)" : "") +
                 " in " + std::to_string(classify_start_ - list_start) + " ms");
  log_.Flush();  // progress is readable while the crawl goes on
   return Continue();
}

bool CrawlRun::Classify() {
  for (size_t ti = 0; ti < targets_.size(); ++ti) {
    for (const auto& [folder, files] : targets_[ti].folders) {
      size_t n = files.size();
      if (targets_[ti].sample_size > 0) n = std::min<size_t>(n, static_cast<size_t>(targets_[ti].sample_size));
      for (size_t i = 0; i < n; ++i) work_.push_back(FileWork{ti, folder, &files[i]});
    }
  }
  ClassifyAll(ctx_, targets_, custom_, &work_);
  return Continue();
}

void CrawlRun::MergeLeaves() {
  // Leaves: per folder, the files of the most common format merged.
  leaves_.assign(targets_.size(), {});
  {
    size_t i = 0;
    while (i < work_.size()) {
      size_t j = i;
      while (j < work_.size() && work_[j].target == work_[i].target && work_[j].folder == work_[i].folder) ++j;
      const Target& target = targets_[work_[i].target];
      std::map<std::string, std::vector<size_t>> by_format;
      std::set<const storage::ObjectInfo*> left_out;  // read and skipped: not part of the table
      for (size_t k = i; k < j; ++k) {
        if (work_[k].result.ok()) {
          by_format[work_[k].result->FormatKey()].push_back(k);
        } else {
          left_out.insert(work_[k].object);
          std::string message = ObjectUri(target, *work_[k].object) + ": " + work_[k].result.status().message();
          out_.skipped.push_back(message);
          log_.Warn("Skipped " + message);
        }
      }
      if (!by_format.empty()) {
        auto major = std::max_element(by_format.begin(), by_format.end(),
                                      [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
        Leaf leaf;
        leaf.folder = work_[i].folder;
        int64_t sampled_records = 0, sampled = 0;
        for (const auto& [key, members] : by_format) {
          for (size_t k : members) {
            if (key != major->first) {
              left_out.insert(work_[k].object);
              std::string message = ObjectUri(target, *work_[k].object) + ": its format (" +
                                    work_[k].result->classification + ") differs from the rest of its folder";
              out_.skipped.push_back(message);
              log_.Warn("Skipped " + message);
              continue;
            }
            if (sampled == 0) leaf.format = *work_[k].result;
            else MergeSchema(&leaf.format.schema, work_[k].result->schema);
            sampled_records += std::max<int64_t>(0, work_[k].result->records);
            ++sampled;
          }
        }
        const auto& files = target.folders.at(leaf.folder);
        for (const auto& f : files) {
          if (left_out.count(&f)) continue;
          ++leaf.files;
          leaf.bytes += f.size;
        }
        leaf.records = sampled > 0 ? sampled_records * leaf.files / sampled : 0;
        leaves_[work_[i].target].push_back(std::move(leaf));
      }
      i = j;
    }
  }
}

bool CrawlRun::PlanOutputs() {
  std::map<std::string, std::string> names;  // table name -> location
  Json old_tables = state_.value("tables", Json::array());
  for (size_t ti = 0; ti < targets_.size(); ++ti) {
    const Target& target = targets_[ti];
    std::vector<Leaf> fresh;
    // New-folders-only: a new folder under a table drawn before is a new partition of it.
    std::map<std::string, Output> attached;
    for (Leaf& leaf : leaves_[ti]) {
      const Json* owner = nullptr;
      if (new_only_) {
        for (const Json& t : old_tables) {
          if (t.value("target", "") != target.path) continue;
          std::string root = t.value("root", "");
          size_t depth = t.value("keys", Json::array()).size();
          bool under = root.empty() || leaf.folder == root || StartsWith(leaf.folder, root + "/");
          if (under && PartitionValues(root, leaf.folder).size() == depth && depth > 0) owner = &t;
        }
      }
      if (owner == nullptr) {
        fresh.push_back(std::move(leaf));
        continue;
      }
      std::string table = owner->value("name", "");
      Output& o = attached[table];
      o.spec.name = table;
      o.full = false;
      o.target = target.path;
      o.root = owner->value("root", "");
      std::vector<std::string> values = PartitionValues(o.root, leaf.folder);
      Json keys = owner->value("keys", Json::array());
      for (size_t k = 0; k < values.size() && k < keys.size(); ++k) {
        std::string prefix = keys[k].get<std::string>() + "=";
        if (StartsWith(ToLower(values[k]), prefix)) values[k] = values[k].substr(prefix.size());
      }
      o.partitions.emplace_back(values, FolderUri(target, leaf.folder));
    }
    for (auto& [table, o] : attached) {
      names[table] = "(existing)";
      outputs_.push_back(std::move(o));
    }
    PlanOptions plan_options;
    plan_options.combine_compatible = config_.combine_compatible;
    for (const Json& t : old_tables)
      if (t.value("target", "") == target.path) plan_options.known_roots.push_back(t.value("root", ""));
    if (!target.catalog_table.empty()) {
      plan_options.table_level = 0;  // the table is the catalog target's, at its location
    } else if (config_.table_level > 0) {
      int include_level = 1 + static_cast<int>(std::count(target.prefix.begin(), target.prefix.end(), '/'));
      plan_options.table_level = std::max(0, config_.table_level - include_level);
    }
    Plan plan = PlanTables(fresh, plan_options);
    for (const std::string& s : plan.skipped) {
      out_.skipped.push_back(target.path + ": " + s);
      log_.Warn(target.path + ": " + s);
    }
    for (const PlannedTable& t : plan.tables) {
      Output o;
      std::string base = t.root.empty() ? target.name : Split(t.root, '/').back();
      o.spec.name = CatalogName(crawler_.value("TablePrefix", "") + base);
      o.spec.location = FolderUri(target, t.root);
      o.spec.keys = t.keys;
      if (!target.catalog_table.empty()) {
        // The existing table keeps its name, database and (when the folders agree) key names.
        o.spec.name = target.catalog_table;
        o.database = target.catalog_database;
        if (target.catalog_keys.size() == t.keys.size()) o.spec.keys = target.catalog_keys;
      } else {
        if (names.count(o.spec.name) && names[o.spec.name] != o.spec.location)
          o.spec.name += "_" + Fnv8(o.spec.location);
        names[o.spec.name] = o.spec.location;
      }
      o.spec.format = t.format;
      o.spec.files = t.files;
      o.spec.bytes = t.bytes;
      o.spec.records = t.records;
      o.full = !new_only_;
      o.target = target.path;
      o.root = t.root;
      for (size_t k = 0; k < t.leaves.size(); ++k)
        o.partitions.emplace_back(t.values[k], FolderUri(target, fresh[t.leaves[k]].folder));
      for (const std::string& c : t.conflicts)
        log_.Warn("Table " + o.spec.name + ": column " + c + " has conflicting types; typed string");
      outputs_.push_back(std::move(o));
    }
  }
  size_t table_count = outputs_.size() + jdbc_tables_.size();
  if (config_.table_threshold > 0 && table_count > static_cast<size_t>(config_.table_threshold))
    return Fail("The number of tables detected by crawler: " + std::to_string(table_count) +
                " is greater than the table threshold value provided: " +
                std::to_string(config_.table_threshold) + ". Failing crawler without creating tables.");
  return Continue();
}

bool CrawlRun::Write() {
  // Write: every change of the crawl in one store transaction, which the service commits with the
  // crawl's end (a crash before then leaves the catalog as it was; never a half-written table).
  const int64_t write_start = ctx_.clock->NowMillis();
  log_.Benchmark("Classification complete in " + std::to_string(write_start - classify_start_) +
                 " ms, writing results to database " + database_);
  log_.Flush();
  Result<std::unique_ptr<store::Transaction>> writes = ctx_.store->BeginWrite();
  if (!writes.ok()) return Fail(writes.status().message());
  out_.writes = std::move(*writes);
  std::unique_ptr<catalog::Catalog> scoped = ctx_.catalog->InTransaction(out_.writes.get());
  Writer writer(ctx_, scoped.get(), crawler_, config_, &out_);
  std::set<std::string> written;
  const Json old_tables = state_.value("tables", Json::array());
  for (const Output& o : outputs_) {
    Status st;
    writer.SetDatabase(o.database.empty() ? database_ : o.database);
    if (o.spec.location.empty()) {
      // New partitions of a table drawn before (new-folders-only).
      Result<std::optional<Json>> existing = writer.GetTable(o.spec.name);
      if (!existing.ok()) return Fail(existing.status().message());
      if (!*existing) {
        log_.Warn("Table " + o.spec.name + " is gone from the catalog; its new folders are not added");
        continue;
      }
      st = writer.WritePartitions(o.spec.name, (**existing).value("StorageDescriptor", Json::object()),
                                  o.partitions, false);
    } else {
      st = writer.WriteTable(o.spec, o.partitions, o.full);
    }
    if (!st.ok()) return Fail("Writing table " + o.spec.name + ": " + st.message());
    written.insert(o.spec.name);
    Json keys = Json::array();
    if (!o.spec.location.empty() && o.database.empty()) {  // catalog targets' tables are never retired
      for (const std::string& k : o.spec.keys) keys.push_back(k);
      new_state_["tables"].push_back({{"name", o.spec.name}, {"target", o.target}, {"root", o.root}, {"keys", keys}});
    }
  }
  writer.SetDatabase(database_);
  for (const JdbcTable& jt : jdbc_tables_) {
    Status st = writer.WriteJdbcTable(jt.name, jt.location, jt.connection, jt.vendor, jt.columns);
    if (!st.ok()) return Fail("Writing table " + jt.name + ": " + st.message());
    written.insert(jt.name);
    new_state_["tables"].push_back({{"name", jt.name}, {"target", jt.target}, {"root", ""}, {"keys", Json::array()}});
  }
  // Tables drawn before: kept in the state (new-folders-only), or retired when their data is gone.
  for (const Json& t : old_tables) {
    std::string table = t.value("name", "");
    if (written.count(table) && !new_only_) continue;
    if (new_only_) {
      bool present = false;
      for (const Json& n : new_state_["tables"]) present |= n.value("name", "") == table;
      if (!present) new_state_["tables"].push_back(t);
      continue;
    }
    Status st = writer.RetireTable(table);
    if (!st.ok()) return Fail("Retiring table " + table + ": " + st.message());
  }
  out_.new_state = new_state_;
  log_.Benchmark("Finished writing to Catalog in " + std::to_string(ctx_.clock->NowMillis() - write_start) + " ms");
  log_.Info("Tables created: " + std::to_string(out_.tables_created) + ", updated: " +
            std::to_string(out_.tables_updated) + ", deleted: " + std::to_string(out_.tables_deleted) +
            "; partitions created: " + std::to_string(out_.partitions_created) +
            ", deleted: " + std::to_string(out_.partitions_deleted));
  return true;
}

}  // namespace

CrawlOutcome RunCrawlBody(const Json& crawler, const CrawlContext& ctx) {
  return CrawlRun(crawler, ctx).Run();
}

}  // namespace openglue::crawler
