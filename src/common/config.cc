#include "common/config.h"

#include <fstream>
#include <sstream>

#include "common/strings.h"

#ifndef OPENGLUE_DEFAULT_PYTHON
#define OPENGLUE_DEFAULT_PYTHON "python3"
#endif

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

// Setter builders, so that most table entries are one line.
template <std::string ServerConfig::*field>
Status SetString(ServerConfig* config, const std::string& value) {
  config->*field = value;
  return Status::OK();
}

// The key's name for messages is looked up by field, so the entry need not repeat it.
const char* NameOf(Status (*set)(ServerConfig*, const std::string&));

template <int ServerConfig::*field, int kMin, int kMax>
Status SetInt(ServerConfig* config, const std::string& value) {
  return ParseInt(NameOf(&SetInt<field, kMin, kMax>), value, kMin, kMax, &(config->*field));
}

Status SetAccessKeyId(ServerConfig* config, const std::string& value) {
  std::string secret = config->credentials.empty() ? "" : config->credentials.begin()->second;
  config->credentials.clear();
  config->credentials[value] = secret;
  return Status::OK();
}

Status SetSecretAccessKey(ServerConfig* config, const std::string& value) {
  std::string id = config->credentials.empty() ? "test" : config->credentials.begin()->first;
  config->credentials.clear();
  config->credentials[id] = value;
  return Status::OK();
}

Status AddCredentials(ServerConfig* config, const std::string& value) {
  size_t colon = value.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == value.size())
    return Status::InvalidInput("config 'credentials' must be ACCESS_KEY_ID:SECRET");
  config->credentials[value.substr(0, colon)] = value.substr(colon + 1);
  return Status::OK();
}

Status SetLogLevel(ServerConfig* config, const std::string& value) {
  if (value != "debug" && value != "info" && value != "warn" && value != "error")
    return Status::InvalidInput("config 'log_level' must be debug, info, warn or error");
  config->log_level = value;
  return Status::OK();
}

Status SetAuth(ServerConfig* config, const std::string& value) {
  if (value == "sigv4") config->require_auth = true;
  else if (value == "none") config->require_auth = false;
  else return Status::InvalidInput("config 'auth' must be sigv4 or none");
  return Status::OK();
}

// "RoleName: pattern, pattern": the role ends at the first ':' (IAM role names hold no ':').
Status AddRolePolicy(ServerConfig* config, const std::string& value) {
  size_t colon = value.find(':');
  std::string role = colon == std::string::npos ? "" : Trim(value.substr(0, colon));
  if (role.empty())
    return Status::InvalidInput(
        "config 'role_policy' must be 'RoleName: service:Action, service:Action*, ...'");
  std::vector<std::string> patterns;
  for (const std::string& raw : Split(value.substr(colon + 1), ',')) {
    std::string pattern = Trim(raw);
    if (pattern.empty()) continue;
    // "service:Action" or, for s3:, "s3:Action resource resource ..." (api/authorizer.h).
    size_t blank = pattern.find_first_of(" \t");
    std::string action = pattern.substr(0, blank);
    size_t sep = action.find(':');
    if (sep == std::string::npos || sep == 0 || sep + 1 == action.size())
      return Status::InvalidInput("config 'role_policy' for role '" + role + "': '" + pattern +
                                  "' is not an action pattern like glue:GetTable or glue:Get*");
    if (blank != std::string::npos) {
      if (action.compare(0, 3, "s3:") != 0)
        return Status::InvalidInput("config 'role_policy' for role '" + role + "': '" + pattern +
                                    "': only s3: actions name resources");
      std::istringstream resources(pattern.substr(blank));
      for (std::string resource; resources >> resource;) {
        if (resource != "*" && resource.compare(0, 13, "arn:aws:s3:::") != 0 &&
            resource.compare(0, 5, "s3://") != 0)
          return Status::InvalidInput("config 'role_policy' for role '" + role + "': resource '" +
                                      resource + "' is not an S3 ARN (arn:aws:s3:::bucket/key*) or "
                                      "s3://bucket/key*");
      }
    }
    patterns.push_back(pattern);
  }
  if (patterns.empty())
    return Status::InvalidInput("config 'role_policy' for role '" + role + "' lists no actions");
  auto& list = config->role_policies[role];
  list.insert(list.end(), patterns.begin(), patterns.end());
  return Status::OK();
}

Status SetHmsAllowRemote(ServerConfig* config, const std::string& value) {
  if (value == "yes" || value == "true") config->hms_allow_remote = true;
  else if (value == "no" || value == "false") config->hms_allow_remote = false;
  else return Status::InvalidInput("config 'hms_allow_remote' must be yes or no");
  return Status::OK();
}

Status SetJobUser(ServerConfig* config, const std::string& value) {
  if (value.empty()) return Status::InvalidInput("config 'job_user' must be auto, none or a user name");
  config->job_user = value;
  return Status::OK();
}

Status SetJobCgroup(ServerConfig* config, const std::string& value) {
  if (value != "auto" && value != "off")
    return Status::InvalidInput("config 'job_cgroup' must be auto or off");
  config->job_cgroup = value;
  return Status::OK();
}

Status CheckJobUids(const ServerConfig& config) {
  if (config.job_uid_base + config.job_uid_count > 4294967294LL)
    return Status::InvalidInput("config 'job_uid_base' + 'job_uid_count' must stay below 2^32 - 1");
  return Status::OK();
}

Status SetJobUidBase(ServerConfig* config, const std::string& value) {
  int v = 0;
  OG_RETURN_NOT_OK(ParseInt("job_uid_base", value, 1, 2000000000, &v));
  config->job_uid_base = v;
  return CheckJobUids(*config);
}

Status SetJobUidCount(ServerConfig* config, const std::string& value) {
  int v = 0;
  OG_RETURN_NOT_OK(ParseInt("job_uid_count", value, 1, 2000000000, &v));
  config->job_uid_count = v;
  return CheckJobUids(*config);
}

Status SetServerKey(ServerConfig* config, const std::string& value) {
  if (value.size() < 32)
    return Status::InvalidInput("config 'server_key' must be at least 32 characters");
  config->server_key = value;
  return Status::OK();
}

Status SetS3Api(ServerConfig* config, const std::string& value) {
  if (value != "auto" && value != "on" && value != "off")
    return Status::InvalidInput("config 's3_api' must be auto, on or off");
  config->s3_api = value;
  return Status::OK();
}

using S = ServerConfig;

// THE list of configuration keys. One entry per key:
//   {name, value placeholder, default (nullptr = none), help, setter}
// The file key is `name`, the environment variable OPENGLUE_<NAME>, the flag --<name-with-dashes>.
// A function-local static: safe to use from other translation units' static initializers.
const std::vector<ConfigKey>& Table() {
  static const std::vector<ConfigKey> kConfigKeys = {
    {"host", "ADDR", "127.0.0.1", "listen address", SetString<&S::host>},
    {"port", "N", "4690", "listen port, 0 = any free", SetInt<&S::port, 0, 65535>},
    {"data_dir", "DIR", "./openglue-data", "where everything is kept", SetString<&S::data_dir>},
    {"access_key_id", "ID", "test", "accepted SigV4 access key", SetAccessKeyId},
    {"secret_access_key", "SECRET", "test", "its secret", SetSecretAccessKey, kSecret},
    {"credentials", "ID:SECRET", nullptr,
     "one more accepted key pair (repeat the line in the config file)", AddCredentials, kSecret},
    {"region", "NAME", "us-east-1", "region in ARNs", SetString<&S::region>},
    {"account_id", "ID", "000000000000", "default CatalogId", SetString<&S::account_id>},
    {"log_level", "LEVEL", "info", "debug|info|warn|error", SetLogLevel},
    {"max_clock_skew_seconds", "N", "900", "allowed request clock skew",
     SetInt<&S::max_clock_skew_seconds, 1, 7 * 24 * 3600>},
    {"http_threads", "N", "64",
     "threads that handle requests (connections are served by\n"
     "one event loop, however many there are)", SetInt<&S::http_threads, 2, 4096>},
    {"http_header_timeout_seconds", "N", "10", "time to send a request's headers, from the first byte",
     SetInt<&S::http_header_timeout_seconds, 1, 3600>},
    {"http_body_timeout_seconds", "N", "60", "time to send a request's body once its headers are in",
     SetInt<&S::http_body_timeout_seconds, 1, 3600>},
    {"http_keepalive_timeout_seconds", "N", "30", "an idle connection is closed after this",
     SetInt<&S::http_keepalive_timeout_seconds, 1, 3600>},
    {"http_max_connections_per_client", "N", "4096",
     "connections from one IP address; at the cap the\n"
     "oldest idle one is closed, else the new one refused",
     SetInt<&S::http_max_connections_per_client, 1, 1 << 20>},
    {"http_max_body_bytes", "N", "16777216", "largest request body accepted",
     SetInt<&S::http_max_body_bytes, 1024, 1 << 30>},
    {"auth", "sigv4|none", "sigv4", "request authentication", SetAuth},
    {"port_file", "FILE", nullptr, "write the bound port here once listening",
     SetString<&S::port_file>},
    {"python", "PATH", OPENGLUE_DEFAULT_PYTHON, "interpreter for job scripts",
     SetString<&S::python>},
    {"runtime_path", "DIR", nullptr,
     "the awsglue runtime, put on job scripts' PYTHONPATH\n"
     "[default: the source tree's python/]", SetString<&S::runtime_path>},
    {"spark_master", "URL", "local[*]",
     "Spark master of jobs on the Spark engine (a run's\n--spark-master wins)",
     SetString<&S::spark_master>},
    {"max_concurrent_runs", "N", "16", "job runs running at once, server-wide; more wait",
     SetInt<&S::max_concurrent_runs, 1, 10000>},
    {"bookmark_history_limit", "N", "1000",
     "job bookmark history rows kept per job (older states are\nno longer addressable by RunId), 0 = all",
     SetInt<&S::bookmark_history_limit, 0, 1000000>},
    {"log_retention_days", "N", "30", "keep job-run logs this long, 0 = forever",
     SetInt<&S::log_retention_days, 0, 36500>},
    {"python_modules_retention_days", "N", "30",
     "remove an --additional-python-modules environment no run\nused for this long, 0 = never",
     SetInt<&S::python_modules_retention_days, 0, 36500>},
    {"store_max_readers", "N", "0", "metadata store reader connections, 0 = 2 x cores",
     SetInt<&S::store_max_readers, 0, 1024>},
    {"store_reader_idle_seconds", "N", "60", "close a reader idle this long",
     SetInt<&S::store_reader_idle_seconds, 0, 24 * 3600>},
    {"role_policy", "ROLE:ACTIONS", nullptr,
     "what run credentials of jobs with ROLE may call, as IAM action\n"
     "patterns: `Role: glue:Get*, logs:*` (repeat the line per role);\n"
     "s3: actions may name resources: `s3:PutObject s3://lake/out/*`;\n"
     "other roles get the default run policy (docs/security.md)", AddRolePolicy},
    {"job_user", "auto|none|USER", "auto",
     "who job processes run as: auto = a distinct unprivileged uid\n"
     "per run when the server runs as root", SetJobUser},
    {"job_uid_base", "N", "1000000000",
     "auto: the object store's group is gid N, runs get uids\n"
     "N+1 .. N+job_uid_count", SetJobUidBase},
    {"job_uid_count", "N", "1000000", "how many run uids job_user=auto cycles through",
     SetJobUidCount},
    {"job_cgroup", "auto|off", "auto",
     "auto: a cgroup per run when a writable cgroup v2 is found;\n"
     "off: contain runs by process group (and by uid, job_user=auto)", SetJobCgroup},
    {"s3_api", "auto|on|off", "auto",
     "serve <data_dir>/s3 over the S3 API (versitygw); auto = when\n"
     "the binary is found", SetS3Api},
    {"s3_api_port", "N", "0",
     "the S3 API's port; 0 = the server's port + 1 (a free port\n"
     "when the server's port is 0)", SetInt<&S::s3_api_port, 0, 65535>},
    {"s3_api_binary", "PATH", nullptr,
     "the versitygw executable [default: next to the build's\n"
     "python (make deps puts it there), else on PATH]", SetString<&S::s3_api_binary>},
    {"s3_endpoint", "URL", nullptr,
     "an S3-compatible endpoint (http(s)://host[:port]) for the s3://\n"
     "locations the server reads (job scripts, --extra-py-files);\n"
     "unset = the embedded store <data_dir>/s3", SetString<&S::s3_endpoint>},
    {"s3_access_key_id", "ID", nullptr, "access key for s3_endpoint", SetString<&S::s3_access_key_id>},
    {"s3_secret_access_key", "SECRET", nullptr, "its secret", SetString<&S::s3_secret_access_key>,
     kSecret},
    {"s3_region", "NAME", nullptr, "region of s3_endpoint [default: region]",
     SetString<&S::s3_region>},
    {"server_key", "KEY", nullptr,
     "key run secrets are derived from, 32+ characters\n"
     "[default: <data_dir>/server.key, made on first start]", SetServerKey, kSecret},
    {"connection_key_file", "FILE", nullptr,
     "32-byte key file that encrypts connection passwords at rest (must exist)\n"
     "[default: <data_dir>/connection.key, made on first start]",
     SetString<&S::connection_key_file>},
    {"hms_port", "N", "0",
     "serve the catalog as a Hive Metastore (Thrift) on this port\n"
     "for Spark, Hive, Trino; 0 = off (docs/metastore.md)", SetInt<&S::hms_port, 0, 65535>},
    {"hms_host", "ADDR", "127.0.0.1", "the Hive Metastore's listen address",
     SetString<&S::hms_host>},
    {"hms_allow_remote", "yes|no", "no",
     "let the metastore listen on a non-loopback hms_host: remote clients are\n"
     "not authenticated and may change the whole catalog (docs/security.md)", SetHmsAllowRemote},
    {"hms_message_timeout_seconds", "N", "30",
     "a metastore message must arrive within this of its first byte",
     SetInt<&S::hms_message_timeout_seconds, 1, 3600>},
  };
  return kConfigKeys;
}

const char* NameOf(Status (*set)(ServerConfig*, const std::string&)) {
  for (const ConfigKey& key : Table())
    if (key.set == set) return key.name;
  return "?";
}

std::string Normalize(const std::string& key) {
  std::string out = key;
  for (char& c : out) if (c == '-') c = '_';
  return out;
}

}  // namespace

const std::vector<ConfigKey>& ConfigKeys() { return Table(); }

const char* BuildPython() { return OPENGLUE_DEFAULT_PYTHON; }

const ConfigKey* FindConfigKey(const std::string& raw_key) {
  std::string key = Normalize(raw_key);
  for (const ConfigKey& entry : Table())
    if (key == entry.name) return &entry;
  return nullptr;
}

std::string EnvironmentName(const ConfigKey& key) {
  std::string out = "OPENGLUE_";
  for (const char* c = key.name; *c; ++c) out += static_cast<char>(std::toupper(*c));
  return out;
}

std::string FlagName(const ConfigKey& key) {
  std::string out = "--";
  for (const char* c = key.name; *c; ++c) out += *c == '_' ? '-' : *c;
  return out;
}

std::string ConfigHelp() {
  std::ostringstream out;
  constexpr size_t kColumn = 34;
  for (const ConfigKey& key : Table()) {
    std::string head = key.secret ? std::string("  (") + key.name + ")"
                                  : "  " + FlagName(key) + " " + key.value_name;
    std::string help = key.help;
    if (key.default_value && *key.default_value) help += std::string(" [") + key.default_value + "]";
    if (key.secret)
      help += "\n    (a secret: never a flag; env " + EnvironmentName(key) + " or file `" + key.name +
              " = ...`)";
    else
      help += "\n    (env " + EnvironmentName(key) + ", file `" + key.name + " = ...`)";
    std::istringstream lines(help);
    std::string line;
    bool first = true;
    while (std::getline(lines, line)) {
      if (first) {
        out << head;
        if (head.size() + 1 < kColumn) out << std::string(kColumn - head.size(), ' ');
        else out << "\n" << std::string(kColumn, ' ');
        first = false;
      } else {
        out << std::string(kColumn, ' ');
      }
      out << line << "\n";
    }
  }
  return out.str();
}

ServerConfig::ServerConfig() {
  for (const ConfigKey& key : Table()) {
    // Defaults are checked by config_test (each one passes its own setter).
    if (key.default_value) (void)key.set(this, key.default_value);
  }
}

Status ServerConfig::Set(const std::string& raw_key, const std::string& value) {
  if (const ConfigKey* entry = FindConfigKey(raw_key)) return entry->set(this, value);
  return Status::InvalidInput("unknown config key '" + raw_key + "'");
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
  for (const ConfigKey& key : Table()) {
    std::string prefix = EnvironmentName(key) + "=";
    for (const std::string& entry : environment) {
      if (!StartsWith(entry, prefix)) continue;
      Status st = key.set(config, entry.substr(prefix.size()));
      if (!st.ok())
        return Status::InvalidInput("environment " + EnvironmentName(key) + ": " + st.message());
    }
  }
  return Status::OK();
}

}  // namespace openglue
