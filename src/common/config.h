// Server configuration: defaults, then a config file, then environment variables, then flags.
//
// Every key is one entry of the table in config.cc (ConfigKeys()). From that entry come:
//   - the config file key:      `name = value` lines in the file (`#` starts a comment);
//   - the environment variable: OPENGLUE_<NAME upper-cased>  (EnvironmentName);
//   - the command-line flag:    --<name with '-' for '_'>    (FlagName);
//   - the default, applied by ServerConfig's constructor through the key's own setter;
//   - the key's lines in `openglue serve --help`            (ConfigHelp).
// `openglue serve --help` prints the whole list. Adding a key = adding a field below and one
// entry to the table. Secrets (ConfigKey::secret) come from the file or the environment only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace openglue {

struct ServerConfig {
  // Every field is set from its key's default (the table in config.cc) by the constructor.
  ServerConfig();

  std::string host;
  int port = 0;  // 0 = pick a free port
  std::string data_dir;
  // access key id -> secret access key. Several pairs may be configured in the file as
  // `credentials = KEY:SECRET` lines.
  std::map<std::string, std::string> credentials;
  std::string region;
  std::string account_id;
  std::string log_level;
  int max_clock_skew_seconds = 0;
  int http_threads = 0;
  // Limits on HTTP clients (api/http_server.h): time to send a request's head (from its first
  // byte) and body (from the head's end), idle keep-alive time, connections per client IP
  // address, and the largest request body (16 MiB: far above any real Glue request, whose
  // largest, a 100-partition BatchCreatePartition or an UpdateTable with thousands of columns,
  // stays in the low MiB).
  int http_header_timeout_seconds = 0;
  int http_body_timeout_seconds = 0;
  int http_keepalive_timeout_seconds = 0;
  int http_max_connections_per_client = 0;
  int http_max_body_bytes = 0;
  bool require_auth = true;
  // When set, the server writes the port it listens on to this file once it is ready.
  std::string port_file;
  // Job runs: the interpreter (default: the Python the server was built with, i.e. the
  // checkout's .venv when built by `make`), the awsglue runtime on PYTHONPATH, the server-wide
  // limit on concurrently running job runs (the rest wait), and how long run logs are kept
  // (0 = forever).
  std::string python;
  std::string runtime_path;
  // Where jobs on the Spark engine run (a Spark master URL: local[*], spark://host:7077, yarn,
  // k8s://...), unless a run's --spark-master says otherwise. "" means local[*].
  std::string spark_master;
  int max_concurrent_runs = 0;
  int bookmark_history_limit = 0;
  int log_retention_days = 0;
  // --additional-python-modules: an environment not used by any run for this many days is
  // removed from <data_dir>/python-modules (0 = kept forever).
  int python_modules_retention_days = 0;
  // Metadata store (SQLite): the most reader connections open at once (0 = 2 x cores, at least
  // 4) and how long an idle one is kept before it is closed.
  int store_max_readers = 0;
  int store_reader_idle_seconds = 0;
  // Job-run credentials: Role name -> allowed action patterns (`role_policy = Role: glue:Get*,
  // logs:*` lines, repeatable). Roles not listed get the default policy (api/authorizer.h).
  std::map<std::string, std::vector<std::string>> role_policies;
  // Who job processes run as: "auto" (a distinct unprivileged uid per run when the server runs
  // as root, else the server's own user), "none" (the server's user), or a user name.
  std::string job_user;
  // With "auto": the object store's shared group is gid job_uid_base; runs get uids
  // job_uid_base + 1 .. job_uid_base + job_uid_count (no /etc/passwd entries needed).
  int64_t job_uid_base = 0;
  int64_t job_uid_count = 0;
  // "auto": each run's processes in a cgroup of their own when a writable cgroup v2 is found;
  // "off": never (containment by process group, and by the run's own uid with job_user=auto).
  std::string job_cgroup;
  // The S3 API over the embedded store (storage/s3_api_server.h): "auto" (on when the binary is
  // found), "on" (the server does not start without it) or "off"; its port (0 = the server's
  // port + 1, or a free port when that is 0) and the versitygw binary (empty = `versitygw` next
  // to the build's Python, else on PATH).
  std::string s3_api;
  int s3_api_port = 0;
  std::string s3_api_binary;
  // An S3-compatible endpoint (storage/s3_object_store.h) for the s3:// locations the server
  // itself reads (job scripts, --extra-py-files, --extra-files); empty = the embedded store.
  std::string s3_endpoint;
  std::string s3_access_key_id;
  std::string s3_secret_access_key;
  std::string s3_region;  // empty = `region`
  // Key from which run secrets are derived; empty = <data_dir>/server.key (made on first start).
  std::string server_key;
  // The Hive Metastore front end over the catalog (hms/hms_server.h): its port (0 = off) and
  // listen address. A non-loopback address needs hms_allow_remote: the metastore does not
  // authenticate remote clients (docs/security.md).
  int hms_port = 0;
  std::string hms_host = "127.0.0.1";
  bool hms_allow_remote = false;
  int hms_message_timeout_seconds = 30;  // a message's bytes must arrive within this of its first
  // Key file (exactly 32 bytes) that encrypts connection passwords at rest (catalog/
  // connection_cipher.h); empty = <data_dir>/connection.key, made on first start. A configured
  // file must exist.
  std::string connection_key_file;

  // Applies one `key = value` setting (key with '_' or '-'). InvalidInput names the key on a
  // bad value; an unknown key gives InvalidInput starting with "unknown config key".
  Status Set(const std::string& key, const std::string& value);
};

// One configuration key. All names (file, environment, flag) derive from `name`.
struct ConfigKey {
  const char* name;           // config-file key, snake_case: "max_concurrent_runs"
  const char* value_name;     // the value's placeholder in --help: "N", "DIR"
  const char* default_value;  // applied by ServerConfig(); nullptr = no default (left empty)
  const char* help;           // one line (or more, '\n'-separated) for --help
  Status (*set)(ServerConfig* config, const std::string& value);
  // A secret (secret_access_key, credentials, server_key): refused as a command-line flag,
  // since every process on the machine can read a command line (/proc/<pid>/cmdline).
  bool secret = false;
};
inline constexpr bool kSecret = true;

// The table, in --help order.
const std::vector<ConfigKey>& ConfigKeys();
// The entry for `key` ('-' and '_' are the same), or nullptr.
const ConfigKey* FindConfigKey(const std::string& key);
// "OPENGLUE_MAX_CONCURRENT_RUNS" for "max_concurrent_runs".
std::string EnvironmentName(const ConfigKey& key);
// "--max-concurrent-runs" for "max_concurrent_runs".
std::string FlagName(const ConfigKey& key);
// The options part of `openglue serve --help`: one entry per key, with its default.
std::string ConfigHelp();

// The Python interpreter the build baked in as `python`'s default (the venv's, under `make`).
const char* BuildPython();

// Reads `path` as a config file into `config`. InvalidInput names the file and line.
Status LoadConfigFile(const std::string& path, ServerConfig* config);
// Applies OPENGLUE_* variables from `environ`-style entries ("NAME=value"). Only the table's
// keys are read; other OPENGLUE_* variables (OPENGLUE_BIN, the job runtime's) are not ours.
Status ApplyEnvironment(const std::vector<std::string>& environment, ServerConfig* config);

}  // namespace openglue
