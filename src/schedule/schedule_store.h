// The schedule module's rows in the metadata store, and small helpers shared by its files.
// Internal to src/schedule.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "resource/stored.h"
#include "store/metadata_store.h"

namespace openglue::schedule::internal {

inline constexpr std::string_view kTrigger = "trigger";                // name -> Trigger (+ _og)
inline constexpr std::string_view kWorkflow = "workflow";              // name -> Workflow
inline constexpr std::string_view kWorkflowRun = "workflow_run";       // wf, newest first, id -> run
inline constexpr std::string_view kWorkflowRunId = "workflow_run_id";  // run id -> workflow_run key
inline constexpr std::string_view kEvent = "schedule_event";           // job run id -> ended event
inline constexpr std::string_view kFire = "schedule_fire";             // fire id -> recorded fire
inline constexpr std::string_view kRunIndex = "schedule_run";          // job run id -> its workflow run
inline constexpr std::string_view kPredicate = "schedule_pred";        // trigger, scope -> satisfied
// Outside workflows: job run id (or "crawler", name) -> the lineage of a run that a conditional
// fire started ({"nodes": [node ids]}), until the run's final end.
inline constexpr std::string_view kChain = "schedule_chain";

// Members read without throwing (stored documents, or requests already checked by the model).
std::string Str(const Json& object, const char* member, const std::string& fallback = "");
int64_t Int(const Json& object, const char* member, int64_t fallback);
const Json& Obj(const Json& object, const char* member);
const Json& Arr(const Json& object, const char* member);

// A stored row as a JSON object; Internal naming `what` when it is damaged (resource/stored.h).
using resource::ParseStored;
// The stored document at (kind, key), or nullopt.
Result<std::optional<Json>> Load(store::Transaction* txn, std::string_view kind,
                                 const std::string& key, const std::string& what);

// A public document: internal bookkeeping ("_og") stripped.
Json Public(Json doc);

// For the tag service: OK when `resource` ({"trigger", name}) names a row of `kind`, else
// EntityNotFound "<what> <name> not found.".
Status ResourceExists(store::Transaction* txn, std::string_view kind,
                      const std::vector<std::string>& resource, const std::string& what);

// Workflow run keys: the workflow's name, then newest first.
std::string WorkflowRunKey(const std::string& workflow, int64_t started_ms, const std::string& id);
// The stored run `run_id` of `workflow` (and its key), or EntityNotFound.
Result<std::pair<std::string, Json>> LoadWorkflowRun(store::Transaction* txn,
                                                     const std::string& workflow,
                                                     const std::string& run_id);

// Whether a job run / action state name is final (SUCCEEDED, FAILED, ... ERROR).
bool IsFinalState(const std::string& state);

// A node's UniqueId in a workflow graph: "wnode_<type>_<name>" (type trigger, job, crawler).
std::string NodeId(const std::string& type, const std::string& name);

// Sets Status COMPLETED (or STOPPED when it was STOPPING) and CompletedOn when every action of
// the workflow run `run` is final. Returns whether it changed.
bool MaybeComplete(Json* run, double now_seconds);

}  // namespace openglue::schedule::internal
