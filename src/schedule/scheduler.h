// Scheduler: Glue's triggers and workflows, and the thread that fires them.
//
// Operations (Glue request -> response documents, already validated against the service model):
// CreateTrigger, GetTrigger, GetTriggers, ListTriggers, BatchGetTriggers, UpdateTrigger,
// DeleteTrigger, StartTrigger, StopTrigger; CreateWorkflow, GetWorkflow, UpdateWorkflow,
// DeleteWorkflow, ListWorkflows, BatchGetWorkflows, StartWorkflowRun, GetWorkflowRun,
// GetWorkflowRuns, StopWorkflowRun, ResumeWorkflowRun, GetWorkflowRunProperties,
// PutWorkflowRunProperties.
//
// How a trigger fires. A *fire* is one trigger firing once: it is written to the store (kind
// "schedule_fire", with the id of every job run it will start chosen in advance) in the same
// transaction that decides it: the scheduled time passing, StartTrigger / StartWorkflowRun, or
// the job-run event that satisfied a predicate. Only then are its actions carried out, by the
// scheduler thread, with jobs::JobService::StartTriggeredRun, which is idempotent on the run id;
// the fire row is deleted once every action started or failed to. A crash at any point either
// leaves the fire unrecorded (nothing started) or recorded (carried out after the restart,
// starting only what had not started): never twice, never lost.
//
// How a conditional trigger learns of runs. jobs::JobService tells RecordJobRunEnded of every run
// that ends, inside the transaction that writes the run's final state, so the event row
// ("schedule_event") exists exactly when the run is final. The scheduler thread consumes each
// event in one transaction: it updates the workflow run the job run belongs to, records which
// predicate conditions the run satisfies (per trigger and per workflow run, "schedule_pred"),
// records the fires that become due, and deletes the event. A satisfied condition is consumed
// by the fire it causes, so the same runs never fire a trigger twice.
//
// Scopes. A run started inside a workflow run belongs to it (the "schedule_run" index maps run
// ids to workflow runs); conditional triggers of a workflow see only the runs of their own
// workflow run. Runs outside workflows (by hand, or by triggers without a workflow) are seen by
// conditional triggers without a workflow.
//
// Cycles. Conditional triggers may form a cycle (A -> B -> A); neither scope runs it forever. In
// a workflow run each job or crawler node runs once: a fire leaves out the actions whose node has
// run in that workflow run already (ResumeWorkflowRun re-runs nodes, in a new workflow run).
// Outside workflows each run started by a conditional trigger remembers its *lineage*, the jobs
// and crawlers of the runs whose ends led to it, transitively ("schedule_chain", written with the
// fire; a run started by hand, on a schedule or by StartTrigger has none but itself): a fire
// leaves out the actions whose job or crawler is in the lineage of the runs that satisfied it.
// So every chain of conditional fires starts each job once, and ends. Left-out actions are
// logged (warning). docs/workflows.md, "Cycles".
//
// Crawlers. Crawler actions and conditions are accepted and stored with Glue's shapes; firing a
// crawler action goes through SchedulerOptions::start_crawler, which is empty until the crawler
// module exists: the action then ends ERROR with kCrawlersUnavailable, visible in the workflow run.
//
// EVENT triggers are stored (with EventBatchingCondition) but never fire on their own: the Glue
// service model has no operation that delivers events. StartWorkflowRun starts a workflow whose
// start trigger is an EVENT trigger like any other.
//
// Thread-safe. State lives in the store; the thread keeps only the next fire time of each
// activated SCHEDULED trigger in memory, under mutex_.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/json.h"
#include "common/random.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "jobs/job_service.h"
#include "store/metadata_store.h"

namespace openglue::schedule {

// What a crawler action's run ends with while no crawler module is wired in.
inline constexpr const char* kCrawlersUnavailable =
    "Crawlers are not available in this OpenGlue server yet: the crawler action was not started.";

// A workflow run, by workflow name and run id.
struct WorkflowRunRef {
  std::string workflow;
  std::string run_id;
};

struct SchedulerOptions {
  std::string region = "us-east-1";
  std::string account_id = "000000000000";
  // Starts crawler `name` for a trigger (the crawler module fills this in). Empty: crawler
  // actions end ERROR with kCrawlersUnavailable. Errors: EntityNotFound for a missing crawler,
  // or the crawler's own (CrawlerRunningException as ConcurrentRunsExceeded, ...).
  std::function<Status(const std::string& name)> start_crawler;
  // Whether crawler `name` exists (CreateTrigger / UpdateTrigger check actions and conditions).
  // Empty: every crawler name is accepted.
  std::function<Status(store::Transaction* txn, const std::string& name)> crawler_exists;
};

// For jobs::RunEndedHook::record: writes the event that `ended` happened, in the job run's own
// transaction. Then call Scheduler::Wake (RunEndedHook::notify).
Status RecordJobRunEnded(store::Transaction* txn, const jobs::JobRunEnded& ended);

// For the crawler module: writes the event that crawl `crawl_id` (unique per crawl) of crawler
// `crawler` ended in `crawl_state` (SUCCEEDED, FAILED, CANCELLED or ERROR), inside the
// transaction that records the crawl's end; then call Scheduler::Wake. Conditional triggers with
// a CrawlerName / CrawlState condition see it, and a workflow run that started the crawler
// (through SchedulerOptions::start_crawler) counts it as that action's end.
Status RecordCrawlEnded(store::Transaction* txn, const std::string& crawl_id,
                        const std::string& crawler, const std::string& crawl_state);

// For resource::TagService::Register("trigger" / "workflow", ...).
Status TriggerExists(store::Transaction* txn, const std::vector<std::string>& resource);
Status WorkflowExists(store::Transaction* txn, const std::vector<std::string>& resource);

class Scheduler {
 public:
  // Borrowed: store, clock, random, jobs; they must outlive the scheduler. The scheduler
  // serializes its own calls to `random` (run, fire and workflow-run ids): a generator that is
  // not thread-safe (SeededRandom) must not be shared with another service.
  static Result<std::unique_ptr<Scheduler>> Make(store::MetadataStore* store, const Clock* clock,
                                                 Random* random, jobs::JobService* jobs,
                                                 SchedulerOptions options);
  ~Scheduler();

  using Operation = Result<Json> (Scheduler::*)(const Json& request);
  static const std::vector<std::pair<std::string, Operation>>& Operations();

  Result<Json> CreateTrigger(const Json& request);
  Result<Json> GetTrigger(const Json& request);
  Result<Json> GetTriggers(const Json& request);
  Result<Json> ListTriggers(const Json& request);
  Result<Json> BatchGetTriggers(const Json& request);
  Result<Json> UpdateTrigger(const Json& request);
  Result<Json> DeleteTrigger(const Json& request);
  Result<Json> StartTrigger(const Json& request);
  Result<Json> StopTrigger(const Json& request);

  Result<Json> CreateWorkflow(const Json& request);
  Result<Json> GetWorkflow(const Json& request);
  Result<Json> UpdateWorkflow(const Json& request);
  Result<Json> DeleteWorkflow(const Json& request);
  Result<Json> ListWorkflows(const Json& request);
  Result<Json> BatchGetWorkflows(const Json& request);
  Result<Json> StartWorkflowRun(const Json& request);
  Result<Json> GetWorkflowRun(const Json& request);
  Result<Json> GetWorkflowRuns(const Json& request);
  Result<Json> StopWorkflowRun(const Json& request);
  Result<Json> ResumeWorkflowRun(const Json& request);
  Result<Json> GetWorkflowRunProperties(const Json& request);
  Result<Json> PutWorkflowRunProperties(const Json& request);

  // The workflow run that job run `run_id` of job `job` was started in, as the scheduler recorded
  // it when the run's trigger fired; a retry attempt (Attempt > 0, made by the job service)
  // belongs where the attempt it retries did. nullopt for a run outside workflow runs (by hand,
  // by StartJobRun, by a trigger without a workflow) and for a run that does not exist. The
  // run's arguments (--WORKFLOW_RUN_ID) are not consulted: StartJobRun may set them to anything.
  // Errors: the store's.
  Result<std::optional<WorkflowRunRef>> WorkflowRunOfJobRun(const std::string& job,
                                                            const std::string& run_id);

  // One pass of the scheduler's work: consumes pending job-run events, carries out recorded
  // fires, and fires the SCHEDULED triggers that are due by the clock. Returns the time (ms) of
  // the next scheduled fire, or -1 when none is scheduled. Tests call it with a FakeClock.
  int64_t RunOnce() EXCLUDES(mutex_);
  // Runs RunOnce on a background thread, sleeping until the next scheduled fire or a Wake.
  void Start() EXCLUDES(mutex_);
  void Stop() EXCLUDES(mutex_);
  // Asks the thread for a pass now (a run ended, a fire was recorded, a trigger changed).
  void Wake() EXCLUDES(mutex_);
  // A crawler's schedule may have changed (CrawlerServiceOptions::schedules_changed): the
  // thread reloads the schedules it fires. Crawler schedules (StartCrawlerSchedule) fire here
  // too, through SchedulerOptions::start_crawler, at most once per due minute.
  void CrawlerSchedulesChanged() EXCLUDES(mutex_) { TriggersChanged(); }

 private:
  Scheduler(store::MetadataStore* store, const Clock* clock, Random* random,
            jobs::JobService* jobs, SchedulerOptions options);
  void Loop() EXCLUDES(mutex_);

  // The fire machinery (fires.cc).
  Status ProcessEvents();
  Status ProcessEvent(const std::string& run_id);
  Status ExecuteFires();
  int64_t FireDueSchedules(int64_t now_ms) EXCLUDES(mutex_);
  // False when the store failed (the due schedules stay due).
  bool FireDueCrawlerSchedules(int64_t now_ms) EXCLUDES(mutex_);
  Status ReloadSchedules() EXCLUDES(mutex_);
  // Records a fire of `trigger` in `txn`: actions get run ids (and the workflow arguments when
  // `workflow_run` is given, whose action list gains them). `lineage` (outside workflows, a
  // conditional fire): the nodes that led to the fire; each action's run gets it, with its own
  // node, as its lineage. Returns the fire id.
  Result<std::string> RecordFire(store::Transaction* txn, const Json& trigger, Json* workflow_run,
                                 const std::set<std::string>* lineage = nullptr);
  // Creates a workflow run of `workflow` in `txn` and records the fires of `start_triggers` in
  // it. `resume_of`: the run resumed (with the nodes to re-run), else null.
  Result<std::string> CreateWorkflowRun(store::Transaction* txn, const Json& workflow,
                                        const std::vector<Json>& start_triggers,
                                        const Json& run_properties, const Json* resume_of,
                                        const std::vector<std::string>& resume_nodes,
                                        bool refuse_over_limit);
  std::string NewId(const std::string& prefix) EXCLUDES(random_mutex_);
  // A trigger was created, changed or deleted: the thread reloads the schedules.
  void TriggersChanged() EXCLUDES(mutex_);
  std::string TriggerArn(const std::string& name) const;
  std::string WorkflowArn(const std::string& name) const;
  // The workflow graph of `workflow` (its triggers as they are now); with `run` (a stored
  // workflow run document) the job nodes carry the run's job runs.
  Result<Json> Graph(store::Transaction* txn, const std::string& workflow, const Json* run);
  Result<Json> PresentRun(store::Transaction* txn, const Json& stored, bool include_graph);
  Result<Json> PresentWorkflow(store::Transaction* txn, const Json& stored, bool include_graph);
  // The trigger document from CreateTrigger's request or an UpdateTrigger, checked.
  Result<Json> CheckTrigger(store::Transaction* txn, Json trigger, const std::string& old_workflow_start);

  store::MetadataStore* store_;
  const Clock* clock_;
  jobs::JobService* jobs_;
  SchedulerOptions options_;

  Mutex random_mutex_;
  Random* random_ PT_GUARDED_BY(random_mutex_);

  // One thread consumes events and carries out fires at a time (the background thread, or a
  // test calling RunOnce).
  Mutex work_mutex_;

  Mutex mutex_;
  CondVar wake_;
  // Activated SCHEDULED triggers: name -> (schedule text, next fire ms).
  std::map<std::string, std::pair<std::string, int64_t>> next_fire_ GUARDED_BY(mutex_);
  // SCHEDULED crawler schedules, the same way.
  std::map<std::string, std::pair<std::string, int64_t>> crawler_next_fire_ GUARDED_BY(mutex_);
  bool schedules_dirty_ GUARDED_BY(mutex_) = true;
  bool woken_ GUARDED_BY(mutex_) = false;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread thread_ GUARDED_BY(mutex_);
};

}  // namespace openglue::schedule
