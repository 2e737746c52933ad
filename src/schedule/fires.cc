// Scheduler's engine (scheduler.h): job-run events, fires, scheduled triggers, the thread.
#include <algorithm>
#include <exception>
#include <set>

#include "common/cron.h"
#include "common/logging.h"
#include "common/strings.h"
#include "crawler/crawler_service.h"
#include "schedule/schedule_store.h"
#include "schedule/scheduler.h"

namespace openglue::schedule {

using namespace internal;

Status RecordJobRunEnded(store::Transaction* txn, const jobs::JobRunEnded& ended) {
  Json event{{"job", ended.job},
             {"state", std::string(jobs::JobRunStateName(ended.state))},
             {"previous_run_id", ended.previous_run_id},
             {"trigger", ended.trigger_name},
             {"retrying", ended.retrying}};
  return txn->Put(kEvent, ended.run_id, DumpJson(event));
}

Status RecordCrawlEnded(store::Transaction* txn, const std::string& crawl_id,
                        const std::string& crawler, const std::string& crawl_state) {
  Json event{{"crawler", crawler}, {"state", crawl_state}};
  return txn->Put(kEvent, "crawl:" + crawl_id, DumpJson(event));
}

namespace {

// Where a crawler started by a workflow run is remembered until its crawl ends (a crawler runs
// one crawl at a time).
std::string CrawlerIndexKey(const std::string& crawler) { return store::MakeKey({"crawler", crawler}); }

// A crawl's state as the state of a workflow-run action (job-run state names).
std::string ActionStateOfCrawl(const std::string& crawl_state) {
  if (crawl_state == "CANCELLED") return "STOPPED";
  if (crawl_state == "SUCCEEDED" || crawl_state == "FAILED") return crawl_state;
  return "ERROR";
}

// The node (NodeId) an action starts.
std::string ActionNode(const Json& action) {
  std::string job = Str(action, "JobName");
  return job.empty() ? NodeId("crawler", Str(action, "CrawlerName")) : NodeId("job", job);
}

Json NodesJson(const std::set<std::string>& nodes) {
  Json out = Json::array();
  for (const std::string& node : nodes) out.push_back(node);
  return out;
}

// The lineage of a run outside workflows that just ended (kChain at `key`, or at `previous`,
// the attempt a retry continues), with `self` in it: only `self` for a run that no conditional
// fire started. The row is consumed by the run's final end; an attempt with a retry to come keeps
// it for the retry (which finds it through its previous run id).
Result<std::set<std::string>> TakeLineage(store::Transaction* txn, const std::string& key,
                                          const std::string& previous, bool retrying,
                                          const std::string& self) {
  std::set<std::string> nodes{self};
  std::string found = key;
  OG_ASSIGN_OR_RETURN(auto row, Load(txn, kChain, key, "the trigger chain of " + key));
  if (!row && !previous.empty()) {
    found = previous;
    OG_ASSIGN_OR_RETURN(row, Load(txn, kChain, previous, "the trigger chain of " + previous));
  }
  if (!row) return nodes;
  for (const Json& node : Arr(*row, "nodes"))
    if (node.is_string()) nodes.insert(node.get<std::string>());
  OG_RETURN_NOT_OK(txn->Delete(kChain, found).status());
  if (retrying) OG_RETURN_NOT_OK(txn->Put(kChain, key, DumpJson(*row)));
  return nodes;
}

// `trigger` with only the actions whose node is not in `ran`; each one left out is logged with
// `why`.
Json WithoutActionsThatRan(const Json& trigger, const std::set<std::string>& ran,
                           const std::string& why) {
  Json kept = Json::array();
  for (const Json& action : Arr(trigger, "Actions")) {
    if (!ran.count(ActionNode(action))) {
      kept.push_back(action);
      continue;
    }
    OG_LOG(kWarn, "trigger " << Str(trigger, "Name") << ": action "
                             << Str(action, "JobName", Str(action, "CrawlerName"))
                             << " not started: " << why);
  }
  Json out = trigger;
  out["Actions"] = std::move(kept);
  return out;
}

}  // namespace

Scheduler::Scheduler(store::MetadataStore* store, const Clock* clock, Random* random,
                     jobs::JobService* jobs, SchedulerOptions options)
    : store_(store), clock_(clock), jobs_(jobs), options_(std::move(options)), random_(random) {}

Scheduler::~Scheduler() { Stop(); }

Result<std::unique_ptr<Scheduler>> Scheduler::Make(store::MetadataStore* store, const Clock* clock,
                                                   Random* random, jobs::JobService* jobs,
                                                   SchedulerOptions options) {
  if (!store || !clock || !random || !jobs) return Status::Internal("Scheduler needs its parts");
  return std::unique_ptr<Scheduler>(new Scheduler(store, clock, random, jobs, std::move(options)));
}

const std::vector<std::pair<std::string, Scheduler::Operation>>& Scheduler::Operations() {
  static const std::vector<std::pair<std::string, Operation>> kOperations = {
      {"CreateTrigger", &Scheduler::CreateTrigger},
      {"GetTrigger", &Scheduler::GetTrigger},
      {"GetTriggers", &Scheduler::GetTriggers},
      {"ListTriggers", &Scheduler::ListTriggers},
      {"BatchGetTriggers", &Scheduler::BatchGetTriggers},
      {"UpdateTrigger", &Scheduler::UpdateTrigger},
      {"DeleteTrigger", &Scheduler::DeleteTrigger},
      {"StartTrigger", &Scheduler::StartTrigger},
      {"StopTrigger", &Scheduler::StopTrigger},
      {"CreateWorkflow", &Scheduler::CreateWorkflow},
      {"GetWorkflow", &Scheduler::GetWorkflow},
      {"UpdateWorkflow", &Scheduler::UpdateWorkflow},
      {"DeleteWorkflow", &Scheduler::DeleteWorkflow},
      {"ListWorkflows", &Scheduler::ListWorkflows},
      {"BatchGetWorkflows", &Scheduler::BatchGetWorkflows},
      {"StartWorkflowRun", &Scheduler::StartWorkflowRun},
      {"GetWorkflowRun", &Scheduler::GetWorkflowRun},
      {"GetWorkflowRuns", &Scheduler::GetWorkflowRuns},
      {"StopWorkflowRun", &Scheduler::StopWorkflowRun},
      {"ResumeWorkflowRun", &Scheduler::ResumeWorkflowRun},
      {"GetWorkflowRunProperties", &Scheduler::GetWorkflowRunProperties},
      {"PutWorkflowRunProperties", &Scheduler::PutWorkflowRunProperties},
  };
  return kOperations;
}

std::string Scheduler::NewId(const std::string& prefix) {
  MutexLock lock(&random_mutex_);
  return prefix + random_->FromAlphabet("0123456789abcdef", 64);
}

// ---------------------------------------------------------------------------------------------
// Fires

Result<std::string> Scheduler::RecordFire(store::Transaction* txn, const Json& trigger,
                                          Json* workflow_run,
                                          const std::set<std::string>* lineage) {
  std::string trigger_name = Str(trigger, "Name");
  double now = clock_->NowSeconds();
  // Fire ids sort in the order they were recorded.
  std::string stamp = std::to_string(clock_->NowMillis());
  stamp.insert(0, 15 - std::min<size_t>(15, stamp.size()), '0');
  std::string fire_id = "fire_" + stamp + "_" + NewId("").substr(0, 16);
  std::string workflow_run_id = workflow_run ? Str(*workflow_run, "WorkflowRunId") : "";
  Json actions = Json::array();
  for (const Json& action : Arr(trigger, "Actions")) {
    bool is_job = !Str(action, "JobName").empty();
    Json entry = Json::object();
    for (const char* member : {"JobName", "CrawlerName", "Arguments", "Timeout",
                               "SecurityConfiguration", "NotificationProperty"})
      if (action.contains(member) && !action[member].is_null()) entry[member] = action[member];
    entry["run_id"] = NewId(is_job ? "jr_" : "crawl_");
    if (lineage && !workflow_run) {
      // Written with the fire, so a run's lineage exists from before the run does. A crawl has
      // no id in advance: its lineage is written once it starts (ExecuteFires).
      std::set<std::string> nodes = *lineage;
      nodes.insert(ActionNode(action));
      if (is_job)
        OG_RETURN_NOT_OK(txn->Put(kChain, entry["run_id"].get<std::string>(),
                                  DumpJson(Json{{"nodes", NodesJson(nodes)}})));
      else
        entry["lineage"] = NodesJson(nodes);
    }
    if (workflow_run) {
      // The job learns which workflow run it belongs to (Glue's two arguments).
      if (!entry.contains("Arguments") || !entry["Arguments"].is_object())
        entry["Arguments"] = Json::object();
      entry["Arguments"]["--WORKFLOW_NAME"] = Str(*workflow_run, "Name");
      entry["Arguments"]["--WORKFLOW_RUN_ID"] = workflow_run_id;
      OG_RETURN_NOT_OK(txn->Put(kRunIndex, entry["run_id"].get<std::string>(),
                                DumpJson(Json{{"workflow_run_id", workflow_run_id},
                                              {"workflow", Str(*workflow_run, "Name")},
                                              {"trigger", trigger_name}})));
      Json& og = (*workflow_run)["_og"];
      if (!og.is_object()) og = Json::object();
      if (!og.contains("actions") || !og["actions"].is_array()) og["actions"] = Json::array();
      og["actions"].push_back({{"type", is_job ? "JOB" : "CRAWLER"},
                               {"name", is_job ? Str(action, "JobName") : Str(action, "CrawlerName")},
                               {"run_id", entry["run_id"]},
                               {"trigger", trigger_name},
                               {"state", "STARTING"},
                               {"started_on", now}});
    }
    actions.push_back(std::move(entry));
  }
  if (workflow_run) {
    Json& fired = (*workflow_run)["_og"]["fired"];
    if (!fired.is_array()) fired = Json::array();
    fired.push_back(trigger_name);
  }
  Json fire{{"trigger", trigger_name},
            {"workflow_run_id", workflow_run_id},
            {"workflow", workflow_run ? Str(*workflow_run, "Name") : ""},
            {"recorded_ms", clock_->NowMillis()},
            {"actions", std::move(actions)}};
  OG_RETURN_NOT_OK(txn->Put(kFire, fire_id, DumpJson(fire)));
  OG_LOG(kInfo, "trigger " << trigger_name << " fired"
                           << (workflow_run_id.empty() ? "" : " in workflow run " + workflow_run_id));
  return fire_id;
}

Status Scheduler::ExecuteFires() {
  // Every recorded fire, oldest first.
  std::vector<std::pair<std::string, Json>> fires;
  {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
    OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kFire, store::ScanOptions{}));
    for (auto& row : rows) {
      Json fire = ParseJson(row.doc);
      if (!fire.is_object()) fire = Json{{"actions", Json::array()}};  // dropped below
      fires.emplace_back(row.key, std::move(fire));
    }
  }
  if (fires.empty()) return Status::OK();
  // Carry out every action not done yet; the outcomes are recorded together afterwards, in one
  // transaction (a crash before it carries the actions out again: starting a job run whose id
  // exists does nothing).
  struct Outcome {
    size_t fire;
    size_t action;
    Status started;
    std::string final_state;  // of the workflow-run action when it did not start
  };
  std::vector<Outcome> outcomes;
  std::map<std::string, bool> running;  // workflow run id -> still RUNNING (read once a pass)
  std::vector<jobs::JobService::TriggeredRun> job_runs;
  std::vector<size_t> job_outcomes;  // outcomes[job_outcomes[j]] is job_runs[j]'s
  for (size_t f = 0; f < fires.size(); ++f) {
    const Json& fire = fires[f].second;
    std::string trigger = Str(fire, "trigger");
    std::string workflow = Str(fire, "workflow");
    std::string workflow_run_id = Str(fire, "workflow_run_id");
    const Json& actions = Arr(fire, "actions");
    for (size_t i = 0; i < actions.size(); ++i) {
      const Json& action = actions[i];
      if (action.value("done", false)) continue;
      // A workflow run that was stopped starts nothing more.
      if (!workflow_run_id.empty() && !running.count(workflow_run_id)) {
        OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
        auto run = LoadWorkflowRun(txn.get(), workflow, workflow_run_id);
        running[workflow_run_id] = run.ok() && Str(run->second, "Status") == "RUNNING";
      }
      Outcome outcome{f, i, Status::OK(), "ERROR"};
      if (!workflow_run_id.empty() && !running[workflow_run_id]) {
        outcome.started =
            Status::InvalidInput("The workflow run was stopped before this action started.");
        outcome.final_state = "STOPPED";
      } else if (!Str(action, "JobName").empty()) {
        // Started below, all together.
        Json request{{"JobName", Str(action, "JobName")}};
        for (const char* member : {"Arguments", "Timeout", "SecurityConfiguration",
                                   "NotificationProperty"})
          if (action.contains(member)) request[member] = action[member];
        job_runs.push_back({std::move(request), Str(action, "run_id"), trigger});
        job_outcomes.push_back(outcomes.size());
      } else {
        // A started crawl ends through RecordCrawlEnded (the crawler module).
        outcome.started = options_.start_crawler
                              ? options_.start_crawler(Str(action, "CrawlerName"))
                              : Status::InvalidInput(kCrawlersUnavailable);
      }
      outcomes.push_back(std::move(outcome));
    }
  }
  // The job runs of every fire in one transaction: a burst of fires costs one commit.
  std::vector<Status> started;
  try {
    started = jobs_->StartTriggeredRuns(job_runs);
  } catch (const std::exception& e) {
    started.assign(job_runs.size(), Status::Internal(SanitizeUtf8(e.what())));
  }
  for (size_t j = 0; j < job_outcomes.size() && j < started.size(); ++j)
    outcomes[job_outcomes[j]].started = started[j];
  for (const Outcome& outcome : outcomes) {
    if (outcome.started.ok()) continue;
    const Json& action = fires[outcome.fire].second["actions"][outcome.action];
    OG_LOG(kWarn, "trigger " << Str(fires[outcome.fire].second, "trigger") << ": action "
                             << Str(action, "JobName", Str(action, "CrawlerName"))
                             << " not started: " << outcome.started.message());
  }

  // Record the outcomes: actions done, failed starts as their actions' ends in workflow runs.
  std::vector<std::pair<std::string, std::string>> to_stop;  // job, run id
  {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
    std::map<std::string, std::pair<std::string, Json>> runs;  // workflow run id -> (key, run)
    for (const Outcome& outcome : outcomes) {
      Json& fire = fires[outcome.fire].second;
      Json& action = fire["actions"][outcome.action];
      action["done"] = true;
      if (!outcome.started.ok()) action["error"] = outcome.started.message();
      std::string workflow_run_id = Str(fire, "workflow_run_id");
      bool is_crawler = !Str(action, "CrawlerName").empty();
      if (workflow_run_id.empty()) {
        // The lineage of a run that never started goes; a started crawl's is written now.
        if (!outcome.started.ok() && !is_crawler)
          OG_RETURN_NOT_OK(txn->Delete(kChain, Str(action, "run_id")).status());
        if (outcome.started.ok() && is_crawler && action.contains("lineage"))
          OG_RETURN_NOT_OK(txn->Put(kChain, CrawlerIndexKey(Str(action, "CrawlerName")),
                                    DumpJson(Json{{"nodes", action["lineage"]}})));
        continue;
      }
      if (outcome.started.ok() && is_crawler)
        OG_RETURN_NOT_OK(txn->Put(kRunIndex, CrawlerIndexKey(Str(action, "CrawlerName")),
                                  DumpJson(Json{{"workflow_run_id", workflow_run_id},
                                                {"workflow", Str(fire, "workflow")},
                                                {"trigger", Str(fire, "trigger")},
                                                {"run_id", Str(action, "run_id")}})));
      if (outcome.started.ok()) continue;
      if (!runs.count(workflow_run_id)) {
        auto run = LoadWorkflowRun(txn.get(), Str(fire, "workflow"), workflow_run_id);
        if (!run.ok()) continue;
        runs[workflow_run_id] = std::move(*run);
      }
      for (Json& entry : runs[workflow_run_id].second["_og"]["actions"])
        if (Str(entry, "run_id") == Str(action, "run_id")) {
          entry["state"] = outcome.final_state;
          entry["error"] = TruncateUtf8(outcome.started.message(), 2048);
        }
    }
    for (auto& [id, run] : runs) {
      MaybeComplete(&run.second, clock_->NowSeconds());
      OG_RETURN_NOT_OK(txn->Put(kWorkflowRun, run.first, DumpJson(run.second)));
    }
    for (const auto& [fire_id, fire] : fires) {
      bool all_done = true;
      for (const Json& action : Arr(fire, "actions"))
        if (!action.value("done", false)) all_done = false;
      if (all_done) OG_RETURN_NOT_OK(txn->Delete(kFire, fire_id).status());
      else OG_RETURN_NOT_OK(txn->Put(kFire, fire_id, DumpJson(fire)));
    }
    OG_RETURN_NOT_OK(txn->Commit());
    // A workflow run stopped while its runs were being started: stop those too.
    for (const Outcome& outcome : outcomes) {
      const Json& fire = fires[outcome.fire].second;
      const Json& action = fire["actions"][outcome.action];
      std::string workflow_run_id = Str(fire, "workflow_run_id");
      if (!outcome.started.ok() || workflow_run_id.empty() || Str(action, "JobName").empty())
        continue;
      auto read = store_->BeginRead();
      if (!read.ok()) continue;
      auto run = LoadWorkflowRun(read->get(), Str(fire, "workflow"), workflow_run_id);
      if (run.ok() && Str(run->second, "Status") != "RUNNING")
        to_stop.emplace_back(Str(action, "JobName"), Str(action, "run_id"));
    }
  }
  for (const auto& [job, run_id] : to_stop)
    (void)jobs_->BatchStopJobRun(Json{{"JobName", job}, {"JobRunIds", Json::array({run_id})}});
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------
// Job-run events

Status Scheduler::ProcessEvents() {
  std::vector<std::string> ids;
  {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
    OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kEvent, store::ScanOptions{"", "", -1, true}));
    for (auto& row : rows) ids.push_back(row.key);
  }
  for (const std::string& id : ids) OG_RETURN_NOT_OK(ProcessEvent(id));
  return Status::OK();
}

Status Scheduler::ProcessEvent(const std::string& run_id) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto text, txn->Get(kEvent, run_id));
  if (!text) return Status::OK();
  OG_RETURN_NOT_OK(txn->Delete(kEvent, run_id).status());
  Json event = ParseJson(*text);
  if (!event.is_object()) {
    OG_LOG(kError, "an unreadable job-run event for " << run_id << " was dropped");
    return txn->Commit();
  }
  // A job run's end, or a crawl's (the crawler module's events).
  const bool crawl = event.contains("crawler");
  const std::string job = Str(event, crawl ? "crawler" : "job"), state = Str(event, "state");
  const char* name_member = crawl ? "CrawlerName" : "JobName";
  const char* state_member = crawl ? "CrawlState" : "State";
  std::string previous = Str(event, "previous_run_id");
  bool retrying = event.value("retrying", false);

  // Which workflow run (if any) the job run belongs to; a retry belongs where its first attempt
  // did; a crawl, where its crawler was last started by a workflow run.
  std::optional<Json> index;
  std::string action_id = run_id;
  if (crawl) {
    OG_ASSIGN_OR_RETURN(index, Load(txn.get(), kRunIndex, CrawlerIndexKey(job), "crawler " + job));
    if (index) {
      action_id = Str(*index, "run_id");
      OG_RETURN_NOT_OK(txn->Delete(kRunIndex, CrawlerIndexKey(job)).status());
    }
  } else {
    OG_ASSIGN_OR_RETURN(index, Load(txn.get(), kRunIndex, run_id, "run index " + run_id));
  }
  bool is_retry = false;
  if (!crawl && !index && !previous.empty()) {
    OG_ASSIGN_OR_RETURN(index, Load(txn.get(), kRunIndex, previous, "run index " + previous));
    if (index) {
      is_retry = true;
      OG_RETURN_NOT_OK(txn->Put(kRunIndex, run_id, DumpJson(*index)));
    }
  }
  std::string scope = index ? Str(*index, "workflow_run_id") : "";
  std::string workflow = index ? Str(*index, "workflow") : "";
  std::optional<std::pair<std::string, Json>> run;
  if (!scope.empty()) {
    auto loaded = LoadWorkflowRun(txn.get(), workflow, scope);
    // The workflow (run) was deleted: nothing to update or fire.
    if (!loaded.ok()) return txn->Commit();
    run = std::move(*loaded);
  }
  double now = clock_->NowSeconds();
  if (run) {
    Json& actions = run->second["_og"]["actions"];
    if (!actions.is_array()) actions = Json::array();
    bool found = false;
    for (Json& entry : actions) {
      if (Str(entry, "run_id") == action_id) {
        found = true;
        // A failed attempt with a retry to come stays active in the workflow run.
        if (!retrying) entry["state"] = crawl ? ActionStateOfCrawl(state) : state;
        if (crawl) entry["crawl_state"] = state;
        entry["retrying"] = retrying;
      } else if (is_retry && Str(entry, "run_id") == previous) {
        entry["state"] = "FAILED";
        entry["retrying"] = false;
      }
    }
    if (!found && !crawl) {
      std::string trigger = Str(*index, "trigger");
      actions.push_back({{"type", "JOB"}, {"name", job}, {"run_id", run_id}, {"trigger", trigger},
                         {"state", retrying ? "RUNNING" : state}, {"retrying", retrying},
                         {"started_on", now}});
    }
  }
  // What this run's fires may not start again: in a workflow run, every node that ran in it;
  // outside workflows, the run's lineage (scheduler.h, "Cycles").
  std::set<std::string> lineage;
  if (!run) {
    OG_ASSIGN_OR_RETURN(lineage, TakeLineage(txn.get(), crawl ? CrawlerIndexKey(job) : run_id,
                                             crawl ? "" : previous, retrying,
                                             NodeId(crawl ? "crawler" : "job", job)));
  }
  bool may_fire = !retrying && (!run || Str(run->second, "Status") == "RUNNING");
  if (may_fire) {
    // Conditional triggers of this scope with a condition this run satisfies.
    OG_ASSIGN_OR_RETURN(auto triggers, txn->Scan(kTrigger, store::ScanOptions{}));
    for (const auto& row : triggers) {
      // Most triggers are not conditional: skip them without parsing.
      if (row.doc.find("\"CONDITIONAL\"") == std::string::npos) continue;
      Json trigger = ParseJson(row.doc);
      if (!trigger.is_object() || Str(trigger, "Type") != "CONDITIONAL" ||
          Str(trigger, "State") != "ACTIVATED" || Str(trigger, "WorkflowName") != workflow)
        continue;
      const Json& predicate = Obj(trigger, "Predicate");
      const Json& conditions = Arr(predicate, "Conditions");
      std::vector<size_t> matched;
      for (size_t i = 0; i < conditions.size(); ++i)
        if (Str(conditions[i], name_member) == job && Str(conditions[i], state_member) == state)
          matched.push_back(i);
      if (matched.empty()) continue;
      std::string pred_key = store::MakeKey({row.key, scope});
      OG_ASSIGN_OR_RETURN(auto pred, Load(txn.get(), kPredicate, pred_key, "predicate " + row.key));
      Json satisfied = pred ? Obj(*pred, "satisfied") : Json::object();
      for (size_t i : matched) satisfied[std::to_string(i)] = action_id;
      // Outside workflows the fire's lineage is that of every run that satisfied it.
      std::set<std::string> led = lineage;
      if (pred)
        for (const Json& node : Arr(*pred, "lineage"))
          if (node.is_string()) led.insert(node.get<std::string>());
      bool fire = Str(predicate, "Logical", "AND") == "ANY";
      if (!fire) {
        fire = true;
        for (size_t i = 0; i < conditions.size(); ++i)
          if (!satisfied.contains(std::to_string(i))) fire = false;
      }
      if (fire) {
        // The runs that satisfied the predicate are consumed by this fire, also when every
        // action is left out (a cycle ends here).
        OG_RETURN_NOT_OK(txn->Delete(kPredicate, pred_key).status());
        Json allowed;
        if (run) {
          std::set<std::string> ran;
          for (const Json& entry : Arr(Obj(run->second, "_og"), "actions"))
            ran.insert(NodeId(ToLower(Str(entry, "type")), Str(entry, "name")));
          allowed = WithoutActionsThatRan(trigger, ran,
                                          "it ran in workflow run " + scope +
                                              " already (a node runs once per workflow run)");
        } else {
          allowed = WithoutActionsThatRan(
              trigger, led,
              "it is in the lineage of run " + action_id +
                  " (a chain of conditional triggers outside workflows starts each job and "
                  "crawler once)");
        }
        if (!Arr(allowed, "Actions").empty())
          OG_RETURN_NOT_OK(
              RecordFire(txn.get(), allowed, run ? &run->second : nullptr, run ? nullptr : &led)
                  .status());
      } else {
        Json pending{{"satisfied", satisfied}};
        if (!run) pending["lineage"] = NodesJson(led);
        OG_RETURN_NOT_OK(txn->Put(kPredicate, pred_key, DumpJson(pending)));
      }
    }
  }
  if (run) {
    MaybeComplete(&run->second, now);
    OG_RETURN_NOT_OK(txn->Put(kWorkflowRun, run->first, DumpJson(run->second)));
    if (Str(run->second, "Status") == "COMPLETED" || Str(run->second, "Status") == "STOPPED")
      OG_LOG(kInfo, "workflow " << workflow << " run " << scope << " "
                                << Str(run->second, "Status"));
  }
  return txn->Commit();
}

// ---------------------------------------------------------------------------------------------
// Scheduled triggers

namespace {

using Schedules = std::map<std::string, std::pair<std::string, int64_t>>;

// The next fire times of `loaded` (name -> (schedule, last fire)): an entry whose schedule did
// not change keeps its pending time from `current`. Fires missed while the server was down are
// not replayed (as in Glue).
Schedules NextFires(const Schedules& loaded, const Schedules& current, int64_t now) {
  Schedules next;
  for (const auto& [name, entry] : loaded) {
    auto it = current.find(name);
    if (it != current.end() && it->second.first == entry.first) {
      next[name] = it->second;
      continue;
    }
    auto cron = CronSchedule::Parse(entry.first);
    if (!cron.ok()) continue;
    std::optional<int64_t> at = cron->NextAfter(std::max(now, entry.second));
    if (at) next[name] = {entry.first, *at};
  }
  return next;
}

// After the fires of `due` (name, due time), each entry's next time (or none).
void Advance(Schedules* schedules, const std::vector<std::pair<std::string, int64_t>>& due,
             int64_t now_ms) {
  for (const auto& [name, at] : due) {
    auto it = schedules->find(name);
    if (it == schedules->end()) continue;
    auto cron = CronSchedule::Parse(it->second.first);
    std::optional<int64_t> next = cron.ok() ? cron->NextAfter(std::max(at, now_ms)) : std::nullopt;
    if (next) it->second.second = *next;
    else schedules->erase(it);
  }
}

std::vector<std::pair<std::string, int64_t>> Due(const Schedules& schedules, int64_t now_ms) {
  std::vector<std::pair<std::string, int64_t>> due;
  for (const auto& [name, entry] : schedules)
    if (entry.second <= now_ms) due.emplace_back(name, entry.second);
  return due;
}

}  // namespace

Status Scheduler::ReloadSchedules() {
  Schedules triggers, crawlers;  // name -> (schedule, last fire)
  {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
    OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kTrigger, store::ScanOptions{}));
    for (const auto& row : rows) {
      Json trigger = ParseJson(row.doc);
      if (!trigger.is_object() || Str(trigger, "Type") != "SCHEDULED" ||
          Str(trigger, "State") != "ACTIVATED")
        continue;
      triggers[row.key] = {Str(trigger, "Schedule"), Int(Obj(trigger, "_og"), "last_fire_ms", 0)};
    }
    if (options_.start_crawler) {
      OG_ASSIGN_OR_RETURN(auto scheduled, crawler::ScheduledCrawlers(txn.get()));
      for (const auto& c : scheduled) crawlers[c.name] = {c.expression, c.last_fire_ms};
    }
  }
  int64_t now = clock_->NowMillis();
  MutexLock lock(&mutex_);
  next_fire_ = NextFires(triggers, next_fire_, now);
  crawler_next_fire_ = NextFires(crawlers, crawler_next_fire_, now);
  return Status::OK();
}

bool Scheduler::FireDueCrawlerSchedules(int64_t now_ms) {
  std::vector<std::pair<std::string, int64_t>> due;
  {
    MutexLock lock(&mutex_);
    due = Due(crawler_next_fire_, now_ms);
  }
  if (due.empty()) return true;
  // Claimed (the due time stored) before the crawl starts: a restart never starts a crawler
  // twice for one due time; a crawler still running then skips that fire, as in Glue.
  std::vector<std::string> claimed;
  Status st = [&]() -> Status {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
    for (const auto& [name, at] : due) {
      OG_ASSIGN_OR_RETURN(bool claim, crawler::ClaimScheduledCrawl(txn.get(), name, at));
      if (claim) claimed.push_back(name);
    }
    return txn->Commit();
  }();
  if (!st.ok()) {
    OG_LOG(kError, "crawler schedules not fired (tried again): " << st.message());
    return false;
  }
  for (const std::string& name : claimed) {
    Status started = options_.start_crawler(name);
    if (!started.ok())
      OG_LOG(kWarn, "the schedule of crawler " << name << " did not start a crawl: " << started.message());
  }
  MutexLock lock(&mutex_);
  Advance(&crawler_next_fire_, due, now_ms);
  return true;
}

int64_t Scheduler::FireDueSchedules(int64_t now_ms) {
  if (!FireDueCrawlerSchedules(now_ms)) return now_ms + 1000;  // the store failed: retry soon
  std::vector<std::pair<std::string, int64_t>> due;
  {
    MutexLock lock(&mutex_);
    due = Due(next_fire_, now_ms);
  }
  if (!due.empty()) {
    // Every fire due now in one transaction: recorded together, before any action starts.
    Status st = [&]() -> Status {
      OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
      for (const auto& [name, at] : due) {
        OG_ASSIGN_OR_RETURN(auto trigger, Load(txn.get(), kTrigger, name, "trigger " + name));
        if (!trigger || Str(*trigger, "State") != "ACTIVATED" ||
            Str(*trigger, "Type") != "SCHEDULED")
          continue;
        if (Int(Obj(*trigger, "_og"), "last_fire_ms", 0) >= at) continue;  // fired already
        std::string workflow = Str(*trigger, "WorkflowName");
        if (!workflow.empty()) {
          OG_ASSIGN_OR_RETURN(auto wf, Load(txn.get(), kWorkflow, workflow, "workflow " + workflow));
          if (wf)
            OG_RETURN_NOT_OK(CreateWorkflowRun(txn.get(), *wf, {*trigger}, Json::object(), nullptr,
                                               {}, false).status());
        } else {
          OG_RETURN_NOT_OK(RecordFire(txn.get(), *trigger, nullptr).status());
        }
        (*trigger)["_og"]["last_fire_ms"] = at;
        OG_RETURN_NOT_OK(txn->Put(kTrigger, name, DumpJson(*trigger)));
      }
      return txn->Commit();
    }();
    if (!st.ok()) {
      OG_LOG(kError, "scheduled triggers not fired (tried again): " << st.message());
      return now_ms + 1000;
    }
  }
  MutexLock lock(&mutex_);
  Advance(&next_fire_, due, now_ms);
  int64_t earliest = -1;
  for (const Schedules* schedules : {&next_fire_, &crawler_next_fire_})
    for (const auto& [name, entry] : *schedules)
      if (earliest < 0 || entry.second < earliest) earliest = entry.second;
  return earliest;
}

// ---------------------------------------------------------------------------------------------
// The thread

int64_t Scheduler::RunOnce() {
  MutexLock work(&work_mutex_);
  // Cleared before the reload reads the store: a trigger changed meanwhile marks it again.
  bool dirty;
  {
    MutexLock lock(&mutex_);
    dirty = schedules_dirty_;
    schedules_dirty_ = false;
  }
  auto log = [](const Status& st) {
    if (!st.ok()) OG_LOG(kError, "scheduler: " << st.message());
  };
  if (dirty) {
    Status reloaded = ReloadSchedules();
    if (!reloaded.ok()) {
      MutexLock lock(&mutex_);
      schedules_dirty_ = true;
    }
    log(reloaded);
  }
  log(ProcessEvents());
  log(ExecuteFires());
  int64_t next = FireDueSchedules(clock_->NowMillis());
  log(ExecuteFires());
  // Starting actions may have ended some at once (a missing script): their events are next.
  log(ProcessEvents());
  log(ExecuteFires());
  return next;
}

void Scheduler::Start() {
  MutexLock lock(&mutex_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void Scheduler::Loop() {
  for (;;) {
    {
      MutexLock lock(&mutex_);
      if (stopping_) return;
      woken_ = false;
    }
    int64_t next = -1;
    try {
      next = RunOnce();
    } catch (const std::exception& e) {
      OG_LOG(kError, "scheduler: " << SanitizeUtf8(e.what()));
      next = clock_->NowMillis() + 1000;
    } catch (...) {
      OG_LOG(kError, "scheduler: unknown exception");
      next = clock_->NowMillis() + 1000;
    }
    MutexLock lock(&mutex_);
    if (stopping_) return;
    if (woken_) continue;
    // Sleep until the next scheduled fire (a minute at most, to notice clock jumps) or a Wake.
    int64_t wait_ms = next < 0 ? 60000 : std::clamp<int64_t>(next - clock_->NowMillis(), 0, 60000);
    if (wait_ms > 0) wake_.WaitFor(&mutex_, std::chrono::milliseconds(wait_ms));
  }
}

void Scheduler::Wake() {
  {
    MutexLock lock(&mutex_);
    woken_ = true;
  }
  wake_.SignalAll();
}

void Scheduler::Stop() {
  std::thread thread;
  {
    MutexLock lock(&mutex_);
    stopping_ = true;
    thread = std::move(thread_);
  }
  wake_.SignalAll();
  if (thread.joinable()) thread.join();
}

}  // namespace openglue::schedule
