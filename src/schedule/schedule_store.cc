#include "schedule/schedule_store.h"

#include <algorithm>

#include "jobs/job_run_state.h"

namespace openglue::schedule::internal {

std::string Str(const Json& object, const char* member, const std::string& fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(member);
  return it == object.end() || !it->is_string() ? fallback : it->get<std::string>();
}

int64_t Int(const Json& object, const char* member, int64_t fallback) {
  if (!object.is_object()) return fallback;
  auto it = object.find(member);
  if (it == object.end() || !it->is_number()) return fallback;
  return it->is_number_float() ? static_cast<int64_t>(it->get<double>()) : it->get<int64_t>();
}

const Json& Obj(const Json& object, const char* member) {
  static const Json kEmpty = Json::object();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(member);
  return it == object.end() || !it->is_object() ? kEmpty : *it;
}

const Json& Arr(const Json& object, const char* member) {
  static const Json kEmpty = Json::array();
  if (!object.is_object()) return kEmpty;
  auto it = object.find(member);
  return it == object.end() || !it->is_array() ? kEmpty : *it;
}

Result<std::optional<Json>> Load(store::Transaction* txn, std::string_view kind,
                                 const std::string& key, const std::string& what) {
  OG_ASSIGN_OR_RETURN(auto text, txn->Get(kind, key));
  if (!text) return std::optional<Json>();
  OG_ASSIGN_OR_RETURN(Json doc, ParseStored(*text, what));
  return std::optional<Json>(std::move(doc));
}

Json Public(Json doc) {
  doc.erase("_og");
  return doc;
}

Status ResourceExists(store::Transaction* txn, std::string_view kind,
                      const std::vector<std::string>& resource, const std::string& what) {
  if (resource.size() == 2) {
    OG_ASSIGN_OR_RETURN(auto doc, txn->Get(kind, resource[1]));
    if (doc) return Status::OK();
  }
  return Status::EntityNotFound(what + " " + (resource.size() > 1 ? resource[1] : "") +
                                " not found.");
}

std::string WorkflowRunKey(const std::string& workflow, int64_t started_ms, const std::string& id) {
  constexpr int64_t kBase = 9999999999999LL;
  std::string inverted = std::to_string(kBase - std::clamp<int64_t>(started_ms, 0, kBase));
  inverted.insert(0, 13 - std::min<size_t>(13, inverted.size()), '0');
  return store::MakeKey({workflow, inverted, id});
}

Result<std::pair<std::string, Json>> LoadWorkflowRun(store::Transaction* txn,
                                                     const std::string& workflow,
                                                     const std::string& run_id) {
  OG_ASSIGN_OR_RETURN(auto key, txn->Get(kWorkflowRunId, run_id));
  if (key) {
    OG_ASSIGN_OR_RETURN(auto run, Load(txn, kWorkflowRun, *key, "workflow run " + run_id));
    if (run && Str(*run, "Name") == workflow) return std::make_pair(*key, std::move(*run));
  }
  return Status::EntityNotFound("Workflow run " + run_id + " of workflow " + workflow +
                                " not found.");
}

bool IsFinalState(const std::string& state) {
  std::optional<jobs::JobRunState> parsed = jobs::ParseJobRunState(state);
  return parsed && jobs::IsFinal(*parsed);
}

std::string NodeId(const std::string& type, const std::string& name) {
  return "wnode_" + type + "_" + name;
}

bool MaybeComplete(Json* run, double now_seconds) {
  std::string status = Str(*run, "Status");
  if (status != "RUNNING" && status != "STOPPING") return false;
  for (const Json& action : Arr(Obj(*run, "_og"), "actions"))
    if (!IsFinalState(Str(action, "state"))) return false;
  (*run)["Status"] = status == "STOPPING" ? "STOPPED" : "COMPLETED";
  (*run)["CompletedOn"] = now_seconds;
  return true;
}

}  // namespace openglue::schedule::internal
