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

  // Applies one `key = value` setting. InvalidInput names the key on a bad value or key.
  Status Set(const std::string& key, const std::string& value);
};

// Reads `path` as a config file into `config`. InvalidInput names the file and line.
Status LoadConfigFile(const std::string& path, ServerConfig* config);
// Applies OPENGLUE_* variables from `environ`-style entries ("NAME=value").
Status ApplyEnvironment(const std::vector<std::string>& environment, ServerConfig* config);

}  // namespace openglue
