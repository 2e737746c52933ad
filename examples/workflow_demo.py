"""A Glue workflow against OpenGlue with plain boto3: extract -> (clean, enrich) -> load, started
on demand and on a schedule, its jobs passing run properties along; then its graph, statistics
and properties. docs/workflows.md explains each part.

Usage: python3 examples/workflow_demo.py ENDPOINT DATA_DIR [--wait-for-schedule]
"""
import os
import sys
import textwrap
import time

import boto3

endpoint, data_dir = sys.argv[1], sys.argv[2]
glue = boto3.client("glue", endpoint_url=endpoint, region_name="us-east-1",
                    aws_access_key_id="test", aws_secret_access_key="test")

# One script for every step (s3://demo-scripts/step.py is in the server's embedded object store):
# it reads the workflow run's properties and adds its own, with the run's own credentials.
scripts = os.path.join(data_dir, "s3", "demo-scripts")
os.makedirs(scripts, exist_ok=True)
with open(os.path.join(scripts, "step.py"), "w") as f:
    f.write(textwrap.dedent("""
        import sys, boto3
        args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
        glue = boto3.client("glue")   # endpoint and credentials come from the run's environment
        wf, run = args["--WORKFLOW_NAME"], args["--WORKFLOW_RUN_ID"]
        props = glue.get_workflow_run_properties(Name=wf, RunId=run)["RunProperties"]
        print(args["--JOB_NAME"], "sees", sorted(props))
        glue.put_workflow_run_properties(Name=wf, RunId=run,
                                         RunProperties={args["--JOB_NAME"]: "done"})
    """))

print("== Four jobs, a workflow, and its three triggers")
for job in ("extract", "clean", "enrich", "load"):
    glue.create_job(Name=job, Role="local",
                    Command={"Name": "pythonshell", "ScriptLocation": "s3://demo-scripts/step.py"})
glue.create_workflow(Name="nightly", DefaultRunProperties={"day": "today"}, MaxConcurrentRuns=1)
glue.create_trigger(Name="nightly-start", WorkflowName="nightly", Type="SCHEDULED",
                    Schedule="cron(* * * * ? *)", StartOnCreation=True,   # every minute, UTC
                    Actions=[{"JobName": "extract"}])
glue.create_trigger(Name="after-extract", WorkflowName="nightly", Type="CONDITIONAL",
                    StartOnCreation=True, Actions=[{"JobName": "clean"}, {"JobName": "enrich"}],
                    Predicate={"Conditions": [{"LogicalOperator": "EQUALS",
                                               "JobName": "extract", "State": "SUCCEEDED"}]})
glue.create_trigger(Name="both-done", WorkflowName="nightly", Type="CONDITIONAL",
                    StartOnCreation=True, Actions=[{"JobName": "load"}],
                    Predicate={"Logical": "AND", "Conditions": [
                        {"LogicalOperator": "EQUALS", "JobName": "clean", "State": "SUCCEEDED"},
                        {"LogicalOperator": "EQUALS", "JobName": "enrich", "State": "SUCCEEDED"}]})


def wait(run_id):
    while True:
        run = glue.get_workflow_run(Name="nightly", RunId=run_id, IncludeGraph=True)["Run"]
        if run["Status"] != "RUNNING":
            return run
        time.sleep(0.2)


def show(run):
    stats = run["Statistics"]
    print(f"   run {run['WorkflowRunId'][:12]}... {run['Status']}: "
          f"{stats['SucceededActions']}/{stats['TotalActions']} actions succeeded")
    names = {n["UniqueId"]: n["Name"] for n in run["Graph"]["Nodes"]}
    for edge in run["Graph"]["Edges"]:
        print(f"   {names[edge['SourceId']]:>14} -> {names[edge['DestinationId']]}")
    print("   run properties:", glue.get_workflow_run_properties(
        Name="nightly", RunId=run["WorkflowRunId"])["RunProperties"])


print("== StartWorkflowRun (on demand)")
started = time.perf_counter()
run = wait(glue.start_workflow_run(Name="nightly", RunProperties={"day": "2026-12-01"})["RunId"])
print(f"   finished in {time.perf_counter() - started:.1f} s")
show(run)

if "--wait-for-schedule" in sys.argv:
    print("== Waiting for the schedule (the next whole minute, UTC)")
    while len(glue.get_workflow_runs(Name="nightly")["Runs"]) < 2:
        time.sleep(0.5)
    scheduled = glue.get_workflow_runs(Name="nightly")["Runs"][0]
    show(wait(scheduled["WorkflowRunId"]))
glue.stop_trigger(Name="nightly-start")
print("== Triggers:", [(t["Name"], t["Type"], t["State"])
                       for t in glue.get_triggers()["Triggers"]])
