// openglue: wiring only. Parses the command line and configuration, builds the store, the
// catalog and the API, and serves until SIGINT or SIGTERM.
#include <atomic>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <grp.h>
#include <sys/prctl.h>
#include <set>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "api/authorizer.h"
#include "api/bookmark_operations.h"
#include "api/connection_operations.h"
#include "api/http_server.h"
#include "api/identity_operations.h"
#include "api/quality_operations.h"
#include "api/router.h"
#include "api/run_secrets.h"
#include "api/service_model.h"
#include "api/workflow_operations.h"
#include "bookmarks/bookmark_service.h"
#include "catalog/catalog.h"
#include "crawler/crawler_service.h"
#include "hms/hms_server.h"
#include "quality/quality_service.h"
#include "logs/layout.h"
#include "resource/tags.h"
#include "schedule/scheduler.h"
#include "jobs/job_service.h"
#include "jobs/process_launcher.h"
#include "jobs/module_environments.h"
#include "jobs/run_output.h"
#include "logs/log_store.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/logging.h"
#include "common/random.h"
#include "jobs/run_sandbox.h"
#include "api/s3_gate.h"
#include "jobs/store_view.h"
#include "storage/s3_api_server.h"
#include "storage/s3_object_store.h"
#include "store/sqlite_store.h"

extern char** environ;

namespace {

constexpr const char* kVersion = "0.1.0";

// Job runs write their output into log streams: jobs owns the interface, logs the streams.
class LogStreamsRunOutput : public openglue::jobs::RunOutput {
 public:
  explicit LogStreamsRunOutput(openglue::logs::LogStore* logs) : logs_(logs) {}
  std::string StdoutPath(const std::string& run_id) override { return logs_->StdoutPath(run_id); }
  std::string StderrPath(const std::string& run_id) override { return logs_->StderrPath(run_id); }
  void Follow(const std::string& run_id) override { logs_->Follow(run_id); }
  void Finish(const std::string& run_id) override { logs_->Finish(run_id); }

 private:
  openglue::logs::LogStore* const logs_;
};

const char* kUsage = R"(openglue - a self-hostable AWS Glue

Usage:
  openglue serve [options]     start the server (Glue JSON 1.1 API on HTTP)
  openglue operations          list the Glue operations and whether OpenGlue implements them
  openglue bookmarks show|history|diff|plan JOB ...
                               inspect a job's bookmark and what its next run would read
                               (docs/bookmarks.md; `openglue bookmarks --help`)
  openglue version             print the version
  openglue --help              this text

Run `openglue serve --help` for the server's options.
)";

const char* kServeUsage = R"(openglue serve - start the OpenGlue server

Usage: openglue serve [options]

Options (each also settable in the config file as `key = value` and in the environment as
OPENGLUE_<KEY>; flags win over the environment, which wins over the file):
  --config FILE                   config file (env OPENGLUE_CONFIG)
)";

const char* kServeUsageEnd = R"(  --help                          this text

Clients: boto3.client("glue", endpoint_url="http://127.0.0.1:4690", region_name="us-east-1",
aws_access_key_id="test", aws_secret_access_key="test")
)";

// Runs `argv` (with `extra_env` added to this process's environment), writes `input` to its
// stdin and returns its stdout once it exits. Killed after `timeout_s`; at most 64 MiB of output.
// For the crawler's JDBC schema discovery (openglue_runtime.crawl_jdbc).
// Who a helper runs as and where (docs/security.md, "Helpers"): in `cwd`, a folder only the
// server can write, and when `drop` (the server is root) as `uid`:`gid` with `group` as its only
// supplementary group (the job group, which may execute the interpreter), without new privileges.
struct HelperSandbox {
  std::string cwd = "/";
  bool drop = false;
  uid_t uid = 0;
  gid_t gid = 0;
  gid_t group = 0;
};

// The uid (and gid) helpers run as when the server is root: Debian's `nobody`.
constexpr uid_t kHelperUid = 65534;

// Whether a server environment variable is passed on to helpers: what locating programs and
// text encoding need, never the server's secrets (OPENGLUE_*, AWS_*).
bool HelperInherits(const char* entry) {
  for (const char* prefix : {"PATH=", "LANG=", "LC_", "TZ="})
    if (std::strncmp(entry, prefix, std::strlen(prefix)) == 0) return true;
  return false;
}

openglue::Result<std::string> RunHelper(const std::vector<std::string>& argv,
                                        const std::vector<std::string>& extra_env,
                                        const std::string& input, int timeout_s,
                                        const HelperSandbox& sandbox) {
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e)
    if (HelperInherits(*e)) env_strings.emplace_back(*e);
  for (const std::string& e : extra_env) env_strings.push_back(e);
  std::vector<char*> envp, args;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) return openglue::Status::Internal(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    return openglue::Status::Internal(std::string("pipe: ") + std::strerror(errno));
  }
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]}) close(fd);
    return openglue::Status::Internal(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    setsid();  // its own process group, killed whole on a timeout
    if (chdir(sandbox.cwd.c_str()) != 0) _exit(126);
    if (sandbox.drop && (setgroups(1, &sandbox.group) != 0 || setresgid(sandbox.gid, sandbox.gid, sandbox.gid) != 0 ||
                         setresuid(sandbox.uid, sandbox.uid, sandbox.uid) != 0))
      _exit(126);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(126);
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  size_t written = 0;
  while (written < input.size()) {
    ssize_t n = write(in_pipe[1], input.data() + written, input.size() - written);
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  close(in_pipe[1]);
  std::string output;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool timed_out = false;
  char buffer[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {out_pipe[0], POLLIN, 0};
    int ready = poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = ready == 0;
      break;
    }
    ssize_t n = read(out_pipe[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output.append(buffer, static_cast<size_t>(n));
    if (output.size() > (64u << 20)) {
      timed_out = true;
      break;
    }
  }
  close(out_pipe[0]);
  if (timed_out) kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return openglue::Status::Internal(argv.back() + " did not answer in time");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return openglue::Status::Internal(argv.back() + " failed (exit status " + std::to_string(status) + ")");
  return output;
}

std::vector<std::string> Environment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
  return out;
}

// Whether `host` (a listen address) is reachable only from this machine.
bool IsLoopbackHost(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

int Fail(const std::string& message) {
  std::cerr << "openglue: " << message << "\n";
  return 2;
}

bool Executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

// versitygw for the S3 API: the configured path, else next to the build's Python (`make deps`
// installs it into the venv), else on PATH. "" when there is none.
std::string FindS3ApiBinary(const openglue::ServerConfig& config) {
  if (!config.s3_api_binary.empty()) return config.s3_api_binary;
  std::string python = openglue::BuildPython();
  size_t slash = python.rfind('/');
  if (slash != std::string::npos && Executable(python.substr(0, slash) + "/versitygw"))
    return python.substr(0, slash) + "/versitygw";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && Executable(dir + "/versitygw")) return dir + "/versitygw";
    start = end + 1;
  }
  return "";
}

int Serve(int argc, char** argv) {
  using namespace openglue;
  ServerConfig config;
  std::string config_file;
  if (const char* env = std::getenv("OPENGLUE_CONFIG")) config_file = env;
  std::vector<std::pair<std::string, std::string>> flags;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kServeUsage << openglue::ConfigHelp() << kServeUsageEnd;
      return 0;
    }
    if (arg.rfind("--", 0) != 0) return Fail("unexpected argument '" + arg + "' (see --help)");
    std::string key = arg.substr(2), value;
    size_t eq = key.find('=');
    if (eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else {
      // A following "--flag" is the next option, not this one's value (use --key=--value).
      if (i + 1 >= argc || std::strncmp(argv[i + 1], "--", 2) == 0) {
        // Tell an unknown flag apart from a known one given without its value.
        Status probe = ServerConfig().Set(key, "");
        if (!probe.ok() && probe.message().rfind("unknown config key", 0) == 0)
          return Fail("unknown option --" + key + " (see --help)");
        return Fail("option --" + key + " needs a value (see --help)");
      }
      value = argv[++i];
    }
    const ConfigKey* entry = FindConfigKey(key);
    if (entry != nullptr && entry->secret)
      return Fail("--" + key + " is refused: a command line is readable by every process on "
                  "this machine (/proc/<pid>/cmdline). Put `" + std::string(entry->name) +
                  " = ...` in the config file (--config FILE, readable by the server's user "
                  "only) or set " + EnvironmentName(*entry) + " in the server's environment");
    if (key == "config") config_file = value;
    else flags.emplace_back(key, value);
  }
  Status st;
  if (!config_file.empty() && !(st = LoadConfigFile(config_file, &config)).ok()) return Fail(st.message());
  if (!(st = ApplyEnvironment(Environment(), &config)).ok()) return Fail(st.message());
  for (const auto& [key, value] : flags) {
    if (!(st = config.Set(key, value)).ok()) return Fail("--" + key + ": " + st.message());
  }
  LogLevel level = LogLevel::kInfo;
  ParseLogLevel(config.log_level, &level);
  SetLogLevel(level);

  // Everything the server creates (metadata, keys, logs, run folders) is its own unless it says
  // otherwise: job code must not read it.
  umask(077);
  std::error_code ec;
  std::filesystem::create_directories(config.data_dir, ec);
  if (ec) return Fail("cannot create data directory '" + config.data_dir + "': " + ec.message());
  // Paths under the data directory reach job processes, which run in folders of their own: a
  // relative one (the default ./openglue-data) is made absolute once, here.
  std::string absolute_data_dir =
      std::filesystem::absolute(config.data_dir, ec).lexically_normal().string();
  if (ec) return Fail("cannot resolve data directory '" + config.data_dir + "': " + ec.message());
  while (absolute_data_dir.size() > 1 && absolute_data_dir.back() == '/') absolute_data_dir.pop_back();
  config.data_dir = absolute_data_dir;

  // Signals are taken by a dedicated thread; block them before any other thread starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // Who job processes run as, and what they may reach.
  // The default key pair is public knowledge: it may only guard a server no one else reaches.
  if (!IsLoopbackHost(config.host) && config.require_auth) {
    auto it = config.credentials.find("test");
    if (it != config.credentials.end() && it->second == "test")
      return Fail("host " + config.host +
                  " is not a loopback address, and the access key is still the default test/test, which "
                  "anyone may use to read, change and delete everything (the catalog, jobs, the S3 store). "
                  "Set access_key_id and secret_access_key (or credentials) in the config file or "
                  "OPENGLUE_SECRET_ACCESS_KEY first (docs/security.md)");
  }
  auto job_user = jobs::ResolveJobUser(config.job_user, config.job_uid_base, config.job_uid_count);
  if (!job_user.ok()) return Fail(job_user.status().message());
  if (!(st = jobs::PrepareDataDir(config.data_dir, *job_user)).ok()) return Fail(st.message());
  if (!(st = jobs::CheckJobUserCanRun(config.python, *job_user)).ok()) return Fail(st.message());
  jobs::PosixLauncherOptions launcher_options;
  launcher_options.user = *job_user;
  if (config.job_cgroup != "off") launcher_options.cgroup_root = jobs::FindCgroupRoot();
  // Runs under uids of their own get a view of the store made by this binary (jobs/store_view.h);
  // runs with --additional-python-modules get their environment from it (jobs/module_environments.h).
  {
    std::error_code self_error;
    launcher_options.self_binary = std::filesystem::read_symlink("/proc/self/exe", self_error).string();
  }
  SystemRandom random;
  auto run_secrets = api::RunSecrets::Make(config.data_dir + "/server.key", config.server_key, &random);
  if (!run_secrets.ok()) return Fail(run_secrets.status().message());

  SystemClock clock;
  store::SqliteStoreOptions store_options;
  store_options.max_readers = config.store_max_readers;
  store_options.reader_idle = std::chrono::seconds(config.store_reader_idle_seconds);
  auto store = store::SqliteStore::Make(config.data_dir + "/catalog.db", store_options);
  if (!store.ok()) return Fail(store.status().message());
  // The key that seals connection passwords: a configured file must exist; the default one is
  // made on first start, unless the store already holds passwords sealed with a lost key.
  std::unique_ptr<catalog::ConnectionCipher> connection_cipher;
  bool new_connection_key = false;
  std::string connection_key_path = config.connection_key_file.empty()
                                        ? config.data_dir + "/connection.key"
                                        : config.connection_key_file;
  if (!config.connection_key_file.empty() || std::filesystem::exists(connection_key_path, ec)) {
    // An older default key file may have been made with looser permissions: tighten them.
    if (config.connection_key_file.empty()) chmod(connection_key_path.c_str(), 0600);
    auto loaded = catalog::ConnectionCipher::FromFile(connection_key_path);
    if (!loaded.ok()) return Fail(loaded.status().message());
    connection_cipher = std::move(*loaded);
  } else {
    connection_cipher = catalog::ConnectionCipher::Generate(&random);
    new_connection_key = true;
  }
  catalog::CatalogOptions catalog_options{config.account_id, config.region};
  catalog_options.connection_cipher = connection_cipher.get();
  catalog_options.random = &random;
  auto catalog = catalog::Catalog::Make(store->get(), &clock, catalog_options);
  if (!catalog.ok()) return Fail(catalog.status().message());
  if (!(st = (*catalog)->CheckConnectionKey(connection_cipher.get())).ok())
    return Fail(st.message() + (new_connection_key ? " (the connection key file " + connection_key_path +
                                                         " is missing)"
                                                   : " (key file " + connection_key_path + ")"));
  if (new_connection_key && !(st = connection_cipher->Save(connection_key_path)).ok())
    return Fail(st.message());
  // One tag store for every service: each registers the ARN types it resolves.
  resource::TagService tags(store->get(), config.region);
  catalog::RegisterTaggableResources(&tags);
  auto model = api::ServiceModel::MakeEmbedded();
  if (!model.ok()) return Fail(model.status().message());
  auto logs_model = api::ServiceModel::MakeEmbeddedLogs();
  if (!logs_model.ok()) return Fail(logs_model.status().message());
  api::Router router(model->get(), logs_model->get());
  router.RegisterCatalog(catalog->get());
  // The configured credentials administer everything; run credentials get their Role's policy.
  std::set<std::string> administrators;
  for (const auto& [id, secret] : config.credentials) administrators.insert(id);
  api::RunAuthorizer authorizer(std::move(administrators), config.role_policies);
  router.SetAuthorizer([&authorizer](const std::string& principal, const std::string& action) {
    return authorizer.Authorize(principal, action);
  });
  for (const auto& [name, method] : resource::TagService::Operations())
    router.RegisterGlue(name, [&tags, method = method](const Json& request) { return (tags.*method)(request); });
  // iam:GetRole and sts:GetCallerIdentity over the query protocol (clients such as Airflow ask
  // them before calling Glue; docs/airflow.md).
  api::IdentityOptions identity{config.account_id, clock.NowMillis(), {}, &authorizer};
  for (const auto& [role, statements] : config.role_policies) identity.configured_roles.insert(role);
  api::RegisterIdentity(&router, std::move(identity));
  auto server = api::HttpServer::Make(config, &router, &clock);
  if (!server.ok()) return Fail(server.status().message());
  if (!(st = (*server)->Bind()).ok()) return Fail(st.message());

  int port = (*server)->port();

  // The embedded store over the S3 API (versitygw), supervised by this process. The configured
  // credentials work there as on the Glue API; each run's credential is added while it runs.
  std::unique_ptr<storage::S3ApiServer> s3_api;
  std::unique_ptr<api::S3Gate> s3_gate;
  // Jobs' code, for the gate: set while the job service exists (a run's write is refused
  // outside that time; there are no runs then anyway).
  std::atomic<jobs::JobService*> gate_jobs{nullptr};
  api::CodeObjects code_objects = [&gate_jobs]() -> Result<std::map<std::string, std::string>> {
    jobs::JobService* jobs = gate_jobs.load();
    if (jobs == nullptr) return Status::Internal("the server is starting or stopping");
    return jobs->CodeObjects();
  };
  std::string callback_host = config.host == "0.0.0.0" || config.host == "::" || config.host == "localhost"
                                  ? "127.0.0.1" : config.host;
  if (config.s3_api != "off") {
    std::string binary = FindS3ApiBinary(config);
    if (binary.empty() || !Executable(binary)) {
      if (config.s3_api == "on")
        return Fail("s3_api = on but the versitygw binary " +
                    (binary.empty() ? std::string("was not found (run `make deps`, or set s3_api_binary)")
                                    : "'" + binary + "' is not executable"));
      OG_LOG(kInfo, "S3 API off: no versitygw binary (run `make deps`, or set s3_api_binary)");
    } else {
      storage::S3ApiServerOptions s3_options;
      s3_options.binary = binary;
      s3_options.root_dir = config.data_dir + "/s3";
      s3_options.state_dir = config.data_dir + "/s3api";
      s3_options.host = config.host == "0.0.0.0" ? "0.0.0.0" : callback_host;
      s3_options.region = config.region;
      if (config.s3_api_port != 0) {
        s3_options.port = config.s3_api_port;
      } else if (config.port != 0 && port < 65535 &&
                 storage::S3ApiServer::PortIsFree(s3_options.host, port + 1)) {
        s3_options.port = port + 1;
      } else {
        // The default port is taken (or the server's own was chosen by the system): any free
        // one; runs learn it from AWS_ENDPOINT_URL_S3 and the log line below names it.
        auto free_port = storage::S3ApiServer::PickFreePort(callback_host);
        if (!free_port.ok()) return Fail("S3 API: " + free_port.status().message());
        s3_options.port = *free_port;
      }
      // Under root with job users: an unprivileged uid in the store's group (see the header).
      if (job_user->enabled) {
        s3_options.uid = job_user->per_run ? static_cast<int64_t>(job_user->uid_base)
                                           : static_cast<int64_t>(job_user->fixed_uid);
        s3_options.gid = job_user->per_run ? static_cast<int64_t>(job_user->shared_gid)
                                           : static_cast<int64_t>(job_user->fixed_gid);
      }
      if (config.credentials.empty()) {
        s3_options.root_access_key = "OGROOT" + random.Hex(10);
        s3_options.root_secret_key = random.Hex(20);
      } else {
        s3_options.root_access_key = config.credentials.begin()->first;
        s3_options.root_secret_key = config.credentials.begin()->second;
      }
      // versitygw listens on a private unix socket; the gate below is the S3 port.
      s3_options.unix_socket = true;
      auto made = storage::S3ApiServer::Make(s3_options);
      if (!made.ok()) return Fail("S3 API: " + made.status().message());
      s3_api = std::move(*made);
      for (const auto& [id, secret] : config.credentials) {
        if (id == s3_options.root_access_key) continue;
        if (!(st = s3_api->Grant(id, secret)).ok()) return Fail("S3 API: " + st.message());
      }
      if (!(st = s3_api->Start()).ok()) return Fail("S3 API: " + st.message());
      api::S3GateOptions gate_options;
      gate_options.host = s3_options.host;
      gate_options.port = s3_options.port;
      gate_options.upstream = s3_api->socket_path();
      auto gate = api::S3Gate::Make(
          gate_options,
          [&authorizer, &code_objects](const api::S3Access& access) {
            return api::AuthorizeS3Access(authorizer, access, code_objects);
          },
          [&authorizer](const std::string& key) { return authorizer.FindRun(key).has_value(); });
      if (!gate.ok()) return Fail("S3 API: " + gate.status().message());
      s3_gate = std::move(*gate);
      s3_gate->Start();
      OG_LOG(kInfo, "S3 API gate listening on " << s3_gate->endpoint()
                        << " (job runs' Roles apply; versitygw behind it on " << s3_api->socket_path() << ")");
    }
  }
  // s3:// locations the server reads from an external S3 endpoint, when one is configured. Arrow's
  // S3 support is finalized after the store is gone (the guard is destroyed last).
  struct S3Finalizer {
    bool used = false;
    ~S3Finalizer() {
      if (used) storage::S3ObjectStore::Finalize();
    }
  } s3_finalizer;
  std::unique_ptr<storage::S3ObjectStore> external_objects;
  if (!config.s3_endpoint.empty()) {
    storage::S3ObjectStoreOptions s3_store_options;
    s3_store_options.endpoint = config.s3_endpoint;
    s3_store_options.access_key = config.s3_access_key_id;
    s3_store_options.secret_key = config.s3_secret_access_key;
    s3_store_options.region = config.s3_region.empty() ? config.region : config.s3_region;
    s3_finalizer.used = true;
    auto made = storage::S3ObjectStore::Make(s3_store_options);
    if (!made.ok()) return Fail("s3_endpoint: " + made.status().message());
    external_objects = std::move(*made);
    OG_LOG(kInfo, "s3:// locations the server reads come from " << config.s3_endpoint);
  }
  // Jobs: runs are processes that call back to this server with a credential of their own.
  std::string runtime_path = config.runtime_path.empty() ? OPENGLUE_PYTHON_DIR : config.runtime_path;
  logs::LogStoreOptions log_options;
  log_options.retention_days = config.log_retention_days;
  log_options.region = config.region;
  log_options.account_id = config.account_id;
  auto logs = logs::LogStore::Make(config.data_dir + "/logs", &clock, log_options);
  if (!logs.ok()) return Fail(logs.status().message());
  LogStreamsRunOutput run_output(logs->get());
  std::unique_ptr<jobs::ProcessLauncher> launcher = jobs::MakePosixProcessLauncher(launcher_options);
  // The catalog as a Hive Metastore (docs/metastore.md): the same operations, validated by the
  // same service model as the Glue API's requests.
  std::unique_ptr<hms::HmsServer> hms_server;
  std::string hms_run_uri;  // what job runs are told (OPENGLUE_HMS_URI)
  // The metastore asks the job service which run a job uid belongs to; it starts first.
  std::atomic<jobs::JobService*> hms_jobs{nullptr};
  if (config.hms_port != 0) {
    hms::HmsOptions hms_options;
    hms_options.host = config.hms_host;
    hms_options.port = config.hms_port;
    hms_options.message_timeout_ms = config.hms_message_timeout_seconds * 1000;
    // Remote clients are not authenticated (docs/security.md): a metastore others can reach
    // must be asked for by name.
    if (!IsLoopbackHost(hms_options.host)) {
      if (!config.hms_allow_remote)
        return Fail("hms_host " + hms_options.host +
                    " is not a loopback address: the Hive Metastore does not authenticate remote "
                    "clients, who could change the whole catalog. Set hms_allow_remote = yes "
                    "(--hms-allow-remote yes) to serve it there anyway (docs/security.md)");
      OG_LOG(kWarn, "the Hive Metastore listens on " << hms_options.host
                                                     << " (hms_allow_remote): remote clients are not "
                                                        "authenticated and may change the whole catalog");
    }
    hms_options.default_location_root =
        "file:" + std::filesystem::absolute(config.data_dir, ec).lexically_normal().string() + "/warehouse";
    const api::ServiceModel* glue_model = model->get();
    hms_options.validate = [glue_model](const std::string& operation, Json* request) {
      return glue_model->Validate(operation, request);
    };
    // A connection from a job run's uid speaks for that run: its calls are authorized with the
    // run's Role, as its Glue API calls are. Other local users and remote clients are operators.
    hms_options.identify = [user = *job_user, name = config.job_user, &hms_jobs](std::optional<uid_t> uid) -> Result<std::string> {
      if (!uid || !user.enabled) return std::string();
      if (user.per_run && *uid > user.uid_base && *uid <= user.uid_base + user.uid_count) {
        jobs::JobService* service = hms_jobs.load();
        if (service != nullptr)
          if (std::optional<std::string> credential = service->RunCredentialOfUid(*uid)) return *credential;
        return Status(StatusCode::kAccessDenied,
                      "uid " + std::to_string(*uid) + " is a job runs' uid, and no running job run has it");
      }
      if (!user.per_run && *uid == user.fixed_uid)
        return Status(StatusCode::kAccessDenied,
                      "uid " + std::to_string(*uid) + " is job_user " + name + "'s, which every run shares: the "
                      "metastore cannot tell which run connected (job_user = auto gives each run a uid)");
      return std::string();
    };
    hms_options.authorize = [&authorizer](const std::string& principal, const std::string& action) {
      return authorizer.Authorize(principal, action);
    };
    auto started = hms::HmsServer::Start(catalog->get(), hms_options);
    if (!started.ok()) return Fail(started.status().message());
    hms_server = std::move(*started);
    OG_LOG(kInfo, "Hive Metastore on " << hms_server->uri());
    const std::string& h = hms_options.host;
    hms_run_uri = "thrift://" +
                  (h == "0.0.0.0" || h == "::" || h == "localhost" ? std::string("127.0.0.1") : h) +
                  ":" + std::to_string(hms_server->port());
  }
  jobs::JobServiceOptions job_options;
  job_options.data_dir = config.data_dir;
  job_options.endpoint = "http://" + callback_host + ":" + std::to_string(port);
  job_options.region = config.region;
  if (s3_gate) job_options.s3_endpoint = s3_gate->endpoint();
  job_options.account_id = config.account_id;
  job_options.hms_uri = hms_run_uri;
  if (external_objects) job_options.objects = external_objects.get();
  job_options.python = config.python;
  job_options.runtime_path = runtime_path;
  job_options.spark_master = config.spark_master;
  job_options.max_concurrent_runs = config.max_concurrent_runs;
  job_options.python_modules_retention_days = config.python_modules_retention_days;
  job_options.store_grants = [&authorizer](const std::string& role) {
    return api::StoreGrantsOf(authorizer.PolicyFor(role));
  };
  // DeleteJob deletes the job's bookmark in its own transaction.
  job_options.on_delete_job = &bookmarks::BookmarkService::DeleteJobBookmarks;
  api::SigV4Verifier* verifier = (*server)->verifier();
  const api::RunSecrets* secrets = &*run_secrets;
  jobs::RunCredentials run_credentials{
      [verifier, secrets, &authorizer, s3 = s3_api.get()](const jobs::RunGrant& grant) {
        std::string secret = secrets->SecretFor(grant.access_key_id);
        authorizer.AddRun(grant.access_key_id, {grant.job, grant.run_id, grant.role});
        verifier->Grant(grant.access_key_id, secret);
        // The same key pair on the S3 API, so one AWS_ACCESS_KEY_ID serves boto3's every client.
        if (s3 != nullptr) {
          Status granted = s3->Grant(grant.access_key_id, secret);
          if (!granted.ok()) OG_LOG(kError, "S3 API: " << granted.message());
        }
        return secret;
      },
      [verifier, &authorizer, s3 = s3_api.get()](const std::string& id) {
        verifier->Revoke(id);
        authorizer.RemoveRun(id);
        if (s3 != nullptr) (void)s3->Revoke(id);
      }};
  // Triggers and workflows hear of every job run that ends, in the run's own transaction; the
  // scheduler, made after the job service, is woken once it exists.
  schedule::Scheduler* scheduler_to_wake = nullptr;
  job_options.run_ended.record = &schedule::RecordJobRunEnded;
  job_options.run_ended.notify = [&scheduler_to_wake] {
    if (scheduler_to_wake != nullptr) scheduler_to_wake->Wake();
  };
  auto job_service = jobs::JobService::Make(store->get(), &clock, &random, launcher.get(),
                                            &run_output, run_credentials, job_options);
  if (!job_service.ok()) return Fail(job_service.status().message());
  router.RegisterJobs(job_service->get());
  api::RegisterConnectionReads(&router, catalog->get(), job_service->get(), &authorizer);
  hms_jobs = job_service->get();
  gate_jobs = job_service->get();
  // On every way out, the S3 gate (which asks the job service) stops before the service goes.
  struct StopGateFirst {
    api::S3Gate* gate;
    std::atomic<jobs::JobService*>* jobs;
    ~StopGateFirst() {
      if (gate != nullptr) gate->Stop();
      jobs->store(nullptr);
    }
  } stop_gate_first{s3_gate.get(), &gate_jobs};
  // On every way out, the metastore (which asks the job service) stops before the service goes.
  struct StopMetastoreFirst {
    hms::HmsServer* hms;
    ~StopMetastoreFirst() {
      if (hms != nullptr) hms->Stop();
    }
  } stop_metastore_first{hms_server.get()};
  // Job bookmarks: the state is the bookmarks module's, the jobs and runs it belongs to jobs'.
  bookmarks::BookmarkOptions bookmark_options;
  bookmark_options.history_limit = config.bookmark_history_limit;
  auto bookmark_service = bookmarks::BookmarkService::Make(store->get(), &clock,
                                                           api::BookmarkJobsView(), bookmark_options);
  if (!bookmark_service.ok()) return Fail(bookmark_service.status().message());
  api::RegisterBookmarks(&router, bookmark_service->get(), &authorizer);
  tags.Register("job", [](store::Transaction* txn, const resource::Arn& arn) {
    return jobs::JobExists(txn, arn.resource);
  });
  router.RegisterLogs(logs->get());
  // Crawlers: crawls run in the server; their logs are the group /aws-glue/crawlers (stream =
  // crawler name), a log store of its own beside the jobs' one.
  logs::LogStoreOptions crawler_log_options = log_options;
  crawler_log_options.output_group = "/aws-glue/crawlers";
  crawler_log_options.error_group = "";
  auto crawler_logs = logs::LogStore::Make(config.data_dir + "/crawler-logs", &clock, crawler_log_options);
  if (!crawler_logs.ok()) return Fail(crawler_logs.status().message());
  crawler::CrawlerServiceOptions crawler_options;
  crawler_options.region = config.region;
  crawler_options.account_id = config.account_id;
  crawler_options.data_dir = config.data_dir;
  if (external_objects) crawler_options.objects = external_objects.get();
  crawler_options.log = [store = crawler_logs->get()](const std::string& stream,
                                                      const std::vector<std::string>& lines) {
    if (!logs::ValidStreamName(stream)) return;
    std::string path = store->StdoutPath(stream);
    std::string text;
    for (const std::string& line : lines) text += line + "\n";
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return;
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fd);
    store->Finish(stream);  // the lines become events now
  };
  // Each crawl's end is recorded for triggers and workflows in the crawl's own transaction; a
  // schedule change makes the scheduler (made below) reload the crawler schedules it fires.
  crawler_options.crawl_ended = &schedule::RecordCrawlEnded;
  crawler_options.schedules_changed = [&scheduler_to_wake] {
    if (scheduler_to_wake != nullptr) scheduler_to_wake->CrawlerSchedulesChanged();
  };
  // JDBC targets: the runtime's openglue_runtime.crawl_jdbc reads the database's information_schema.
  // The helper runs isolated: -I (no cwd, PYTHONPATH or user site on sys.path; the runtime is
  // put on it by name), in a folder of the server's, and as root's stand-in `nobody` when root.
  HelperSandbox helper_sandbox;
  helper_sandbox.cwd = config.data_dir + "/helper";
  if (mkdir(helper_sandbox.cwd.c_str(), 0711) != 0 && errno != EEXIST)
    return Fail("cannot create " + helper_sandbox.cwd + ": " + std::strerror(errno));
  if (chmod(helper_sandbox.cwd.c_str(), 0711) != 0) return Fail("cannot chmod " + helper_sandbox.cwd);
  if (geteuid() == 0) {
    helper_sandbox.drop = true;
    helper_sandbox.uid = kHelperUid;
    helper_sandbox.gid = kHelperUid;
    helper_sandbox.group = job_user->enabled ? (job_user->per_run ? job_user->shared_gid : job_user->fixed_gid)
                                             : static_cast<gid_t>(kHelperUid);
  }
  crawler_options.jdbc = [python = config.python, runtime_path, helper_sandbox](const Json& request) -> Result<Json> {
    const std::string launch = "import sys, runpy; sys.path.insert(0, sys.argv.pop(1)); "
                               "runpy.run_module('openglue_runtime.crawl_jdbc', run_name='__main__', alter_sys=True)";
    OG_ASSIGN_OR_RETURN(std::string out, RunHelper({python, "-I", "-c", launch, runtime_path, "openglue_runtime.crawl_jdbc"}, {},
                                                   DumpJson(request), 120, helper_sandbox));
    Json answer = ParseJson(out);
    if (answer.is_discarded() || !answer.is_object())
      return Status::Internal("openglue_runtime.crawl_jdbc gave no JSON answer");
    return answer;
  };
  auto crawler_service = crawler::CrawlerService::Make(store->get(), catalog->get(), &clock, &random,
                                                       crawler_options);
  if (!crawler_service.ok()) return Fail(crawler_service.status().message());
  for (const auto& [name, method] : crawler::CrawlerService::Operations())
    router.RegisterGlue(name, [svc = crawler_service->get(), method = method](const Json& request) {
      return (svc->*method)(request);
    });
  router.RegisterLogs(crawler_logs->get());
  tags.Register("crawler", [](store::Transaction* txn, const resource::Arn& arn) {
    return crawler::CrawlerExists(txn, arn.resource);
  });
  // Triggers, schedules and workflows: job and crawler actions; a crawl's end reaches them
  // through crawl_ended (in the crawl's own transaction) and wakes the scheduler.
  schedule::SchedulerOptions schedule_options;
  schedule_options.region = config.region;
  schedule_options.account_id = config.account_id;
  schedule_options.start_crawler = [crawlers = crawler_service->get()](const std::string& name) {
    return crawlers->StartCrawl(name).status();
  };
  schedule_options.crawler_exists = [](store::Transaction* txn, const std::string& name) {
    return crawler::CrawlerExists(txn, {"crawler", name});
  };
  auto scheduler = schedule::Scheduler::Make(store->get(), &clock, &random, job_service->get(),
                                             schedule_options);
  if (!scheduler.ok()) return Fail(scheduler.status().message());
  for (const auto& [name, method] : schedule::Scheduler::Operations())
    router.RegisterGlue(name, [s = scheduler->get(), m = method](const Json& request) {
      return (s->*m)(request);
    });
  // A job run reaches only the properties of its own workflow run.
  api::RegisterWorkflowRunProperties(&router, scheduler->get(), &authorizer);
  tags.Register("trigger", [](store::Transaction* txn, const resource::Arn& arn) {
    return schedule::TriggerExists(txn, arn.resource);
  });
  tags.Register("workflow", [](store::Transaction* txn, const resource::Arn& arn) {
    return schedule::WorkflowExists(txn, arn.resource);
  });
  // Data quality: rulesets, and the results job runs publish (each as its own run).
  // Evaluation and recommendation runs are module runs of the job service
  // (openglue_runtime.quality.run); their tables must exist in the catalog when they start.
  quality::QualityOptions quality_options;
  quality_options.region = config.region;
  quality_options.account_id = config.account_id;
  quality_options.table_exists = [cat = catalog->get()](const Json& table) -> Status {
    Json request{{"DatabaseName", table.value("DatabaseName", "")}, {"Name", table.value("TableName", "")}};
    if (table.contains("CatalogId") && table["CatalogId"].is_string()) request["CatalogId"] = table["CatalogId"];
    return cat->GetTable(request).status();
  };
  auto quality_service = quality::QualityService::Make(store->get(), &clock, &random, quality_options,
                                                       job_service->get());
  if (!quality_service.ok()) return Fail(quality_service.status().message());
  api::RegisterDataQuality(&router, quality_service->get(), model->get(), &authorizer);
  tags.Register("dataQualityRuleset", [](store::Transaction* txn, const resource::Arn& arn) {
    return quality::RulesetExists(txn, arn.resource);
  });
  scheduler_to_wake = scheduler->get();
  (*crawler_service)->AddCrawlEndListener(
      [s = scheduler->get()](const std::string&, const std::string&) { s->Wake(); });
  if (!(st = (*crawler_service)->Recover()).ok()) return Fail(st.message());
  if (!(st = (*job_service)->Recover()).ok()) return Fail(st.message());
  (*logs)->Start();
  (*crawler_logs)->Start();
  (*job_service)->Start();
  (*scheduler)->Start();
  if (!config.port_file.empty()) {
    std::string tmp = config.port_file + ".tmp";
    std::ofstream(tmp) << port << "\n";
    std::filesystem::rename(tmp, config.port_file, ec);
  }
  OG_LOG(kInfo, "job processes run as "
                    << (!job_user->enabled ? std::string("the server's user")
                        : job_user->per_run ? "a uid of their own per run (from " +
                                                  std::to_string(job_user->uid_base + 1) + ")"
                                            : "user " + config.job_user)
                    << "; contained by "
                    << (launcher_options.cgroup_root.empty()
                            ? std::string(config.job_cgroup == "off"
                                              ? "their process group and uid (job_cgroup off)"
                                              : "their process group and uid (no writable cgroup v2)")
                            : "a cgroup per run under " + launcher_options.cgroup_root));
  OG_LOG(kInfo, "openglue " << kVersion << " listening on http://" << config.host << ":" << port
                            << " (data dir " << config.data_dir << ", auth "
                            << (config.require_auth ? "sigv4" : "none") << ")");

  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    OG_LOG(kInfo, "signal " << sig << " received, stopping");
    (*server)->Stop();
  });
  st = (*server)->Serve();
  if (hms_server) hms_server->Stop();
  (*scheduler)->Stop();
  (*job_service)->Stop();
  (*crawler_service)->Stop();
  (*crawler_logs)->Stop();
  (*logs)->Stop();
  if (s3_gate) s3_gate->Stop();
  if (s3_api) s3_api->Stop();
  // Wake the waiter if the server stopped on its own.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  if (!st.ok()) return Fail(st.message());
  OG_LOG(kInfo, "stopped");
  return 0;
}

// `openglue bookmarks ...` is the Python tool openglue_runtime.bookmark_tool (it reuses the runtime's
// listing and selection): exec the build's interpreter on it, with the runtime on PYTHONPATH
// (OPENGLUE_RUNTIME_PATH, the serve option's variable, else the source tree's python/).
int Bookmarks(int argc, char** argv) {
  std::string python = openglue::BuildPython();
  const char* configured = std::getenv("OPENGLUE_RUNTIME_PATH");
  std::string runtime = configured && *configured ? configured : OPENGLUE_PYTHON_DIR;
  const char* inherited = std::getenv("PYTHONPATH");
  std::string path = runtime + (inherited && *inherited ? ":" + std::string(inherited) : "");
  if (setenv("PYTHONPATH", path.c_str(), 1) != 0) return Fail("cannot set PYTHONPATH");
  std::vector<std::string> args = {python, "-m", "openglue_runtime.bookmark_tool"};
  for (int i = 0; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> exec_argv;
  for (std::string& arg : args) exec_argv.push_back(arg.data());
  exec_argv.push_back(nullptr);
  execv(python.c_str(), exec_argv.data());
  return Fail("cannot run " + python + " for `openglue bookmarks`: " + std::strerror(errno));
}

int ListOperations() {
  using namespace openglue;
  auto model = api::ServiceModel::MakeEmbedded();
  if (!model.ok()) return Fail(model.status().message());
  api::Router router(model->get());
  SystemClock clock;
  // A catalog is only needed for its operation table.
  for (const auto& [name, method] : catalog::Catalog::Operations()) router.RegisterGlue(name, nullptr);
  for (const auto& [name, method] : jobs::JobService::Operations()) router.RegisterGlue(name, nullptr);
  for (const auto& [name, method] : resource::TagService::Operations()) router.RegisterGlue(name, nullptr);
  for (const auto& [name, method] : schedule::Scheduler::Operations()) router.RegisterGlue(name, nullptr);
  for (const auto& [name, method] : crawler::CrawlerService::Operations()) router.RegisterGlue(name, nullptr);
  for (const char* name : {"GetJobBookmark", "ResetJobBookmark"}) router.RegisterGlue(name, nullptr);
  for (const auto& [name, method] : quality::QualityService::Operations()) router.RegisterGlue(name, nullptr);
  for (const std::string& name : (*model)->OperationNames())
    std::cout << name << "\t" << (router.Implements(name) ? "implemented" : "not yet") << "\n";
  // Not in the model: OpenGlue's own operations (docs/compatibility.md lists them apart).
  for (const std::string& name : api::BookmarkExtensionOperations())
    std::cout << name << "\textension\n";
  for (const std::string& name : api::DataQualityExtensionOperations())
    std::cout << name << "\textension\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  std::string command = argv[1];
  if (command == "serve") return Serve(argc - 2, argv + 2);
  // Internal: set up a job run's view of the store, then exec the run (jobs/store_view.h).
  if (command == "__store-view") return openglue::jobs::RunStoreView(argc, argv);
  if (command == "__store-pin") return openglue::jobs::RunStorePin(argc, argv);
  // Internal: install or reuse a run's --additional-python-modules, then exec the run.
  if (command == "__python-modules") return openglue::jobs::RunPythonModules(argc, argv);
  if (command == "operations") return ListOperations();
  if (command == "bookmarks") return Bookmarks(argc - 2, argv + 2);
  if (command == "version" || command == "--version") {
    std::cout << "openglue " << kVersion << "\n";
    return 0;
  }
  return Fail("unknown command '" + command + "' (see --help)");
}
