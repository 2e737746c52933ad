// Fuzz target: the request path behind the HTTP front end. JSON parse -> service-model
// validation -> handler input decoding -> the real catalog and job services on a temporary
// SQLite store (and the bookmark operations), through api::Router::Handle, exactly as the server wires them (without HTTP
// and without authentication).
//
// Input format: the first line is the operation ("CreateTable", or any X-Amz-Target text that
// contains a '.'); the rest is the request body.
// Invariants checked: Handle never crashes or throws; no input gets a 5xx (an internal error
// from client input is a defect: Glue answers 400 for everything a client can send wrong); every
// response body is valid UTF-8 JSON with `__type` on errors.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "api/bookmark_operations.h"
#include "api/router.h"
#include "api/service_model.h"
#include "catalog/catalog.h"
#include "common/clock.h"
#include "common/json.h"
#include "common/strings.h"
#include "common/random.h"
#include "jobs/job_service.h"
#include "jobs/process_launcher.h"
#include "jobs/run_output.h"
#include "logs/log_store.h"
#include "resource/tags.h"
#include "store/sqlite_store.h"

namespace {

using namespace openglue;

// Job runs are never started: the supervisor is not started and launching always fails.
class NoLauncher : public jobs::ProcessLauncher {
 public:
  Result<int> Launch(const jobs::LaunchSpec&) override {
    return Status::InvalidInput("the fuzzer starts no processes");
  }
  Status SignalGroup(int, int) override { return Status::OK(); }
  jobs::ProcessStatus Check(int, const std::string&) override { return {}; }
};

// Run output goes nowhere: no run ever starts.
class NoRunOutput : public jobs::RunOutput {
 public:
  explicit NoRunOutput(std::string dir) : dir_(std::move(dir)) {}
  std::string StdoutPath(const std::string& id) override { return dir_ + "/" + id + ".out"; }
  std::string StderrPath(const std::string& id) override { return dir_ + "/" + id + ".err"; }
  void Follow(const std::string&) override {}
  void Finish(const std::string&) override {}

 private:
  std::string dir_;
};

struct Services {
  std::string dir;
  FakeClock clock{1773480413000};
  std::unique_ptr<store::SqliteStore> store;
  std::unique_ptr<catalog::ConnectionCipher> connection_cipher;
  SeededRandom connection_random{7};
  std::unique_ptr<catalog::Catalog> catalog;
  std::unique_ptr<resource::TagService> tags;
  std::unique_ptr<api::ServiceModel> model;
  std::unique_ptr<api::ServiceModel> logs_model;
  std::unique_ptr<api::Router> router;
  std::unique_ptr<logs::LogStore> logs;
  std::unique_ptr<NoRunOutput> run_output;
  SeededRandom random{42};
  NoLauncher launcher;
  std::unique_ptr<jobs::JobService> jobs;
  std::unique_ptr<bookmarks::BookmarkService> bookmarks;
};

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "request_fuzz: %s\n", what.c_str());
  std::abort();
}

Services* Setup() {
  auto* s = new Services;
  char tmpl[] = "/tmp/openglue-request-fuzz.XXXXXX";
  if (!mkdtemp(tmpl)) Die("mkdtemp failed");
  s->dir = tmpl;
  auto store = store::SqliteStore::Make(s->dir + "/catalog.db");
  if (!store.ok()) Die(store.status().message());
  s->store = std::move(*store);
  auto cipher = catalog::ConnectionCipher::FromKey(std::string(catalog::ConnectionCipher::kKeyBytes, 'k'));
  if (!cipher.ok()) Die(cipher.status().message());
  s->connection_cipher = std::move(*cipher);
  catalog::CatalogOptions catalog_options;
  catalog_options.connection_cipher = s->connection_cipher.get();
  catalog_options.random = &s->connection_random;
  auto catalog = catalog::Catalog::Make(s->store.get(), &s->clock, catalog_options);
  if (!catalog.ok()) Die(catalog.status().message());
  s->catalog = std::move(*catalog);
  s->tags = std::make_unique<resource::TagService>(s->store.get(), "us-east-1");
  catalog::RegisterTaggableResources(s->tags.get());
  auto model = api::ServiceModel::MakeEmbedded();
  if (!model.ok()) Die(model.status().message());
  s->model = std::move(*model);
  auto logs_model = api::ServiceModel::MakeEmbeddedLogs();
  if (!logs_model.ok()) Die(logs_model.status().message());
  s->logs_model = std::move(*logs_model);
  s->router = std::make_unique<api::Router>(s->model.get(), s->logs_model.get());
  s->router->RegisterCatalog(s->catalog.get());
  resource::TagService* tags = s->tags.get();
  for (const auto& [name, method] : resource::TagService::Operations())
    s->router->RegisterGlue(name, [tags, method = method](const Json& request) { return (tags->*method)(request); });
  auto logs = logs::LogStore::Make(s->dir + "/logs", &s->clock, logs::LogStoreOptions{});
  if (!logs.ok()) Die(logs.status().message());
  s->logs = std::move(*logs);
  s->run_output = std::make_unique<NoRunOutput>(s->dir);
  jobs::JobServiceOptions options;
  options.data_dir = s->dir;
  options.endpoint = "http://127.0.0.1:1";
  options.on_delete_job = &bookmarks::BookmarkService::DeleteJobBookmarks;
  jobs::RunCredentials credentials{
      [](const jobs::RunGrant& grant) { return "fuzz-secret-" + grant.access_key_id; },
      [](const std::string&) {}};
  auto job_service = jobs::JobService::Make(s->store.get(), &s->clock, &s->random, &s->launcher,
                                            s->run_output.get(), credentials, options);
  if (!job_service.ok()) Die(job_service.status().message());
  s->jobs = std::move(*job_service);
  s->router->RegisterJobs(s->jobs.get());
  s->tags->Register("job", [](store::Transaction* txn, const resource::Arn& arn) {
    return jobs::JobExists(txn, arn.resource);
  });
  s->router->RegisterLogs(s->logs.get());
  auto bookmark_service = bookmarks::BookmarkService::Make(s->store.get(), &s->clock,
                                                           api::BookmarkJobsView());
  if (!bookmark_service.ok()) Die(bookmark_service.status().message());
  s->bookmarks = std::move(*bookmark_service);
  api::RegisterBookmarks(s->router.get(), s->bookmarks.get(), nullptr);
  return s;
}

Services* Get() {
  static Services* services = Setup();
  static struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(services->dir, ec);
    }
  } cleanup;
  return services;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Services* s = Get();
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t eol = input.find('\n');
  std::string operation(input.substr(0, eol));
  std::string body(eol == std::string_view::npos ? std::string_view() : input.substr(eol + 1));
  std::string target = operation.find('.') == std::string::npos ? "AWSGlue." + operation : operation;
  s->clock.Advance(1000);
  api::WireResponse response = s->router->Handle(target, body, "fuzzer");
  if (response.http_status >= 500)
    Die("HTTP " + std::to_string(response.http_status) + " for " + target + ": " + response.body);
  if (!IsValidUtf8(response.body)) Die("response body is not UTF-8: " + SanitizeUtf8(response.body));
  Json parsed = ParseJson(response.body);
  if (parsed.is_discarded() || !parsed.is_object()) Die("response is not a JSON object: " + response.body);
  if (response.http_status != 200 && !parsed.contains("__type"))
    Die("error response without __type: " + response.body);
  return 0;
}
