// Server configuration: defaults, then a config file, then environment variables, then flags.
//
// The config file is plain `key = value` lines (`#` starts a comment). Keys, environment
// variables and flags share one vocabulary:
//
//   key             env                          flag              default
//   host            OPENGLUE_HOST                --host            127.0.0.1
//   port            OPENGLUE_PORT                --port            4690 (0 = pick a free port)
//   data_dir        OPENGLUE_DATA_DIR            --data-dir        ./openglue-data
//   access_key_id   OPENGLUE_ACCESS_KEY_ID       --access-key-id   test
//   secret_access_key OPENGLUE_SECRET_ACCESS_KEY --secret-access-key test
//   region          OPENGLUE_REGION              --region          us-east-1
//   account_id      OPENGLUE_ACCOUNT_ID          --account-id      000000000000
//   log_level       OPENGLUE_LOG_LEVEL           --log-level       info
//   max_clock_skew_seconds OPENGLUE_MAX_CLOCK_SKEW_SECONDS --max-clock-skew-seconds 900
//   http_threads    OPENGLUE_HTTP_THREADS        --http-threads    64 (request handlers)
//   http_header_timeout_seconds      ...          --http-header-timeout-seconds 10
//   http_body_timeout_seconds        ...          --http-body-timeout-seconds 60
//   http_keepalive_timeout_seconds   ...          --http-keepalive-timeout-seconds 30
//   http_max_connections_per_client  ...          --http-max-connections-per-client 4096
//   http_max_body_bytes              ...          --http-max-body-bytes 16777216
//   auth            OPENGLUE_AUTH                --auth            sigv4 (or "none")
//   port_file       OPENGLUE_PORT_FILE           --port-file       (unset)
//   python          OPENGLUE_PYTHON              --python          python3
//   runtime_path    OPENGLUE_RUNTIME_PATH        --runtime-path    (the source tree's python/)
//   max_concurrent_runs OPENGLUE_MAX_CONCURRENT_RUNS --max-concurrent-runs 16
//   log_retention_days OPENGLUE_LOG_RETENTION_DAYS --log-retention-days 30
//   store_max_readers OPENGLUE_STORE_MAX_READERS --store-max-readers 0 (= 2 x cores, at least 4)
//   store_reader_idle_seconds OPENGLUE_STORE_READER_IDLE_SECONDS --store-reader-idle-seconds 60
//   role_policy     (file only, repeatable)      --                (DefaultRunPolicy per Role)
//   job_user        OPENGLUE_JOB_USER            --job-user        auto
//   job_uid_base    OPENGLUE_JOB_UID_BASE        --job-uid-base    1000000000
//   job_uid_count   OPENGLUE_JOB_UID_COUNT       --job-uid-count   1000000
//   server_key      OPENGLUE_SERVER_KEY          (never a flag)    (<data_dir>/server.key)
//
// Secrets (secret_access_key, credentials, server_key) are refused as flags: a command line is
// readable by every process on the machine (/proc/<pid>/cmdline). Main enforces it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace openglue {

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 4690;
  std::string data_dir = "./openglue-data";
  // access key id -> secret access key. Several pairs may be configured in the file as
  // `credentials = KEY:SECRET` lines.
  std::map<std::string, std::string> credentials = {{"test", "test"}};
  std::string region = "us-east-1";
  std::string account_id = "000000000000";
  std::string log_level = "info";
  int max_clock_skew_seconds = 900;
  int http_threads = 64;
  // Limits on HTTP clients (api/http_server.h): time to send a request's head (from its first
  // byte) and body (from the head's end), idle keep-alive time, connections per client IP
  // address, and the largest request body (16 MiB: far above any real Glue request, whose
  // largest, a 100-partition BatchCreatePartition or an UpdateTable with thousands of columns,
  // stays in the low MiB).
  int http_header_timeout_seconds = 10;
  int http_body_timeout_seconds = 60;
  int http_keepalive_timeout_seconds = 30;
  int http_max_connections_per_client = 4096;
  int http_max_body_bytes = 16 << 20;
  bool require_auth = true;
  // When set, the server writes the port it listens on to this file once it is ready.
  std::string port_file;
  // Job runs: the interpreter, the awsglue runtime on PYTHONPATH, the server-wide limit on
  // concurrently running job runs (the rest wait), and how long run logs are kept (0 = forever).
  std::string python = "python3";
  std::string runtime_path;
  int max_concurrent_runs = 16;
  int log_retention_days = 30;
  // Metadata store (SQLite): the most reader connections open at once (0 = 2 x cores, at least
  // 4) and how long an idle one is kept before it is closed.
  int store_max_readers = 0;
  int store_reader_idle_seconds = 60;
  // Job-run credentials: Role name -> allowed action patterns (`role_policy = Role: glue:Get*,
  // logs:*` lines, repeatable). Roles not listed get the default policy (api/authorizer.h).
  std::map<std::string, std::vector<std::string>> role_policies;
  // Who job processes run as: "auto" (a distinct unprivileged uid per run when the server runs
  // as root, else the server's own user), "none" (the server's user), or a user name.
  std::string job_user = "auto";
  // With "auto": the object store's shared group is gid job_uid_base; runs get uids
  // job_uid_base + 1 .. job_uid_base + job_uid_count (no /etc/passwd entries needed).
  int64_t job_uid_base = 1000000000;
  int64_t job_uid_count = 1000000;
  // Key from which run secrets are derived; empty = <data_dir>/server.key (made on first start).
  std::string server_key;

  // Applies one `key = value` setting. InvalidInput names the key on a bad value or key.
  Status Set(const std::string& key, const std::string& value);
};

// Reads `path` as a config file into `config`. InvalidInput names the file and line.
Status LoadConfigFile(const std::string& path, ServerConfig* config);
// Applies OPENGLUE_* variables from `environ`-style entries ("NAME=value").
Status ApplyEnvironment(const std::vector<std::string>& environment, ServerConfig* config);

}  // namespace openglue
