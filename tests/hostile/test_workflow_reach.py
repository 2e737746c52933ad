"""Issue 18, defects 7 and 10: what a job run reaches through workflows, and trigger cycles.

7. A job run's credential reads and writes the properties of the workflow run it was started in,
   and of no other: not from outside any workflow (even when StartJobRun hands it another run's
   --WORKFLOW_NAME / --WORKFLOW_RUN_ID), not from another workflow run.
10. A cycle of conditional triggers (A -> B -> A) ends: inside a workflow run each job runs once;
   outside workflows a chain of conditional fires starts each job once (docs/workflows.md,
   "Cycles").

Jobs are short pythonshell scripts; the probes use the run's own credentials, from its
environment, and report what each call answered.
"""
import json
import os
import time

import pytest

from jobkit import TERMINAL, unique, wait_file, write_script
from schedkit import SchedKit

# With the run's own credentials: the properties of the workflow run named by --WORKFLOW_NAME /
# --WORKFLOW_RUN_ID (the run's own, or what StartJobRun claimed), and of --target-name /
# --target-run when given. Writes {label: "ok" | "<code>: <message>", "own_properties": {...}} to
# <--out>/<--JOB_NAME>.json.
PROBE = """
    import json, os, sys
    import boto3, botocore.config, botocore.exceptions
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    glue = boto3.client("glue", endpoint_url=os.environ["AWS_ENDPOINT_URL_GLUE"],
                        config=botocore.config.Config(retries={"max_attempts": 1}))
    results = {}

    def call(label, operation, **kwargs):
        try:
            answer = getattr(glue, operation)(**kwargs)
            results[label] = "ok"
            return answer
        except botocore.exceptions.ClientError as e:
            results[label] = e.response["Error"]["Code"] + ": " + e.response["Error"]["Message"]
            return None

    if "--WORKFLOW_RUN_ID" in args:
        own = dict(Name=args["--WORKFLOW_NAME"], RunId=args["--WORKFLOW_RUN_ID"])
        call("own_put", "put_workflow_run_properties", RunProperties={args["--JOB_NAME"]: "was here"}, **own)
        got = call("own_get", "get_workflow_run_properties", **own)
        if got:
            results["own_properties"] = got["RunProperties"]
    if "--target-run" in args:
        target = dict(Name=args["--target-name"], RunId=args["--target-run"])
        call("target_put", "put_workflow_run_properties", RunProperties={"owner": "attacker"}, **target)
        call("target_get", "get_workflow_run_properties", **target)
    path = os.path.join(args["--out"], args["--JOB_NAME"] + ".json")
    with open(path + ".tmp", "w") as f:
        json.dump(results, f)
    os.rename(path + ".tmp", path)
"""


@pytest.fixture()
def kit(server, glue, tmp_path):
    k = SchedKit(server, glue, tmp_path)
    yield k
    k.close()


def probe_job(kit, script):
    name = unique("probe")
    kit.glue.create_job(Name=name, Role="local", DefaultArguments={"--out": kit.out},
                        Command={"Name": "pythonshell", "ScriptLocation": script})
    kit.jobs.append(name)
    return name


def report(kit, job):
    return json.loads(wait_file(os.path.join(kit.out, job + ".json"), timeout=60))


def denied(answer):
    return answer.startswith("AccessDeniedException")


def start_trigger(kit, workflow, job, arguments=None):
    action = {"JobName": job}
    if arguments:
        action["Arguments"] = arguments
    return kit.trigger(WorkflowName=workflow, Type="ON_DEMAND", Actions=[action])


def when(kit, condition_job, job, workflow=None):
    """A conditional trigger: `job` after `condition_job` SUCCEEDED."""
    extra = {"WorkflowName": workflow} if workflow else {}
    return kit.trigger(Type="CONDITIONAL", StartOnCreation=True, Actions=[{"JobName": job}],
                       Predicate={"Conditions": [{"LogicalOperator": "EQUALS",
                                                  "JobName": condition_job, "State": "SUCCEEDED"}]},
                       **extra)


def test_a_run_reaches_only_the_properties_of_its_own_workflow_run(kit):
    glue = kit.glue
    script = write_script(kit.server, PROBE)
    # The victim: writer puts a property, reader (after it) reads it, both with their credentials.
    wf = kit.workflow(DefaultRunProperties={"owner": "workflow"})
    writer, reader = probe_job(kit, script), probe_job(kit, script)
    start_trigger(kit, wf, writer)
    when(kit, writer, reader, workflow=wf)
    victim = glue.start_workflow_run(Name=wf)["RunId"]
    run = kit.wait_workflow_run(wf, victim)
    assert run["Status"] == "COMPLETED" and run["Statistics"]["SucceededActions"] == 2, run
    expected = {"owner": "workflow", writer: "was here", reader: "was here"}
    assert glue.get_workflow_run_properties(Name=wf, RunId=victim)["RunProperties"] == expected
    # A job inside the workflow run still reads and writes its own run's properties.
    assert report(kit, writer)["own_put"] == "ok" and report(kit, writer)["own_get"] == "ok"
    assert report(kit, reader)["own_properties"][writer] == "was here", report(kit, reader)

    # A job outside any workflow, told by StartJobRun that it belongs to the victim's run.
    outsider = probe_job(kit, script)
    glue.start_job_run(JobName=outsider, Arguments={
        "--WORKFLOW_NAME": wf, "--WORKFLOW_RUN_ID": victim,
        "--target-name": wf, "--target-run": victim})
    got = report(kit, outsider)
    for label in ("own_put", "own_get", "target_put", "target_get"):
        assert denied(got[label]), (label, got)
    assert "outside any workflow run" in got["target_put"], got
    assert victim in got["target_put"] and outsider in got["target_put"], got

    # A job of another workflow run: its own properties yes, the victim's no.
    other_wf = kit.workflow()
    neighbor = probe_job(kit, script)
    start_trigger(kit, other_wf, neighbor, {"--target-name": wf, "--target-run": victim})
    other = glue.start_workflow_run(Name=other_wf)["RunId"]
    assert kit.wait_workflow_run(other_wf, other)["Status"] == "COMPLETED"
    got = report(kit, neighbor)
    assert got["own_put"] == "ok" and got["own_get"] == "ok", got
    assert denied(got["target_put"]) and denied(got["target_get"]), got
    assert other in got["target_put"], got

    # Nothing reached the victim's properties; an administrator still reaches every run.
    assert glue.get_workflow_run_properties(Name=wf, RunId=victim)["RunProperties"] == expected
    glue.put_workflow_run_properties(Name=wf, RunId=victim, RunProperties={"admin": "yes"})
    assert glue.get_workflow_run_properties(Name=wf, RunId=victim)["RunProperties"]["admin"] == "yes"


def test_a_trigger_cycle_in_a_workflow_runs_each_job_once_and_completes(kit):
    glue = kit.glue
    wf = kit.workflow()
    a, b = kit.job(), kit.job()
    start_trigger(kit, wf, a)
    when(kit, a, b, workflow=wf)
    when(kit, b, a, workflow=wf)  # A -> B -> A
    run_id = glue.start_workflow_run(Name=wf)["RunId"]
    run = kit.wait_workflow_run(wf, run_id, timeout=20)
    assert run["Status"] == "COMPLETED", run
    assert run["Statistics"]["TotalActions"] == 2 and run["Statistics"]["SucceededActions"] == 2
    time.sleep(1)
    assert len(kit.runs(a)) == 1 and len(kit.runs(b)) == 1
    assert glue.get_workflow_run(Name=wf, RunId=run_id)["Run"]["Status"] == "COMPLETED"
    # A second workflow run runs each once again.
    second = glue.start_workflow_run(Name=wf)["RunId"]
    assert kit.wait_workflow_run(wf, second, timeout=20)["Status"] == "COMPLETED"
    assert len(kit.runs(a)) == 2 and len(kit.runs(b)) == 2


def test_a_trigger_cycle_outside_workflows_starts_each_job_once_per_chain(kit):
    glue = kit.glue
    a, b, c = kit.job(), kit.job(), kit.job()
    when(kit, a, b)
    when(kit, b, c)
    back = when(kit, c, a)  # A -> B -> C -> A
    glue.start_job_run(JobName=a)
    kit.wait_runs(c, 1)
    time.sleep(1.5)
    assert [len(kit.runs(j)) for j in (a, b, c)] == [1, 1, 1]
    assert all(r["JobRunState"] == "SUCCEEDED" for j in (a, b, c) for r in kit.runs(j))
    log = open(kit.server.log_path, errors="replace").read()
    assert f"trigger {back}: action {a} not started" in log
    # The bound is per chain: a new run of A by hand starts a new one.
    glue.start_job_run(JobName=a)
    kit.wait_runs(c, 2)
    time.sleep(1.5)
    assert [len(kit.runs(j)) for j in (a, b, c)] == [2, 2, 2]
    assert all(r["JobRunState"] in TERMINAL for j in (a, b, c) for r in kit.runs(j))
