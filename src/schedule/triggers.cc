// The trigger operations of Scheduler (scheduler.h).
#include <set>

#include "common/logging.h"
#include "common/strings.h"
#include "resource/paging.h"
#include "resource/request.h"
#include "resource/tags.h"
#include "common/cron.h"
#include "schedule/schedule_store.h"
#include "schedule/scheduler.h"

namespace openglue::schedule {

using namespace internal;

namespace {

const std::set<std::string> kConditionJobStates = {"SUCCEEDED", "STOPPED", "FAILED", "TIMEOUT"};
const std::set<std::string> kConditionCrawlStates = {"SUCCEEDED", "FAILED", "CANCELLED"};

Status TriggerNotFound(const std::string& name) {
  return Status::EntityNotFound("Trigger " + name + " not found.");
}

// Whether `trigger` has an action that starts job `job`.
bool StartsJob(const Json& trigger, const std::string& job) {
  for (const Json& action : Arr(trigger, "Actions"))
    if (Str(action, "JobName") == job) return true;
  return false;
}

}  // namespace

Status TriggerExists(store::Transaction* txn, const std::vector<std::string>& resource) {
  return ResourceExists(txn, kTrigger, resource, "Trigger");
}

void Scheduler::TriggersChanged() {
  {
    MutexLock lock(&mutex_);
    schedules_dirty_ = true;
  }
  Wake();
}

std::string Scheduler::TriggerArn(const std::string& name) const {
  return resource::GlueArn(options_.region, options_.account_id, {"trigger", name});
}

Result<Json> Scheduler::CheckTrigger(store::Transaction* txn, Json trigger,
                                     const std::string& /*old_workflow_start*/) {
  std::string type = Str(trigger, "Type");
  if (type == "SCHEDULED") {
    std::string schedule = Str(trigger, "Schedule");
    if (schedule.empty()) return Status::InvalidInput("A SCHEDULED trigger needs a Schedule.");
    OG_RETURN_NOT_OK(CronSchedule::Parse(schedule).status());
  }
  if (type == "CONDITIONAL") {
    const Json& conditions = Arr(Obj(trigger, "Predicate"), "Conditions");
    if (conditions.empty())
      return Status::InvalidInput("A CONDITIONAL trigger needs a Predicate with Conditions.");
    for (const Json& condition : conditions) {
      std::string job = Str(condition, "JobName"), crawler = Str(condition, "CrawlerName");
      if (job.empty() == crawler.empty())
        return Status::InvalidInput("Each condition names either a JobName or a CrawlerName.");
      if (!job.empty()) {
        std::string state = Str(condition, "State");
        if (!kConditionJobStates.count(state))
          return Status::InvalidInput("Condition on job " + job + ": State must be SUCCEEDED, "
                                      "STOPPED, FAILED or TIMEOUT" +
                                      (state.empty() ? "" : ", not " + state));
        OG_RETURN_NOT_OK(jobs::JobExists(txn, {"job", job}));
      } else {
        std::string state = Str(condition, "CrawlState");
        if (!kConditionCrawlStates.count(state))
          return Status::InvalidInput("Condition on crawler " + crawler +
                                      ": CrawlState must be SUCCEEDED, FAILED or CANCELLED" +
                                      (state.empty() ? "" : ", not " + state));
        if (options_.crawler_exists) OG_RETURN_NOT_OK(options_.crawler_exists(txn, crawler));
      }
    }
    if (Obj(trigger, "Predicate").contains("Logical") &&
        Str(Obj(trigger, "Predicate"), "Logical").empty())
      return Status::InvalidInput("Predicate.Logical must be AND or ANY.");
  }
  const Json& actions = Arr(trigger, "Actions");
  if (actions.empty()) return Status::InvalidInput("A trigger needs at least one action.");
  for (const Json& action : actions) {
    std::string job = Str(action, "JobName"), crawler = Str(action, "CrawlerName");
    if (job.empty() == crawler.empty())
      return Status::InvalidInput("Each action names either a JobName or a CrawlerName.");
    if (!job.empty()) OG_RETURN_NOT_OK(jobs::JobExists(txn, {"job", job}));
    if (!crawler.empty() && options_.crawler_exists)
      OG_RETURN_NOT_OK(options_.crawler_exists(txn, crawler));
  }
  std::string workflow = Str(trigger, "WorkflowName");
  if (!workflow.empty()) {
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kWorkflow, workflow));
    if (!doc) return Status::EntityNotFound("Workflow " + workflow + " not found.");
  }
  return trigger;
}

Result<Json> Scheduler::CreateTrigger(const Json& request) {
  std::string name = Str(request, "Name");
  std::string type = Str(request, "Type");
  bool start = resource::GetBool(request, "StartOnCreation", false);
  if (type == "ON_DEMAND" && start)
    return Status::InvalidInput("StartOnCreation is not supported for ON_DEMAND triggers.");
  Json trigger = Json::object();
  trigger["Name"] = name;
  for (const char* member : {"WorkflowName", "Type", "Description", "Schedule", "Predicate",
                             "Actions", "EventBatchingCondition"})
    if (request.contains(member) && !request[member].is_null()) trigger[member] = request[member];
  trigger["State"] = start ? "ACTIVATED" : "CREATED";
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(trigger, CheckTrigger(txn.get(), std::move(trigger), ""));
  Status st = txn->Insert(kTrigger, name, DumpJson(trigger));
  if (st.code() == StatusCode::kAlreadyExists)
    return Status::AlreadyExists("Trigger with name " + name + " already exists.");
  OG_RETURN_NOT_OK(st);
  if (request.contains("Tags") && request["Tags"].is_object() && !request["Tags"].empty())
    OG_RETURN_NOT_OK(resource::AddTags(txn.get(), TriggerArn(name), request["Tags"]));
  OG_RETURN_NOT_OK(txn->Commit());
  OG_LOG(kInfo, "trigger " << name << " created (" << type << ", " << Str(trigger, "State") << ")");
  TriggersChanged();
  return Json{{"Name", name}};
}

Result<Json> Scheduler::GetTrigger(const Json& request) {
  std::string name = Str(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  OG_ASSIGN_OR_RETURN(auto trigger, Load(txn.get(), kTrigger, name, "trigger " + name));
  if (!trigger) return TriggerNotFound(name);
  return Json{{"Trigger", Public(std::move(*trigger))}};
}

Result<Json> Scheduler::GetTriggers(const Json& request) {
  std::string dependent = Str(request, "DependentJobName");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  if (!dependent.empty()) OG_RETURN_NOT_OK(jobs::JobExists(txn.get(), {"job", dependent}));
  auto keep = [&](const store::Row& row) -> Result<bool> {
    if (dependent.empty()) return true;
    return StartsJob(ParseJson(row.doc), dependent);
  };
  OG_ASSIGN_OR_RETURN(resource::Page page,
                      resource::ScanPage(txn.get(), kTrigger, "", request,
                                         resource::PageSize(request, 100), keep));
  Json triggers = Json::array();
  for (const auto& row : page.rows) {
    OG_ASSIGN_OR_RETURN(Json trigger, ParseStored(row.doc, "trigger " + row.key));
    triggers.push_back(Public(std::move(trigger)));
  }
  Json response{{"Triggers", std::move(triggers)}};
  if (!page.next_token.empty()) response["NextToken"] = page.next_token;
  return response;
}

Result<Json> Scheduler::ListTriggers(const Json& request) {
  std::string dependent = Str(request, "DependentJobName");
  const Json wanted_tags = Obj(request, "Tags");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  if (!dependent.empty()) OG_RETURN_NOT_OK(jobs::JobExists(txn.get(), {"job", dependent}));
  auto keep = [&](const store::Row& row) -> Result<bool> {
    if (!dependent.empty() && !StartsJob(ParseJson(row.doc), dependent)) return false;
    return resource::HasTags(txn.get(), TriggerArn(row.key), wanted_tags);
  };
  return resource::ListNames(txn.get(), kTrigger, request, resource::PageSize(request, 100),
                             "TriggerNames", keep);
}

Result<Json> Scheduler::BatchGetTriggers(const Json& request) {
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginRead());
  Json triggers = Json::array(), missing = Json::array();
  for (const Json& name : Arr(request, "TriggerNames")) {
    if (!name.is_string()) continue;
    OG_ASSIGN_OR_RETURN(auto trigger, Load(txn.get(), kTrigger, name.get<std::string>(),
                                           "trigger " + name.get<std::string>()));
    if (trigger) triggers.push_back(Public(std::move(*trigger)));
    else missing.push_back(name);
  }
  return Json{{"Triggers", std::move(triggers)}, {"TriggersNotFound", std::move(missing)}};
}

Result<Json> Scheduler::UpdateTrigger(const Json& request) {
  std::string name = Str(request, "Name");
  const Json& update = Obj(request, "TriggerUpdate");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto trigger, Load(txn.get(), kTrigger, name, "trigger " + name));
  if (!trigger) return TriggerNotFound(name);
  if (update.contains("Name") && Str(update, "Name") != name && !Str(update, "Name").empty())
    return Status::InvalidInput("UpdateTrigger cannot rename a trigger (TriggerUpdate.Name is " +
                                Str(update, "Name") + ").");
  for (const char* member : {"Description", "Schedule", "Actions", "Predicate",
                             "EventBatchingCondition"})
    if (update.contains(member) && !update[member].is_null()) (*trigger)[member] = update[member];
  OG_ASSIGN_OR_RETURN(Json checked, CheckTrigger(txn.get(), std::move(*trigger), ""));
  OG_RETURN_NOT_OK(txn->Put(kTrigger, name, DumpJson(checked)));
  OG_RETURN_NOT_OK(txn->Commit());
  TriggersChanged();
  return Json{{"Trigger", Public(std::move(checked))}};
}

Result<Json> Scheduler::DeleteTrigger(const Json& request) {
  std::string name = Str(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_RETURN_NOT_OK(txn->Delete(kTrigger, name).status());
  OG_RETURN_NOT_OK(txn->DeletePrefix(kPredicate, store::PrefixOf({name})).status());
  OG_RETURN_NOT_OK(resource::DeleteTags(txn.get(), TriggerArn(name)));
  OG_RETURN_NOT_OK(txn->Commit());
  TriggersChanged();
  return Json{{"Name", name}};
}

Result<Json> Scheduler::StartTrigger(const Json& request) {
  std::string name = Str(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto trigger, Load(txn.get(), kTrigger, name, "trigger " + name));
  if (!trigger) return TriggerNotFound(name);
  if (Str(*trigger, "Type") == "ON_DEMAND") {
    // Fires once, now. In a workflow it starts a run of the workflow.
    std::string workflow = Str(*trigger, "WorkflowName");
    if (!workflow.empty()) {
      OG_ASSIGN_OR_RETURN(auto wf, Load(txn.get(), kWorkflow, workflow, "workflow " + workflow));
      if (!wf) return Status::EntityNotFound("Workflow " + workflow + " not found.");
      OG_RETURN_NOT_OK(CreateWorkflowRun(txn.get(), *wf, {*trigger}, Json::object(), nullptr, {},
                                         true).status());
    } else {
      OG_RETURN_NOT_OK(RecordFire(txn.get(), *trigger, nullptr).status());
    }
  } else {
    (*trigger)["State"] = "ACTIVATED";
    OG_RETURN_NOT_OK(txn->Put(kTrigger, name, DumpJson(*trigger)));
  }
  OG_RETURN_NOT_OK(txn->Commit());
  TriggersChanged();
  return Json{{"Name", name}};
}

Result<Json> Scheduler::StopTrigger(const Json& request) {
  std::string name = Str(request, "Name");
  OG_ASSIGN_OR_RETURN(auto txn, store_->BeginWrite());
  OG_ASSIGN_OR_RETURN(auto trigger, Load(txn.get(), kTrigger, name, "trigger " + name));
  if (!trigger) return TriggerNotFound(name);
  (*trigger)["State"] = "DEACTIVATED";
  OG_RETURN_NOT_OK(txn->Put(kTrigger, name, DumpJson(*trigger)));
  OG_RETURN_NOT_OK(txn->Commit());
  TriggersChanged();
  return Json{{"Name", name}};
}

}  // namespace openglue::schedule
