#include "hms/translate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/strings.h"

namespace openglue::hms {
namespace {

// Glue's limits on the members a Hive client fills freely (the service model enforces the rest).
constexpr size_t kMaxCommentBytes = 255;
constexpr size_t kMaxDescriptionBytes = 2048;
constexpr std::string_view kHiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__";

std::string Str(const Json& doc, const char* member) {
  auto it = doc.find(member);
  if (it == doc.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

bool Has(const Json& doc, const char* member) {
  if (!doc.is_object()) return false;
  auto it = doc.find(member);
  return it != doc.end() && !it->is_null();
}

std::map<std::string, std::string> StringMap(const Json& doc, const char* member) {
  std::map<std::string, std::string> out;
  if (!Has(doc, member) || !doc[member].is_object()) return out;
  for (auto it = doc[member].begin(); it != doc[member].end(); ++it) {
    if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  }
  return out;
}

std::vector<std::string> StringList(const Json& doc, const char* member) {
  std::vector<std::string> out;
  if (!Has(doc, member) || !doc[member].is_array()) return out;
  for (const Json& item : doc[member]) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

Json MapToJson(const std::map<std::string, std::string>& map) {
  Json out = Json::object();
  for (const auto& [key, value] : map) out[SanitizeUtf8(key)] = SanitizeUtf8(value);
  return out;
}

Json ListToJson(const std::vector<std::string>& list) {
  Json out = Json::array();
  for (const auto& item : list) out.push_back(SanitizeUtf8(item));
  return out;
}

int32_t Int(const Json& doc, const char* member, int32_t fallback) {
  if (!Has(doc, member) || !doc[member].is_number()) return fallback;
  double v = doc[member].get<double>();
  if (!std::isfinite(v)) return fallback;
  v = std::clamp(v, double{std::numeric_limits<int32_t>::min()},
                 double{std::numeric_limits<int32_t>::max()});
  return static_cast<int32_t>(v);
}

Json ColumnsFromHive(const std::vector<wire::FieldSchema>& columns) {
  Json out = Json::array();
  for (const auto& column : columns) {
    Json c{{"Name", ToLower(SanitizeUtf8(column.name))}, {"Type", SanitizeUtf8(column.type)}};
    if (column.__isset.comment && !column.comment.empty())
      c["Comment"] = TruncateUtf8(SanitizeUtf8(column.comment), kMaxCommentBytes);
    out.push_back(std::move(c));
  }
  return out;
}

// Hive's FileUtils.escapePathName set: these and the control characters become %XX.
bool NeedsEscape(unsigned char c) {
  if (c < 0x20 || c == 0x7F) return true;
  switch (c) {
    case '"': case '#': case '%': case '\'': case '*': case '/': case ':': case '=': case '?':
    case '\\': case '{': case '[': case ']': case '^':
      return true;
    default:
      return false;
  }
}

std::string EscapePathName(std::string_view text) {
  if (text.empty()) return std::string(kHiveDefaultPartition);
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (NeedsEscape(c)) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// `text` between `quote`s, a quote inside it doubled: a Glue 'string' or `key`.
std::string Quoted(std::string_view text, char quote) {
  std::string out(1, quote);
  for (char c : text) {
    if (c == quote) out += quote;
    out += c;
  }
  out += quote;
  return out;
}

}  // namespace

std::string UnescapePathName(std::string_view text) { return PercentDecode(text); }

int32_t HiveTime(const Json& value) {
  if (!value.is_number()) return 0;
  double v = value.get<double>();
  if (!std::isfinite(v) || v <= 0) return 0;
  return static_cast<int32_t>(std::min(v, double{std::numeric_limits<int32_t>::max()}));
}

std::vector<wire::FieldSchema> ColumnsToHive(const Json& columns) {
  std::vector<wire::FieldSchema> out;
  if (!columns.is_array()) return out;
  for (const Json& column : columns) {
    if (!column.is_object()) continue;
    wire::FieldSchema f;
    f.__set_name(Str(column, "Name"));
    f.__set_type(Str(column, "Type"));
    if (Has(column, "Comment")) f.__set_comment(Str(column, "Comment"));
    out.push_back(std::move(f));
  }
  return out;
}

wire::StorageDescriptor StorageDescriptorToHive(const Json& sd) {
  wire::StorageDescriptor out;
  Json empty = Json::object();
  const Json& doc = sd.is_object() ? sd : empty;
  out.__set_cols(ColumnsToHive(doc.value("Columns", Json::array())));
  if (Has(doc, "Location")) out.__set_location(Str(doc, "Location"));
  if (Has(doc, "InputFormat")) out.__set_inputFormat(Str(doc, "InputFormat"));
  if (Has(doc, "OutputFormat")) out.__set_outputFormat(Str(doc, "OutputFormat"));
  out.__set_compressed(doc.value("Compressed", false) == true);
  out.__set_numBuckets(Int(doc, "NumberOfBuckets", -1));
  wire::SerDeInfo serde;
  if (Has(doc, "SerdeInfo") && doc["SerdeInfo"].is_object()) {
    const Json& s = doc["SerdeInfo"];
    if (Has(s, "Name")) serde.__set_name(Str(s, "Name"));
    if (Has(s, "SerializationLibrary")) serde.__set_serializationLib(Str(s, "SerializationLibrary"));
    serde.__set_parameters(StringMap(s, "Parameters"));
  } else {
    serde.__set_parameters({});
  }
  out.__set_serdeInfo(serde);
  out.__set_bucketCols(StringList(doc, "BucketColumns"));
  std::vector<wire::Order> sort;
  if (Has(doc, "SortColumns") && doc["SortColumns"].is_array()) {
    for (const Json& order : doc["SortColumns"]) {
      if (!order.is_object()) continue;
      wire::Order o;
      o.__set_col(Str(order, "Column"));
      o.__set_order(Int(order, "SortOrder", 1));
      sort.push_back(std::move(o));
    }
  }
  out.__set_sortCols(sort);
  out.__set_parameters(StringMap(doc, "Parameters"));
  if (Has(doc, "SkewedInfo") && doc["SkewedInfo"].is_object()) {
    const Json& s = doc["SkewedInfo"];
    wire::SkewedInfo skewed;
    skewed.__set_skewedColNames(StringList(s, "SkewedColumnNames"));
    // Glue keeps each skewed value tuple as one string; Hive as a list of values.
    std::vector<std::vector<std::string>> values;
    for (const auto& v : StringList(s, "SkewedColumnValues")) values.push_back({v});
    skewed.__set_skewedColValues(values);
    skewed.__set_skewedColValueLocationMaps(StringMap(s, "SkewedColumnValueLocationMaps"));
    out.__set_skewedInfo(skewed);
  }
  if (Has(doc, "StoredAsSubDirectories"))
    out.__set_storedAsSubDirectories(doc.value("StoredAsSubDirectories", false) == true);
  return out;
}

wire::Database DatabaseToHive(const Json& database, const std::string& default_location_root) {
  wire::Database out;
  std::string name = Str(database, "Name");
  out.__set_name(name);
  if (Has(database, "Description")) out.__set_description(Str(database, "Description"));
  std::string location = Str(database, "LocationUri");
  if (location.empty()) location = default_location_root + "/" + name + ".db";
  out.__set_locationUri(location);
  out.__set_parameters(StringMap(database, "Parameters"));
  return out;
}

wire::Table TableToHive(const Json& table) {
  wire::Table out;
  out.__set_tableName(Str(table, "Name"));
  out.__set_dbName(Str(table, "DatabaseName"));
  if (Has(table, "Owner")) out.__set_owner(Str(table, "Owner"));
  out.__set_createTime(HiveTime(table.value("CreateTime", Json())));
  out.__set_lastAccessTime(HiveTime(table.value("LastAccessTime", Json())));
  out.__set_retention(Int(table, "Retention", 0));
  out.__set_sd(StorageDescriptorToHive(table.value("StorageDescriptor", Json::object())));
  out.__set_partitionKeys(ColumnsToHive(table.value("PartitionKeys", Json::array())));
  auto parameters = StringMap(table, "Parameters");
  if (Has(table, "Description") && !parameters.count("comment"))
    parameters["comment"] = Str(table, "Description");
  out.__set_parameters(parameters);
  if (Has(table, "ViewOriginalText")) out.__set_viewOriginalText(Str(table, "ViewOriginalText"));
  if (Has(table, "ViewExpandedText")) out.__set_viewExpandedText(Str(table, "ViewExpandedText"));
  std::string type = Str(table, "TableType");
  if (type != "MANAGED_TABLE" && type != "EXTERNAL_TABLE" && type != "VIRTUAL_VIEW" &&
      type != "MATERIALIZED_VIEW" && type != "INDEX_TABLE")
    type = "EXTERNAL_TABLE";
  out.__set_tableType(type);
  return out;
}

wire::Partition PartitionToHive(const Json& partition, const Json& table) {
  wire::Partition out;
  std::vector<std::string> values = StringList(partition, "Values");
  out.__set_values(values);
  out.__set_dbName(Str(partition, "DatabaseName"));
  out.__set_tableName(Str(partition, "TableName"));
  out.__set_createTime(HiveTime(partition.value("CreationTime", Json())));
  out.__set_lastAccessTime(HiveTime(partition.value("LastAccessTime", Json())));
  if (Has(partition, "StorageDescriptor")) {
    out.__set_sd(StorageDescriptorToHive(partition["StorageDescriptor"]));
  } else {
    // Hive clients need a partition's storage: the table's, in the partition's folder.
    wire::StorageDescriptor sd = StorageDescriptorToHive(table.value("StorageDescriptor", Json::object()));
    std::vector<std::string> keys;
    for (const auto& key : ColumnsToHive(table.value("PartitionKeys", Json::array()))) keys.push_back(key.name);
    if (sd.__isset.location && !sd.location.empty()) {
      std::string base = sd.location;
      while (!base.empty() && base.back() == '/') base.pop_back();
      sd.__set_location(base + "/" + PartitionName(keys, values));
    }
    out.__set_sd(sd);
  }
  out.__set_parameters(StringMap(partition, "Parameters"));
  return out;
}

wire::Function FunctionToHive(const Json& function) {
  wire::Function out;
  out.__set_functionName(Str(function, "FunctionName"));
  out.__set_dbName(Str(function, "DatabaseName"));
  out.__set_className(Str(function, "ClassName"));
  if (Has(function, "OwnerName")) out.__set_ownerName(Str(function, "OwnerName"));
  std::string owner_type = Str(function, "OwnerType");
  out.__set_ownerType(owner_type == "ROLE"    ? wire::PrincipalType::ROLE
                      : owner_type == "GROUP" ? wire::PrincipalType::GROUP
                                              : wire::PrincipalType::USER);
  out.__set_createTime(HiveTime(function.value("CreateTime", Json())));
  out.__set_functionType(wire::FunctionType::JAVA);
  std::vector<wire::ResourceUri> uris;
  if (Has(function, "ResourceUris") && function["ResourceUris"].is_array()) {
    for (const Json& r : function["ResourceUris"]) {
      if (!r.is_object()) continue;
      wire::ResourceUri uri;
      std::string type = Str(r, "ResourceType");
      uri.__set_resourceType(type == "FILE"      ? wire::ResourceType::FILE
                             : type == "ARCHIVE" ? wire::ResourceType::ARCHIVE
                                                 : wire::ResourceType::JAR);
      uri.__set_uri(Str(r, "Uri"));
      uris.push_back(std::move(uri));
    }
  }
  out.__set_resourceUris(uris);
  return out;
}

Json StorageDescriptorFromHive(const wire::StorageDescriptor& sd) {
  Json out = Json::object();
  out["Columns"] = ColumnsFromHive(sd.cols);
  if (sd.__isset.location && !sd.location.empty()) out["Location"] = SanitizeUtf8(sd.location);
  if (sd.__isset.inputFormat && !sd.inputFormat.empty()) out["InputFormat"] = SanitizeUtf8(sd.inputFormat);
  if (sd.__isset.outputFormat && !sd.outputFormat.empty())
    out["OutputFormat"] = SanitizeUtf8(sd.outputFormat);
  out["Compressed"] = sd.compressed;
  out["NumberOfBuckets"] = sd.numBuckets;
  if (sd.__isset.serdeInfo) {
    Json serde = Json::object();
    if (sd.serdeInfo.__isset.name && !sd.serdeInfo.name.empty())
      serde["Name"] = SanitizeUtf8(sd.serdeInfo.name);
    if (sd.serdeInfo.__isset.serializationLib && !sd.serdeInfo.serializationLib.empty())
      serde["SerializationLibrary"] = SanitizeUtf8(sd.serdeInfo.serializationLib);
    serde["Parameters"] = MapToJson(sd.serdeInfo.parameters);
    out["SerdeInfo"] = std::move(serde);
  }
  out["BucketColumns"] = ListToJson(sd.bucketCols);
  Json sort = Json::array();
  for (const auto& order : sd.sortCols)
    sort.push_back({{"Column", SanitizeUtf8(order.col)}, {"SortOrder", order.order == 0 ? 0 : 1}});
  out["SortColumns"] = std::move(sort);
  out["Parameters"] = MapToJson(sd.parameters);
  if (sd.__isset.skewedInfo) {
    Json values = Json::array();
    for (const auto& tuple : sd.skewedInfo.skewedColValues) values.push_back(SanitizeUtf8(Join(tuple, ",")));
    out["SkewedInfo"] = {{"SkewedColumnNames", ListToJson(sd.skewedInfo.skewedColNames)},
                         {"SkewedColumnValues", std::move(values)},
                         {"SkewedColumnValueLocationMaps", MapToJson(sd.skewedInfo.skewedColValueLocationMaps)}};
  }
  if (sd.__isset.storedAsSubDirectories) out["StoredAsSubDirectories"] = sd.storedAsSubDirectories;
  return out;
}

Json DatabaseInputFromHive(const wire::Database& database) {
  Json out{{"Name", ToLower(SanitizeUtf8(database.name))}};
  if (!database.description.empty())
    out["Description"] = TruncateUtf8(SanitizeUtf8(database.description), kMaxDescriptionBytes);
  if (!database.locationUri.empty()) out["LocationUri"] = SanitizeUtf8(database.locationUri);
  out["Parameters"] = MapToJson(database.parameters);
  return out;
}

Json TableInputFromHive(const wire::Table& table) {
  Json out{{"Name", ToLower(SanitizeUtf8(table.tableName))}};
  auto comment = table.parameters.find("comment");
  if (comment != table.parameters.end() && !comment->second.empty())
    out["Description"] = TruncateUtf8(SanitizeUtf8(comment->second), kMaxDescriptionBytes);
  if (!table.owner.empty()) out["Owner"] = SanitizeUtf8(table.owner);
  if (table.lastAccessTime > 0) out["LastAccessTime"] = table.lastAccessTime;
  out["Retention"] = std::max(table.retention, 0);
  out["StorageDescriptor"] = StorageDescriptorFromHive(table.sd);
  out["PartitionKeys"] = ColumnsFromHive(table.partitionKeys);
  if (table.__isset.viewOriginalText && !table.viewOriginalText.empty())
    out["ViewOriginalText"] = SanitizeUtf8(table.viewOriginalText);
  if (table.__isset.viewExpandedText && !table.viewExpandedText.empty())
    out["ViewExpandedText"] = SanitizeUtf8(table.viewExpandedText);
  if (!table.tableType.empty()) out["TableType"] = SanitizeUtf8(table.tableType);
  out["Parameters"] = MapToJson(table.parameters);
  return out;
}

Json PartitionInputFromHive(const wire::Partition& partition) {
  Json out{{"Values", ListToJson(partition.values)}};
  if (partition.lastAccessTime > 0) out["LastAccessTime"] = partition.lastAccessTime;
  if (partition.__isset.sd) out["StorageDescriptor"] = StorageDescriptorFromHive(partition.sd);
  out["Parameters"] = MapToJson(partition.parameters);
  return out;
}

Json FunctionInputFromHive(const wire::Function& function) {
  Json out{{"FunctionName", ToLower(SanitizeUtf8(function.functionName))},
           {"ClassName", SanitizeUtf8(function.className)}};
  if (!function.ownerName.empty()) out["OwnerName"] = SanitizeUtf8(function.ownerName);
  out["OwnerType"] = function.ownerType == wire::PrincipalType::ROLE    ? "ROLE"
                     : function.ownerType == wire::PrincipalType::GROUP ? "GROUP"
                                                                        : "USER";
  Json uris = Json::array();
  for (const auto& uri : function.resourceUris) {
    uris.push_back({{"ResourceType", uri.resourceType == wire::ResourceType::FILE      ? "FILE"
                                     : uri.resourceType == wire::ResourceType::ARCHIVE ? "ARCHIVE"
                                                                                       : "JAR"},
                    {"Uri", SanitizeUtf8(uri.uri)}});
  }
  out["ResourceUris"] = std::move(uris);
  return out;
}

std::string PartitionName(const std::vector<std::string>& keys, const std::vector<std::string>& values) {
  std::string out;
  for (size_t i = 0; i < keys.size() && i < values.size(); ++i) {
    if (i > 0) out += '/';
    out += EscapePathName(keys[i]);
    out += '=';
    out += EscapePathName(values[i]);
  }
  return out;
}

Result<std::vector<std::string>> PartitionValuesFromName(std::string_view name,
                                                        const std::vector<std::string>& keys) {
  std::vector<std::string> values(keys.size());
  std::vector<bool> seen(keys.size(), false);
  for (const std::string& part : Split(name, '/')) {
    if (part.empty()) continue;
    size_t eq = part.find('=');
    if (eq == std::string::npos)
      return Status::InvalidInput("Partition name component '" + SanitizeUtf8(part) + "' is not key=value");
    std::string key = ToLower(UnescapePathName(part.substr(0, eq)));
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end())
      return Status::InvalidInput("Partition name names key '" + SanitizeUtf8(key) + "' the table does not have");
    size_t index = static_cast<size_t>(it - keys.begin());
    values[index] = UnescapePathName(part.substr(eq + 1));
    seen[index] = true;
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!seen[i]) return Status::InvalidInput("Partition name '" + SanitizeUtf8(name) + "' has no value for key " + keys[i]);
  }
  return values;
}

Result<std::string> HiveFilterToExpression(std::string_view filter) {
  std::string out;
  out.reserve(filter.size() + 8);
  size_t i = 0;
  while (i < filter.size()) {
    char c = filter[i];
    if (c == '"' || c == '\'') {
      char quote = c;
      std::string value;
      size_t j = i + 1;
      bool closed = false;
      while (j < filter.size()) {
        char d = filter[j];
        if (d == '\\' && j + 1 < filter.size()) {
          // Hive's lexer: a backslash keeps the next character in the string, and both stay.
          value += d;
          value += filter[j + 1];
          j += 2;
          continue;
        }
        if (d == quote) {
          closed = true;
          break;
        }
        value += d;
        ++j;
      }
      if (!closed)
        return Status::InvalidInput("Partition filter has an unterminated string at position " +
                                    std::to_string(i + 1));
      out += Quoted(value, '\'');
      i = j + 1;
      continue;
    }
    out += c;
    ++i;
  }
  if (Trim(out).empty()) return Status::InvalidInput("Partition filter is empty");
  return out;
}

std::string PartialSpecExpression(const std::vector<std::string>& keys,
                                  const std::vector<std::string>& values) {
  std::string out;
  for (size_t i = 0; i < keys.size() && i < values.size(); ++i) {
    if (values[i].empty()) continue;
    if (!out.empty()) out += " AND ";
    out += Quoted(keys[i], '`') + " = " + Quoted(values[i], '\'');
  }
  return out;
}

}  // namespace openglue::hms
