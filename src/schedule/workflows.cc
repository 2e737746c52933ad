// The workflow operations of Scheduler (scheduler.h).
#include <algorithm>
#include <map>
#include <set>

#include "common/logging.h"
#include "common/strings.h"
#include "resource/paging.h"
#include "resource/request.h"
#include "resource/tags.h"
#include "schedule/schedule_store.h"
#include "schedule/scheduler.h"

namespace openglue::schedule {

using namespace internal;

namespace {

Status WorkflowNotFound(const std::string& name) {
  return Status::EntityNotFound("Workflow " + name + " not found.");
}

bool IsStartTrigger(const Json& trigger) { return Str(trigger, "Type") != "CONDITIONAL"; }

// The triggers of `workflow`, in name order.
Result<std::vector<Json>> WorkflowTriggers(store::Transaction* txn, const std::string& workflow) {
  std::vector<Json> out;
  OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kTrigger, store::ScanOptions{}));
  for (const auto& row : rows) {
    Json trigger = ParseJson(row.doc);
    if (trigger.is_object() && Str(trigger, "WorkflowName") == workflow)
      out.push_back(std::move(trigger));
  }
  return out;
}

}  // namespace

Status WorkflowExists(store::Transaction* txn, const std::vector<std::string>& resource) {
  return ResourceExists(txn, kWorkflow, resource, "Workflow");
}

std::string Scheduler::WorkflowArn(const std::string& name) const {
  return resource::GlueArn(options_.region, options_.account_id, {"workflow", name});
}

Result<Json> Scheduler::Graph(store::Transaction* txn, const std::string& workflow,
                              const Json* run) {
  OG_ASSIGN_OR_RETURN(std::vector<Json> triggers, WorkflowTriggers(txn, workflow));
  Json nodes = Json::array(), edges = Json::array();
  std::set<std::string> seen_nodes;
  std::set<std::pair<std::string, std::string>> seen_edges;
  auto add_node = [&](const std::string& type, const std::string& name, Json details) {
    std::string id = NodeId(ToLower(type), name);
    if (!seen_nodes.insert(id).second) return id;
    Json node{{"Type", type}, {"Name", name}, {"UniqueId", id}};
    if (!details.is_null()) {
      const char* member = type == "TRIGGER" ? "TriggerDetails"
                           : type == "JOB"   ? "JobDetails"
                                             : "CrawlerDetails";
      node[member] = std::move(details);
    }
    nodes.push_back(std::move(node));
    return id;
  };
  // A job or crawler node, with its runs in `run` when there is one.
  const Json empty_actions = Json::array();
  const Json& actions = run ? Arr(Obj(*run, "_og"), "actions") : empty_actions;
  auto action_node = [&](const std::string& type, const std::string& name) {
    if (run == nullptr) return add_node(type, name, Json());
    Json list = Json::array();
    for (const Json& entry : actions) {
      if (Str(entry, "type") != type || Str(entry, "name") != name) continue;
      if (type == "JOB") {
        auto got = jobs_->GetJobRun(Json{{"JobName", name}, {"RunId", Str(entry, "run_id")}});
        if (got.ok()) {
          list.push_back((*got)["JobRun"]);
        } else {
          // Never started (the job was deleted, ...): the error Glue shows on the node.
          Json job_run{{"Id", Str(entry, "run_id")}, {"JobName", name},
                       {"TriggerName", Str(entry, "trigger")},
                       {"JobRunState", Str(entry, "state")}, {"StartedOn", entry.value("started_on", 0.0)}};
          if (entry.contains("error")) job_run["ErrorMessage"] = entry["error"];
          list.push_back(std::move(job_run));
        }
      } else {
        std::string state = Str(entry, "state");
        Json crawl{{"State", entry.contains("crawl_state") ? Str(entry, "crawl_state")
                             : state == "STOPPED"       ? "CANCELLED"
                             : IsFinalState(state)      ? "ERROR"
                                                        : "RUNNING"},
                   {"StartedOn", entry.value("started_on", 0.0)}};
        if (entry.contains("error")) crawl["ErrorMessage"] = entry["error"];
        list.push_back(std::move(crawl));
      }
    }
    return add_node(type, name, type == "JOB" ? Json{{"JobRuns", list}} : Json{{"Crawls", list}});
  };
  auto add_edge = [&](const std::string& from, const std::string& to) {
    if (seen_edges.insert({from, to}).second)
      edges.push_back({{"SourceId", from}, {"DestinationId", to}});
  };
  for (const Json& trigger : triggers) {
    std::string trigger_id =
        add_node("TRIGGER", Str(trigger, "Name"), Json{{"Trigger", Public(trigger)}});
    for (const Json& action : Arr(trigger, "Actions")) {
      std::string job = Str(action, "JobName");
      add_edge(trigger_id, job.empty() ? action_node("CRAWLER", Str(action, "CrawlerName"))
                                       : action_node("JOB", job));
    }
    for (const Json& condition : Arr(Obj(trigger, "Predicate"), "Conditions")) {
      std::string job = Str(condition, "JobName");
      add_edge(job.empty() ? action_node("CRAWLER", Str(condition, "CrawlerName"))
                           : action_node("JOB", job),
               trigger_id);
    }
  }
  // Runs of nodes that are no longer in the workflow's triggers still show.
  for (const Json& entry : actions) action_node(Str(entry, "type"), Str(entry, "name"));
  return Json{{"Nodes", std::move(nodes)}, {"Edges", std::move(edges)}};
}

Result<Json> Scheduler::PresentRun(store::Transaction* txn, const Json& stored, bool include_graph) {
  Json run = Public(stored);
  Json stats{{"TotalActions", 0},   {"TimeoutActions", 0}, {"FailedActions", 0},
             {"StoppedActions", 0}, {"SucceededActions", 0}, {"RunningActions", 0},
             {"ErroredActions", 0}, {"WaitingActions", 0}};
  for (const Json& entry : Arr(Obj(stored, "_og"), "actions")) {
    std::string state = Str(entry, "state");
    if (!IsFinalState(state) && Str(entry, "type") == "JOB") {
      // Active: the job run's own state tells running from waiting.
      OG_ASSIGN_OR_RETURN(auto facts, jobs::FindJobRun(txn, Str(entry, "run_id")));
      if (facts) state = facts->state;
    }
    stats["TotalActions"] = stats["TotalActions"].get<int>() + 1;
    const char* counter = state == "SUCCEEDED" ? "SucceededActions"
                          : state == "FAILED" || state == "EXPIRED" ? "FailedActions"
                          : state == "STOPPED"                      ? "StoppedActions"
                          : state == "TIMEOUT"                      ? "TimeoutActions"
                          : state == "ERROR"                        ? "ErroredActions"
                          : state == "WAITING"                      ? "WaitingActions"
                                                                    : "RunningActions";
    stats[counter] = stats[counter].get<int>() + 1;
  }
  run["Statistics"] = std::move(stats);
  if (include_graph) {
    OG_ASSIGN_OR_RETURN(run["Graph"], Graph(txn, Str(stored, "Name"), &stored));
  }
  return run;
}

Result<Json> Scheduler::PresentWorkflow(store::Transaction* txn, const Json& stored,
                                        bool include_graph) {
  Json workflow = Public(stored);
  std::string name = Str(stored, "Name");
  OG_ASSIGN_OR_RETURN(auto last, txn->Scan(kWorkflowRun, store::ScanOptions{store::PrefixOf({name}), "", 1, false}));
  if (!last.empty()) {
    OG_ASSIGN_OR_RETURN(Json run, ParseStored(last[0].doc, "workflow run of " + name));
    OG_ASSIGN_OR_RETURN(workflow["LastRun"], PresentRun(txn, run, false));
  }
  if (include_graph) {
    OG_ASSIGN_OR_RETURN(workflow["Graph"], Graph(txn, name, nullptr));
  }
  return workflow;
}

Result<Json> Scheduler::CreateWorkflow(const Json& request) {
  std::string name = Str(request, "Name");
  if (request.contains("MaxConcurrentRuns") && request["MaxConcurrentRuns"].is_number() &&
      Int(request, "MaxConcurrentRuns", 1) < 1)
    return Status::InvalidInput("MaxConcurrentRuns must be at least 1.");
  double now = clock_->NowSeconds();
  Json workflow{{"Name", name}, {"CreatedOn", now}, {"LastModifiedOn", now}};
  for (const char* member : {"Description", "DefaultRunProperties", "MaxConcurrentRuns"})
    if (request.contains(member) && !request[member].is_null()) workflow[member] = request[member];
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  Status st = txn->Insert(kWorkflow, name, DumpJson(workflow));
  if (st.code() == StatusCode::kAlreadyExists)
    return Status::AlreadyExists("Workflow with name " + name + " already exists.");
  OG_RETURN_NOT_OK(st);
  if (request.contains("Tags") && request["Tags"].is_object() && !request["Tags"].empty())
    OG_RETURN_NOT_OK(resource::AddTags(txn.get(), WorkflowArn(name), request["Tags"]));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"Name", name}};
}

Result<Json> Scheduler::GetWorkflow(const Json& request) {
  std::string name = Str(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto workflow, Load(txn.get(), kWorkflow, name, "workflow " + name));
  if (!workflow) return WorkflowNotFound(name);
  OG_ASSIGN_OR_RETURN(Json presented, PresentWorkflow(txn.get(), *workflow,
                                                      resource::GetBool(request, "IncludeGraph", false)));
  return Json{{"Workflow", std::move(presented)}};
}

Result<Json> Scheduler::UpdateWorkflow(const Json& request) {
  std::string name = Str(request, "Name");
  if (request.contains("MaxConcurrentRuns") && request["MaxConcurrentRuns"].is_number() &&
      Int(request, "MaxConcurrentRuns", 1) < 1)
    return Status::InvalidInput("MaxConcurrentRuns must be at least 1.");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto workflow, Load(txn.get(), kWorkflow, name, "workflow " + name));
  if (!workflow) return WorkflowNotFound(name);
  for (const char* member : {"Description", "DefaultRunProperties", "MaxConcurrentRuns"})
    if (request.contains(member) && !request[member].is_null()) (*workflow)[member] = request[member];
  (*workflow)["LastModifiedOn"] = clock_->NowSeconds();
  OG_RETURN_NOT_OK(txn->Put(kWorkflow, name, DumpJson(*workflow)));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json{{"Name", name}};
}

Result<Json> Scheduler::DeleteWorkflow(const Json& request) {
  std::string name = Str(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  // Its triggers and its run history go with it (runs of its jobs stay readable in jobs).
  OG_ASSIGN_OR_RETURN(std::vector<Json> triggers, WorkflowTriggers(txn.get(), name));
  for (const Json& trigger : triggers) {
    std::string trigger_name = Str(trigger, "Name");
    OG_RETURN_NOT_OK(txn->Delete(kTrigger, trigger_name).status());
    OG_RETURN_NOT_OK(txn->DeletePrefix(kPredicate, store::PrefixOf({trigger_name})).status());
    OG_RETURN_NOT_OK(resource::DeleteTags(txn.get(), TriggerArn(trigger_name)));
  }
  OG_ASSIGN_OR_RETURN(auto runs, txn->Scan(kWorkflowRun, store::ScanOptions{store::PrefixOf({name}), "", -1, true}));
  for (const auto& row : runs) {
    std::string id = row.key.substr(row.key.rfind(store::kKeySep) + 1);
    OG_RETURN_NOT_OK(txn->Delete(kWorkflowRunId, id).status());
  }
  OG_RETURN_NOT_OK(txn->DeletePrefix(kWorkflowRun, store::PrefixOf({name})).status());
  OG_RETURN_NOT_OK(txn->Delete(kWorkflow, name).status());
  OG_RETURN_NOT_OK(resource::DeleteTags(txn.get(), WorkflowArn(name)));
  OG_RETURN_NOT_OK(txn->Commit());
  TriggersChanged();
  return Json{{"Name", name}};
}

Result<Json> Scheduler::ListWorkflows(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  return resource::ListNames(txn.get(), kWorkflow, request,
                             std::min<int64_t>(resource::PageSize(request, 25), 25), "Workflows");
}

Result<Json> Scheduler::BatchGetWorkflows(const Json& request) {
  bool graph = resource::GetBool(request, "IncludeGraph", false);
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  Json workflows = Json::array(), missing = Json::array();
  for (const Json& name : Arr(request, "Names")) {
    if (!name.is_string()) continue;
    OG_ASSIGN_OR_RETURN(auto workflow, Load(txn.get(), kWorkflow, name.get<std::string>(),
                                            "workflow " + name.get<std::string>()));
    if (!workflow) {
      missing.push_back(name);
      continue;
    }
    OG_ASSIGN_OR_RETURN(Json presented, PresentWorkflow(txn.get(), *workflow, graph));
    workflows.push_back(std::move(presented));
  }
  return Json{{"Workflows", std::move(workflows)}, {"MissingWorkflows", std::move(missing)}};
}

Result<std::string> Scheduler::CreateWorkflowRun(store::Transaction* txn, const Json& workflow,
                                                  const std::vector<Json>& start_triggers,
                                                  const Json& run_properties,
                                                  const Json* resume_of,
                                                  const std::vector<std::string>& resume_nodes,
                                                  bool refuse_over_limit) {
  std::string name = Str(workflow, "Name");
  int64_t now_ms = clock_->NowMillis();
  double now = clock_->NowSeconds();
  std::string run_id = NewId("wr_");
  Json run{{"Name", name}, {"WorkflowRunId", run_id}, {"StartedOn", now}, {"Status", "RUNNING"}};
  Json properties = resume_of ? Obj(*resume_of, "WorkflowRunProperties")
                              : Obj(workflow, "DefaultRunProperties");
  for (auto& [k, v] : run_properties.items()) properties[k] = v;
  run["WorkflowRunProperties"] = std::move(properties);
  run["_og"] = {{"actions", Json::array()}, {"fired", Json::array()}};
  if (resume_of) run["PreviousRunId"] = Str(*resume_of, "WorkflowRunId");

  // MaxConcurrentRuns: a start over the limit is refused (API) or recorded as an ERROR run (a
  // scheduled fire), as Glue does.
  int64_t max_runs = Int(workflow, "MaxConcurrentRuns", 0);
  if (max_runs > 0) {
    int64_t running = 0;
    OG_ASSIGN_OR_RETURN(auto rows, txn->Scan(kWorkflowRun, store::ScanOptions{store::PrefixOf({name}), "", -1, false}));
    for (const auto& row : rows) {
      std::string status = Str(ParseJson(row.doc), "Status");
      if (status == "RUNNING" || status == "STOPPING") ++running;
    }
    if (running >= max_runs) {
      std::string message = "Concurrent runs exceeded for workflow: " + name;
      if (refuse_over_limit) return Status(StatusCode::kConcurrentRunsExceeded, message);
      run["Status"] = "ERROR";
      run["ErrorMessage"] = message;
      run["CompletedOn"] = now;
      std::string key = WorkflowRunKey(name, now_ms, run_id);
      OG_RETURN_NOT_OK(txn->Put(kWorkflowRun, key, DumpJson(run)));
      OG_RETURN_NOT_OK(txn->Put(kWorkflowRunId, run_id, key));
      OG_LOG(kWarn, message);
      return run_id;
    }
  }
  if (resume_of == nullptr) {
    for (const Json& trigger : start_triggers) OG_RETURN_NOT_OK(RecordFire(txn, trigger, &run).status());
  } else {
    // Re-run the given nodes with the actions of the triggers that started them, and let the
    // conditions the original run satisfied count for this one.
    std::set<std::string> nodes(resume_nodes.begin(), resume_nodes.end());
    std::map<std::string, std::set<std::string>> by_trigger;  // trigger -> node names
    std::map<std::string, const Json*> latest;                // node id -> last action entry
    for (const Json& entry : Arr(Obj(*resume_of, "_og"), "actions"))
      latest[NodeId(ToLower(Str(entry, "type")), Str(entry, "name"))] = &entry;
    for (const std::string& node : nodes) {
      const Json* entry = latest.at(node);
      by_trigger[Str(*entry, "trigger")].insert(Str(*entry, "name"));
    }
    for (const auto& [trigger_name, names] : by_trigger) {
      OG_ASSIGN_OR_RETURN(auto trigger, Load(txn, kTrigger, trigger_name, "trigger " + trigger_name));
      if (!trigger)
        return Status::InvalidInput("Trigger " + trigger_name +
                                    " that started the nodes to resume no longer exists.");
      Json only = *trigger;
      Json kept = Json::array();
      for (const Json& action : Arr(*trigger, "Actions"))
        if (names.count(Str(action, "JobName", Str(action, "CrawlerName")))) kept.push_back(action);
      only["Actions"] = std::move(kept);
      OG_RETURN_NOT_OK(RecordFire(txn, only, &run).status());
    }
    OG_ASSIGN_OR_RETURN(std::vector<Json> triggers, WorkflowTriggers(txn, name));
    for (const Json& trigger : triggers) {
      if (Str(trigger, "Type") != "CONDITIONAL") continue;
      const Json& conditions = Arr(Obj(trigger, "Predicate"), "Conditions");
      Json satisfied = Json::object();
      for (size_t i = 0; i < conditions.size(); ++i) {
        std::string job = Str(conditions[i], "JobName");
        auto it = latest.find(NodeId("job", job));
        if (job.empty() || it == latest.end() || nodes.count(it->first)) continue;
        if (Str(*it->second, "state") == Str(conditions[i], "State"))
          satisfied[std::to_string(i)] = Str(*it->second, "run_id");
      }
      if (!satisfied.empty())
        OG_RETURN_NOT_OK(txn->Put(kPredicate, store::MakeKey({Str(trigger, "Name"), run_id}),
                                  DumpJson(Json{{"satisfied", satisfied}})));
    }
  }
  // Nothing started (no start trigger, or start triggers without actions): nothing can run
  // later either, so the run is COMPLETED now rather than RUNNING for ever.
  if (Arr(Obj(run, "_og"), "actions").empty()) MaybeComplete(&run, now);
  std::string key = WorkflowRunKey(name, now_ms, run_id);
  OG_RETURN_NOT_OK(txn->Put(kWorkflowRun, key, DumpJson(run)));
  OG_RETURN_NOT_OK(txn->Put(kWorkflowRunId, run_id, key));
  OG_LOG(kInfo, "workflow " << name << " run " << run_id << " " << Str(run, "Status")
                            << (resume_of ? " (resumes " + Str(*resume_of, "WorkflowRunId") + ")" : ""));
  return run_id;
}

Result<Json> Scheduler::StartWorkflowRun(const Json& request) {
  std::string name = Str(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto workflow, Load(txn.get(), kWorkflow, name, "workflow " + name));
  if (!workflow) return WorkflowNotFound(name);
  OG_ASSIGN_OR_RETURN(std::vector<Json> triggers, WorkflowTriggers(txn.get(), name));
  std::vector<Json> starts;
  for (const Json& trigger : triggers)
    if (IsStartTrigger(trigger)) starts.push_back(trigger);
  // A workflow without a start trigger may be started, as on Glue: its run has no node to run
  // and completes at once (CreateWorkflowRun).
  OG_ASSIGN_OR_RETURN(std::string run_id,
                      CreateWorkflowRun(txn.get(), *workflow, starts, Obj(request, "RunProperties"),
                                        nullptr, {}, true));
  OG_RETURN_NOT_OK(txn->Commit());
  Wake();
  return Json{{"RunId", run_id}};
}

Result<Json> Scheduler::GetWorkflowRun(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto run, LoadWorkflowRun(txn.get(), Str(request, "Name"), Str(request, "RunId")));
  OG_ASSIGN_OR_RETURN(Json presented, PresentRun(txn.get(), run.second,
                                                 resource::GetBool(request, "IncludeGraph", false)));
  return Json{{"Run", std::move(presented)}};
}

Result<Json> Scheduler::GetWorkflowRuns(const Json& request) {
  std::string name = Str(request, "Name");
  bool graph = resource::GetBool(request, "IncludeGraph", false);
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto workflow, txn->Get(kWorkflow, name));
  if (!workflow) return WorkflowNotFound(name);
  OG_ASSIGN_OR_RETURN(resource::Page page,
                      resource::ScanPage(txn.get(), kWorkflowRun, store::PrefixOf({name}), request,
                                         resource::PageSize(request, 100)));
  Json runs = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json run, ParseStored(row.doc, "workflow run of " + name));
    OG_ASSIGN_OR_RETURN(Json presented, PresentRun(txn.get(), run, graph));
    runs.push_back(std::move(presented));
  }
  Json response{{"Runs", std::move(runs)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> Scheduler::StopWorkflowRun(const Json& request) {
  std::string name = Str(request, "Name");
  std::vector<std::pair<std::string, std::string>> to_stop;  // job, run id
  {
    OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
    OG_ASSIGN_OR_RETURN(auto run, LoadWorkflowRun(txn.get(), name, Str(request, "RunId")));
    std::string status = Str(run.second, "Status");
    if (status != "RUNNING")
      return Status(StatusCode::kIllegalWorkflowState,
                    "Workflow run " + Str(request, "RunId") + " is " + status +
                        "; only a RUNNING workflow run can be stopped.");
    run.second["Status"] = "STOPPING";
    for (const Json& entry : Arr(Obj(run.second, "_og"), "actions"))
      if (!IsFinalState(Str(entry, "state")) && Str(entry, "type") == "JOB")
        to_stop.emplace_back(Str(entry, "name"), Str(entry, "run_id"));
    MaybeComplete(&run.second, clock_->NowSeconds());
    OG_RETURN_NOT_OK(txn->Put(kWorkflowRun, run.first, DumpJson(run.second)));
    OG_RETURN_NOT_OK(txn->Commit());
  }
  // Each run's end arrives as an event; the workflow run is STOPPED once all have.
  for (const auto& [job, run_id] : to_stop) {
    auto stopped = jobs_->BatchStopJobRun(Json{{"JobName", job}, {"JobRunIds", Json::array({run_id})}});
    if (!stopped.ok()) OG_LOG(kWarn, "stopping job run " << run_id << ": " << stopped.status().message());
  }
  Wake();
  return Json::object();
}

Result<Json> Scheduler::ResumeWorkflowRun(const Json& request) {
  std::string name = Str(request, "Name");
  std::string original_id = Str(request, "RunId");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto workflow, Load(txn.get(), kWorkflow, name, "workflow " + name));
  if (!workflow) return WorkflowNotFound(name);
  OG_ASSIGN_OR_RETURN(auto original, LoadWorkflowRun(txn.get(), name, original_id));
  std::string status = Str(original.second, "Status");
  if (status != "COMPLETED" && status != "STOPPED")
    return Status(StatusCode::kIllegalWorkflowState,
                  "Workflow run " + original_id + " is " + status +
                      "; only a COMPLETED or STOPPED workflow run can be resumed.");
  std::map<std::string, std::string> node_state;  // node id -> state of its last action
  for (const Json& entry : Arr(Obj(original.second, "_og"), "actions"))
    node_state[NodeId(ToLower(Str(entry, "type")), Str(entry, "name"))] = Str(entry, "state");
  std::vector<std::string> nodes;
  for (const Json& id : Arr(request, "NodeIds")) {
    std::string node = id.is_string() ? id.get<std::string>() : "";
    auto it = node_state.find(node);
    if (it == node_state.end())
      return Status::InvalidInput("Node " + node + " did not run in workflow run " + original_id +
                                  "; give the UniqueId of a job or crawler node that ran.");
    if (it->second == "SUCCEEDED")
      return Status::InvalidInput("Node " + node + " succeeded in workflow run " + original_id +
                                  "; only nodes that did not succeed can be resumed.");
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
  }
  if (nodes.empty()) return Status::InvalidInput("NodeIds lists no node to resume.");
  OG_ASSIGN_OR_RETURN(std::string run_id,
                      CreateWorkflowRun(txn.get(), *workflow, {}, Json::object(), &original.second,
                                        nodes, true));
  OG_RETURN_NOT_OK(txn->Commit());
  Wake();
  Json ids = Json::array();
  for (const std::string& node : nodes) ids.push_back(node);
  return Json{{"RunId", run_id}, {"NodeIds", std::move(ids)}};
}

Result<Json> Scheduler::GetWorkflowRunProperties(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto run, LoadWorkflowRun(txn.get(), Str(request, "Name"), Str(request, "RunId")));
  return Json{{"RunProperties", Obj(run.second, "WorkflowRunProperties")}};
}

Result<std::optional<WorkflowRunRef>> Scheduler::WorkflowRunOfJobRun(const std::string& job,
                                                                     const std::string& run_id) {
  // A retry attempt is indexed only when it ends (ProcessEvent): until then, follow its
  // PreviousRunId back to the attempt that was. Glue allows at most 10 retries.
  const std::optional<WorkflowRunRef> kNone;
  std::string id = run_id;
  for (int attempts = 0; attempts <= 11 && !id.empty(); ++attempts) {
    {
      OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
      OG_ASSIGN_OR_RETURN(auto index, Load(txn.get(), kRunIndex, id, "run index " + id));
      if (index)
        return std::optional<WorkflowRunRef>(
            WorkflowRunRef{Str(*index, "workflow"), Str(*index, "workflow_run_id")});
    }
    Result<Json> got = jobs_->GetJobRun(Json{{"JobName", job}, {"RunId", id}});
    if (got.status().code() == StatusCode::kEntityNotFound) return kNone;
    OG_RETURN_NOT_OK(got.status());
    const Json& attempt = Obj(*got, "JobRun");
    // Only the job service's own retries continue an attempt; StartJobRun's JobRunId (which
    // sets PreviousRunId too, to anything) starts a run of its own, Attempt 0.
    if (Int(attempt, "Attempt", 0) <= 0) return kNone;
    id = Str(attempt, "PreviousRunId");
  }
  return kNone;
}

Result<Json> Scheduler::PutWorkflowRunProperties(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto run, LoadWorkflowRun(txn.get(), Str(request, "Name"), Str(request, "RunId")));
  Json properties = Obj(run.second, "WorkflowRunProperties");
  for (auto& [k, v] : Obj(request, "RunProperties").items()) properties[k] = v;
  run.second["WorkflowRunProperties"] = std::move(properties);
  OG_RETURN_NOT_OK(txn->Put(kWorkflowRun, run.first, DumpJson(run.second)));
  OG_RETURN_NOT_OK(txn->Commit());
  return Json::object();
}

}  // namespace openglue::schedule
