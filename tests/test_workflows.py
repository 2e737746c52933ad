"""Workflows end to end through boto3 against the real server: the operations, a four-node run
to COMPLETED with its graph and statistics, run properties read and written by the jobs, a
failing node and ResumeWorkflowRun, StopWorkflowRun, MaxConcurrentRuns, a deleted job and a
crawler action in a run, and kill -9 of the server mid-workflow. See docs/workflows.md."""
import time

import pytest

from conftest import raises_glue
from jobkit import srv  # noqa: F401  (a fixture)
from jobkit import unique, wait_for
from schedkit import SchedKit, edges, node


@pytest.fixture()
def kit(server, glue, tmp_path):
    k = SchedKit(server, glue, tmp_path)
    yield k
    k.close()


def start_trigger(kit, workflow, *jobs):
    return kit.trigger(WorkflowName=workflow, Type="ON_DEMAND",
                       Actions=[{"JobName": j} for j in jobs])


def after(kit, workflow, conditions, *jobs, logical="AND"):
    return kit.trigger(WorkflowName=workflow, Type="CONDITIONAL", StartOnCreation=True,
                       Actions=[{"JobName": j} for j in jobs],
                       Predicate={"Logical": logical, "Conditions": [
                           {"LogicalOperator": "EQUALS", "JobName": j, "State": s}
                           for j, s in conditions]})


def test_workflow_operations_shapes_and_errors(kit):
    glue = kit.glue
    name = kit.workflow(Description="nightly", DefaultRunProperties={"env": "dev"},
                        MaxConcurrentRuns=2, Tags={"team": "etl"})
    workflow = glue.get_workflow(Name=name)["Workflow"]
    assert workflow["Name"] == name and workflow["Description"] == "nightly"
    assert workflow["DefaultRunProperties"] == {"env": "dev"} and workflow["MaxConcurrentRuns"] == 2
    assert "CreatedOn" in workflow and "LastRun" not in workflow
    glue.update_workflow(Name=name, Description="hourly", MaxConcurrentRuns=3)
    workflow = glue.get_workflow(Name=name)["Workflow"]
    assert workflow["Description"] == "hourly" and workflow["MaxConcurrentRuns"] == 3
    assert workflow["DefaultRunProperties"] == {"env": "dev"}
    assert name in glue.list_workflows()["Workflows"]
    batch = glue.batch_get_workflows(Names=[name, "nope"])
    assert [w["Name"] for w in batch["Workflows"]] == [name] and batch["MissingWorkflows"] == ["nope"]
    assert glue.get_tags(ResourceArn=f"arn:aws:glue:us-east-1:000000000000:workflow/{name}")["Tags"] == {"team": "etl"}
    with raises_glue("AlreadyExistsException", name):
        glue.create_workflow(Name=name)
    with raises_glue("EntityNotFoundException", "nope"):
        glue.get_workflow(Name="nope")
    with raises_glue("EntityNotFoundException"):
        glue.get_workflow_run(Name=name, RunId="wr_nope")
    # A workflow without a start trigger starts, as Glue's model allows (moto's suite starts
    # one): nothing can run, so its run is COMPLETED at once with nothing counted.
    empty_run = glue.start_workflow_run(Name=name)["RunId"]
    run = glue.get_workflow_run(Name=name, RunId=empty_run)["Run"]
    assert run["Status"] == "COMPLETED" and "CompletedOn" in run
    assert run["Statistics"]["TotalActions"] == 0 and run["WorkflowRunProperties"] == {"env": "dev"}
    # Deleting a workflow deletes its triggers.
    job = kit.job()
    trigger = start_trigger(kit, name, job)
    glue.delete_workflow(Name=name)
    with raises_glue("EntityNotFoundException"):
        glue.get_trigger(Name=trigger)
    with raises_glue("EntityNotFoundException"):
        glue.get_workflow(Name=name)


def test_four_node_workflow_runs_to_completed_with_graph_statistics_and_properties(kit):
    glue = kit.glue
    wf = kit.workflow(DefaultRunProperties={"env": "dev", "size": "small"})
    a = kit.job(put_property="from_a=yes")
    b, c = kit.job(), kit.job()
    d = kit.job(read_property="yes")
    t_start = start_trigger(kit, wf, a)
    t_fan_out = after(kit, wf, [(a, "SUCCEEDED")], b, c)
    t_fan_in = after(kit, wf, [(b, "SUCCEEDED"), (c, "SUCCEEDED")], d)

    run_id = glue.start_workflow_run(Name=wf, RunProperties={"size": "large"})["RunId"]
    run = kit.wait_workflow_run(wf, run_id)
    assert run["Status"] == "COMPLETED", run
    assert run["WorkflowRunId"] == run_id and run["Name"] == wf
    assert "StartedOn" in run and "CompletedOn" in run
    assert run["Statistics"]["TotalActions"] == 4
    assert run["Statistics"]["SucceededActions"] == 4
    assert run["Statistics"]["FailedActions"] == 0 and run["Statistics"]["RunningActions"] == 0

    graph = run["Graph"]
    assert {(n["Type"], n["Name"]) for n in graph["Nodes"]} == {
        ("TRIGGER", t_start), ("TRIGGER", t_fan_out), ("TRIGGER", t_fan_in),
        ("JOB", a), ("JOB", b), ("JOB", c), ("JOB", d)}
    assert edges(graph) == {(t_start, a), (a, t_fan_out), (t_fan_out, b), (t_fan_out, c),
                            (b, t_fan_in), (c, t_fan_in), (t_fan_in, d)}
    assert node(graph, "TRIGGER", t_fan_in)["TriggerDetails"]["Trigger"]["Type"] == "CONDITIONAL"
    for job, trigger in ((a, t_start), (b, t_fan_out), (c, t_fan_out), (d, t_fan_in)):
        job_runs = node(graph, "JOB", job)["JobDetails"]["JobRuns"]
        assert len(job_runs) == 1 and job_runs[0]["JobRunState"] == "SUCCEEDED"
        assert job_runs[0]["TriggerName"] == trigger
        assert job_runs[0]["Arguments"]["--WORKFLOW_NAME"] == wf
        assert job_runs[0]["Arguments"]["--WORKFLOW_RUN_ID"] == run_id
        assert len(kit.runs(job)) == 1

    # Properties: defaults merged with the run's; A wrote one that D read.
    assert kit.traces(a)[0]["properties"] == {"env": "dev", "size": "large"}
    assert kit.traces(d)[0]["properties"] == {"env": "dev", "size": "large", "from_a": "yes"}
    assert glue.get_workflow_run_properties(Name=wf, RunId=run_id)["RunProperties"] == {
        "env": "dev", "size": "large", "from_a": "yes"}
    glue.put_workflow_run_properties(Name=wf, RunId=run_id, RunProperties={"note": "done"})
    assert glue.get_workflow_run_properties(Name=wf, RunId=run_id)["RunProperties"]["note"] == "done"

    workflow = glue.get_workflow(Name=wf, IncludeGraph=True)["Workflow"]
    assert workflow["LastRun"]["WorkflowRunId"] == run_id
    assert workflow["LastRun"]["Status"] == "COMPLETED"
    assert edges(workflow["Graph"]) == edges(graph)
    assert "JobDetails" not in node(workflow["Graph"], "JOB", a)
    runs = glue.get_workflow_runs(Name=wf)["Runs"]
    assert [r["WorkflowRunId"] for r in runs] == [run_id] and "Graph" not in runs[0]


def test_failed_node_then_resume_reruns_it_and_its_dependents_only(kit):
    glue = kit.glue
    wf = kit.workflow()
    a, c = kit.job(), kit.job()
    b = kit.job(fail_once="yes")
    start_trigger(kit, wf, a, b)
    after(kit, wf, [(a, "SUCCEEDED"), (b, "SUCCEEDED")], c)
    first = glue.start_workflow_run(Name=wf)["RunId"]
    run = kit.wait_workflow_run(wf, first)
    assert run["Status"] == "COMPLETED"
    stats = run["Statistics"]
    assert (stats["TotalActions"], stats["SucceededActions"], stats["FailedActions"]) == (2, 1, 1)
    assert kit.runs(c) == []
    b_node = node(run["Graph"], "JOB", b)
    assert b_node["JobDetails"]["JobRuns"][0]["JobRunState"] == "FAILED"

    with raises_glue("InvalidInputException", "succeeded"):
        glue.resume_workflow_run(Name=wf, RunId=first, NodeIds=[node(run["Graph"], "JOB", a)["UniqueId"]])
    resumed = glue.resume_workflow_run(Name=wf, RunId=first, NodeIds=[b_node["UniqueId"]])
    assert resumed["NodeIds"] == [b_node["UniqueId"]] and resumed["RunId"] != first
    run = kit.wait_workflow_run(wf, resumed["RunId"])
    assert run["Status"] == "COMPLETED" and run["PreviousRunId"] == first
    stats = run["Statistics"]
    assert (stats["TotalActions"], stats["SucceededActions"]) == (2, 2)
    assert len(kit.runs(a)) == 1  # what succeeded is not run again
    assert [r["JobRunState"] for r in kit.runs(b)] == ["SUCCEEDED", "FAILED"]
    assert len(kit.runs(c)) == 1
    assert kit.runs(c)[0]["Arguments"]["--WORKFLOW_RUN_ID"] == resumed["RunId"]


def test_stop_workflow_run_stops_its_actions_and_starts_nothing_more(kit):
    glue = kit.glue
    wf = kit.workflow()
    slow, nxt = kit.job(sleep=60), kit.job()
    start_trigger(kit, wf, slow)
    after(kit, wf, [(slow, "STOPPED")], nxt)
    run_id = glue.start_workflow_run(Name=wf)["RunId"]
    kit.wait_runs(slow, 1, terminal=False)
    wait_for(lambda: kit.runs(slow)[0]["JobRunState"] == "RUNNING", 20, "the slow job to run")
    glue.stop_workflow_run(Name=wf, RunId=run_id)
    assert glue.get_workflow_run(Name=wf, RunId=run_id)["Run"]["Status"] in ("STOPPING", "STOPPED")
    run = kit.wait_workflow_run(wf, run_id, timeout=30)
    assert run["Status"] == "STOPPED"
    assert run["Statistics"]["StoppedActions"] == 1
    assert kit.runs(slow)[0]["JobRunState"] == "STOPPED"
    time.sleep(1)
    assert kit.runs(nxt) == []  # a stopped run starts nothing more
    with raises_glue("IllegalWorkflowStateException"):
        glue.stop_workflow_run(Name=wf, RunId=run_id)


def test_max_concurrent_runs_refuses_an_extra_run(kit):
    glue = kit.glue
    wf = kit.workflow(MaxConcurrentRuns=1)
    slow = kit.job(sleep=60)
    start_trigger(kit, wf, slow)
    run_id = glue.start_workflow_run(Name=wf)["RunId"]
    with raises_glue("ConcurrentRunsExceededException", wf):
        glue.start_workflow_run(Name=wf)
    with raises_glue("IllegalWorkflowStateException"):
        glue.resume_workflow_run(Name=wf, RunId=run_id, NodeIds=["wnode_job_" + slow])
    glue.stop_workflow_run(Name=wf, RunId=run_id)
    kit.wait_workflow_run(wf, run_id, timeout=30)
    glue.start_workflow_run(Name=wf)  # room again


def test_deleted_job_and_crawler_action_show_their_errors_in_the_run(kit):
    glue = kit.glue
    wf = kit.workflow()
    gone = kit.job()
    crawler, _ = kit.crawler()
    kit.trigger(WorkflowName=wf, Type="ON_DEMAND",
                Actions=[{"JobName": gone}, {"CrawlerName": crawler}])
    glue.delete_job(JobName=gone)
    glue.delete_crawler(Name=crawler)
    run_id = glue.start_workflow_run(Name=wf)["RunId"]
    run = kit.wait_workflow_run(wf, run_id)
    assert run["Status"] == "COMPLETED"
    assert run["Statistics"]["ErroredActions"] == 2
    job_run = node(run["Graph"], "JOB", gone)["JobDetails"]["JobRuns"][0]
    assert job_run["JobRunState"] == "ERROR" and "not found" in job_run["ErrorMessage"]
    crawl = node(run["Graph"], "CRAWLER", crawler)["CrawlerDetails"]["Crawls"][0]
    assert crawl["State"] == "ERROR" and crawler in crawl["ErrorMessage"]


def test_crawler_then_jobs_workflow_runs_the_crawl_and_the_jobs_after_it(kit):
    """The issue's pipeline: crawler -> job -> two jobs in parallel -> job."""
    glue = kit.glue
    wf = kit.workflow()
    crawler, database = kit.crawler(rows=3)
    first, left, right, last = kit.job(), kit.job(), kit.job(), kit.job()
    kit.trigger(WorkflowName=wf, Type="ON_DEMAND", Actions=[{"CrawlerName": crawler}])
    kit.trigger(WorkflowName=wf, Type="CONDITIONAL", StartOnCreation=True,
                Actions=[{"JobName": first}],
                Predicate={"Conditions": [{"LogicalOperator": "EQUALS", "CrawlerName": crawler,
                                           "CrawlState": "SUCCEEDED"}]})
    after(kit, wf, [(first, "SUCCEEDED")], left, right)
    after(kit, wf, [(left, "SUCCEEDED"), (right, "SUCCEEDED")], last)
    run_id = glue.start_workflow_run(Name=wf)["RunId"]
    run = kit.wait_workflow_run(wf, run_id, timeout=90)
    assert run["Status"] == "COMPLETED", run
    assert run["Statistics"]["TotalActions"] == 5 and run["Statistics"]["SucceededActions"] == 5
    crawl = node(run["Graph"], "CRAWLER", crawler)["CrawlerDetails"]["Crawls"]
    assert [c["State"] for c in crawl] == ["SUCCEEDED"]
    for job in (first, left, right, last):
        assert [r["JobRunState"] for r in kit.runs(job)] == ["SUCCEEDED"]
    # The jobs after the crawl started after it ended, and the crawl made its table.
    assert glue.get_crawler(Name=crawler)["Crawler"]["LastCrawl"]["Status"] == "SUCCEEDED"
    tables = glue.get_tables(DatabaseName=database)["TableList"]
    assert [t["Name"] for t in tables] == ["events"]
    assert (crawler, first) not in edges(run["Graph"])  # a condition edge goes through a trigger


def test_kill9_mid_workflow_finishes_the_run_without_doubling_a_job(srv, tmp_path):
    kit = SchedKit(srv, srv.client(), tmp_path)
    try:
        glue = kit.glue
        wf = kit.workflow()
        a = kit.job(sleep=3)
        b, c = kit.job(sleep=2), kit.job()
        start_trigger(kit, wf, a)
        after(kit, wf, [(a, "SUCCEEDED")], b)
        after(kit, wf, [(b, "SUCCEEDED")], c)
        run_id = glue.start_workflow_run(Name=wf)["RunId"]
        wait_for(lambda: kit.runs(a) and kit.runs(a)[0]["JobRunState"] == "RUNNING", 20, "A to run")
        srv.kill9()
        srv.start()
        kit.glue = glue = srv.client()
        wait_for(lambda: kit.runs(b) and kit.runs(b)[0]["JobRunState"] == "RUNNING", 30, "B to run")
        srv.kill9()
        srv.start()
        kit.glue = glue = srv.client()
        run = kit.wait_workflow_run(wf, run_id, timeout=60)
        assert run["Status"] == "COMPLETED", run
        assert run["Statistics"]["SucceededActions"] == 3 and run["Statistics"]["TotalActions"] == 3
        for job in (a, b, c):
            assert [r["JobRunState"] for r in kit.runs(job)] == ["SUCCEEDED"], job
            assert len(kit.traces(job)) == 1, job
    finally:
        kit.close()


def test_the_documented_example_runs(fresh_server):
    """examples/workflow_demo.py (docs/workflows.md's example, `make demo-workflow`) runs."""
    import os
    import subprocess
    import sys
    from conftest import ROOT
    result = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "workflow_demo.py"),
                             fresh_server.endpoint, fresh_server.data_dir],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "COMPLETED: 4/4 actions succeeded" in result.stdout, result.stdout
    assert "'load': 'done'" in result.stdout and "'day': '2026-12-01'" in result.stdout


def test_a_retried_node_counts_once_its_last_attempt_ends(kit):
    """A job with MaxRetries whose first attempt fails: the workflow run waits for the retry,
    and the retry's success fires what depends on the job."""
    glue = kit.glue
    wf = kit.workflow()
    flaky, nxt = kit.job(fail_once="yes"), kit.job()
    glue.update_job(JobName=flaky, JobUpdate={
        "Role": "local", "MaxRetries": 1,
        "Command": {"Name": "pythonshell", "ScriptLocation": kit.script},
        "DefaultArguments": {"--out": kit.out, "--fail-once": "yes"}})
    start_trigger(kit, wf, flaky)
    after(kit, wf, [(flaky, "SUCCEEDED")], nxt)
    run_id = glue.start_workflow_run(Name=wf)["RunId"]
    run = kit.wait_workflow_run(wf, run_id)
    assert run["Status"] == "COMPLETED", run
    assert [r["JobRunState"] for r in kit.runs(flaky)] == ["SUCCEEDED", "FAILED"]
    assert len(kit.runs(nxt)) == 1
    stats = run["Statistics"]
    assert (stats["TotalActions"], stats["SucceededActions"], stats["FailedActions"]) == (3, 2, 1)
    job_runs = node(run["Graph"], "JOB", flaky)["JobDetails"]["JobRuns"]
    assert sorted(r["JobRunState"] for r in job_runs) == ["FAILED", "SUCCEEDED"]
    assert all(r["Arguments"]["--WORKFLOW_RUN_ID"] == run_id for r in job_runs)
