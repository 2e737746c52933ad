#include "common/config.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "common/strings.h"

namespace openglue {
namespace {

Status ParseInt(const std::string& key, const std::string& value, int min, int max, int* out) {
  try {
    size_t used = 0;
    long v = std::stol(value, &used);
    if (used != value.size() || v < min || v > max) throw std::out_of_range(key);
    *out = static_cast<int>(v);
    return Status::OK();
  } catch (const std::exception&) {
    return Status::InvalidInput("config '" + key + "' must be an integer from " +
                                std::to_string(min) + " to " + std::to_string(max) + ", got '" +
                                value + "'");
  }
}

// The keys ApplyEnvironment takes from OPENGLUE_<KEY> variables (config.h's table).
const char* const kEnvironmentKeys[] = {
    "host", "port", "data_dir", "access_key_id", "secret_access_key", "credentials", "region",
    "account_id", "log_level", "max_clock_skew_seconds", "http_threads", "http_header_timeout_seconds",
    "http_body_timeout_seconds", "http_keepalive_timeout_seconds",
    "http_max_connections_per_client", "http_max_body_bytes", "auth", "port_file",
    "python", "runtime_path", "max_concurrent_runs", "log_retention_days", "store_max_readers",
    "store_reader_idle_seconds", "job_user", "job_uid_base", "job_uid_count", "server_key"};

// "RoleName: pattern, pattern": the role ends at the first ':' (IAM role names hold no ':').
Status ParseRolePolicy(const std::string& value,
                       std::map<std::string, std::vector<std::string>>* policies) {
  size_t colon = value.find(':');
  std::string role = colon == std::string::npos ? "" : Trim(value.substr(0, colon));
  if (role.empty())
    return Status::InvalidInput(
        "config 'role_policy' must be 'RoleName: service:Action, service:Action*, ...'");
  std::vector<std::string> patterns;
  for (const std::string& raw : Split(value.substr(colon + 1), ',')) {
    std::string pattern = Trim(raw);
    if (pattern.empty()) continue;
    size_t sep = pattern.find(':');
    if (sep == std::string::npos || sep == 0 || sep + 1 == pattern.size())
      return Status::InvalidInput("config 'role_policy' for role '" + role + "': '" + pattern +
                                  "' is not an action pattern like glue:GetTable or glue:Get*");
    patterns.push_back(pattern);
  }
  if (patterns.empty())
    return Status::InvalidInput("config 'role_policy' for role '" + role + "' lists no actions");
  auto& list = (*policies)[role];
  list.insert(list.end(), patterns.begin(), patterns.end());
  return Status::OK();
}

}  // namespace

Status ServerConfig::Set(const std::string& raw_key, const std::string& value) {
  std::string key = raw_key;
  for (char& c : key) if (c == '-') c = '_';
  if (key == "host") host = value;
  else if (key == "port") return ParseInt(key, value, 0, 65535, &port);
  else if (key == "data_dir") data_dir = value;
  else if (key == "access_key_id") {
    std::string secret = credentials.empty() ? "" : credentials.begin()->second;
    credentials.clear();
    credentials[value] = secret;
  } else if (key == "secret_access_key") {
    std::string id = credentials.empty() ? "test" : credentials.begin()->first;
    credentials.clear();
    credentials[id] = value;
  } else if (key == "credentials") {
    size_t colon = value.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == value.size())
      return Status::InvalidInput("config 'credentials' must be ACCESS_KEY_ID:SECRET");
    credentials[value.substr(0, colon)] = value.substr(colon + 1);
  } else if (key == "region") region = value;
  else if (key == "account_id") account_id = value;
  else if (key == "log_level") {
    if (value != "debug" && value != "info" && value != "warn" && value != "error")
      return Status::InvalidInput("config 'log_level' must be debug, info, warn or error");
    log_level = value;
  } else if (key == "max_clock_skew_seconds") {
    return ParseInt(key, value, 1, 7 * 24 * 3600, &max_clock_skew_seconds);
  } else if (key == "http_threads") {
    return ParseInt(key, value, 2, 4096, &http_threads);
  } else if (key == "http_header_timeout_seconds") {
    return ParseInt(key, value, 1, 3600, &http_header_timeout_seconds);
  } else if (key == "http_body_timeout_seconds") {
    return ParseInt(key, value, 1, 3600, &http_body_timeout_seconds);
  } else if (key == "http_keepalive_timeout_seconds") {
    return ParseInt(key, value, 1, 3600, &http_keepalive_timeout_seconds);
  } else if (key == "http_max_connections_per_client") {
    return ParseInt(key, value, 1, 1 << 20, &http_max_connections_per_client);
  } else if (key == "http_max_body_bytes") {
    return ParseInt(key, value, 1024, 1 << 30, &http_max_body_bytes);
  } else if (key == "auth") {
    if (value == "sigv4") require_auth = true;
    else if (value == "none") require_auth = false;
    else return Status::InvalidInput("config 'auth' must be sigv4 or none");
  } else if (key == "port_file") port_file = value;
  else if (key == "python") python = value;
  else if (key == "runtime_path") runtime_path = value;
  else if (key == "max_concurrent_runs") return ParseInt(key, value, 1, 10000, &max_concurrent_runs);
  else if (key == "log_retention_days") return ParseInt(key, value, 0, 36500, &log_retention_days);
  else if (key == "store_max_readers") return ParseInt(key, value, 0, 1024, &store_max_readers);
  else if (key == "store_reader_idle_seconds")
    return ParseInt(key, value, 0, 24 * 3600, &store_reader_idle_seconds);
  else if (key == "role_policy") return ParseRolePolicy(value, &role_policies);
  else if (key == "job_user") {
    if (value.empty()) return Status::InvalidInput("config 'job_user' must be auto, none or a user name");
    job_user = value;
  } else if (key == "job_uid_base" || key == "job_uid_count") {
    int v = 0;
    OG_RETURN_NOT_OK(ParseInt(key, value, 1, 2000000000, &v));
    (key == "job_uid_base" ? job_uid_base : job_uid_count) = v;
    if (job_uid_base + job_uid_count > 4294967294LL)
      return Status::InvalidInput("config 'job_uid_base' + 'job_uid_count' must stay below 2^32 - 1");
  } else if (key == "server_key") {
    if (value.size() < 32) return Status::InvalidInput("config 'server_key' must be at least 32 characters");
    server_key = value;
  }
  else return Status::InvalidInput("unknown config key '" + raw_key + "'");
  return Status::OK();
}

Status LoadConfigFile(const std::string& path, ServerConfig* config) {
  std::ifstream in(path);
  if (!in) return Status::InvalidInput("cannot read config file '" + path + "'");
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string text = Trim(line);
    if (text.empty() || text[0] == '#') continue;
    size_t eq = text.find('=');
    if (eq == std::string::npos)
      return Status::InvalidInput(path + ":" + std::to_string(number) + ": expected key = value");
    Status st = config->Set(Trim(text.substr(0, eq)), Trim(text.substr(eq + 1)));
    if (!st.ok())
      return Status::InvalidInput(path + ":" + std::to_string(number) + ": " + st.message());
  }
  return Status::OK();
}

Status ApplyEnvironment(const std::vector<std::string>& environment, ServerConfig* config) {
  static const char* kPrefix = "OPENGLUE_";
  for (const std::string& entry : environment) {
    if (!StartsWith(entry, kPrefix)) continue;
    size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    std::string key = ToLower(entry.substr(9, eq - 9));
    if (key == "config") continue;  // the file itself is chosen by the caller
    // Other programs share the OPENGLUE_ prefix (the test suite's OPENGLUE_BIN, the job
    // runtime's variables): only the server's own keys are applied, the rest are not ours.
    if (std::find(std::begin(kEnvironmentKeys), std::end(kEnvironmentKeys), key) ==
        std::end(kEnvironmentKeys))
      continue;
    Status st = config->Set(key, entry.substr(eq + 1));
    if (!st.ok()) return Status::InvalidInput("environment " + entry.substr(0, eq) + ": " + st.message());
  }
  return Status::OK();
}

}  // namespace openglue
