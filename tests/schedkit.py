"""Helpers for the trigger and workflow end-to-end tests (tests/test_triggers.py,
tests/test_workflows.py): short real Python shell jobs that leave a trace file per run, and polls
of job runs and workflow runs with deadlines."""
import json
import os
import time
import uuid

import pytest

from jobkit import TERMINAL, unique, wait_for, write_script

# Appends one JSON line per run to <--out>/<job>.runs: the run's arguments. With --fail-once it
# fails the first time (leaving a marker) and succeeds after; --fail always fails; --sleep waits.
# --put-property / --read-property use the workflow run's properties through boto3.
TRACE = """
    import json, os, sys, time
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    out = args["--out"]
    time.sleep(float(args.get("--sleep", "0")))
    record = dict(args)
    if "--WORKFLOW_RUN_ID" in args and ("--read-property" in args or "--put-property" in args):
        import boto3
        glue = boto3.client("glue")
        name, run = args["--WORKFLOW_NAME"], args["--WORKFLOW_RUN_ID"]
        record["properties"] = glue.get_workflow_run_properties(Name=name, RunId=run)["RunProperties"]
        if "--put-property" in args:
            key, value = args["--put-property"].split("=", 1)
            glue.put_workflow_run_properties(Name=name, RunId=run, RunProperties={key: value})
    with open(os.path.join(out, args["--JOB_NAME"] + ".runs"), "a") as f:
        f.write(json.dumps(record) + "\\n")
    if "--fail" in args:
        raise SystemExit("failing on purpose")
    if "--fail-once" in args:
        marker = os.path.join(out, args["--JOB_NAME"] + ".failed-once")
        if not os.path.exists(marker):
            open(marker, "w").close()
            raise SystemExit("failing once on purpose")
"""


class SchedKit:
    """Jobs, triggers and workflows on one server; deletes what it made at the end."""

    def __init__(self, server, glue, out):
        self.server = server
        self.glue = glue
        self.out = str(out)
        self.script = write_script(server, TRACE)
        self.jobs, self.triggers, self.workflows, self.crawlers = [], [], [], []

    def job(self, name=None, **arguments):
        name = name or unique("job")
        defaults = {"--out": self.out}
        defaults.update({"--" + k.replace("_", "-"): str(v) for k, v in arguments.items()})
        self.glue.create_job(Name=name, Role="local", DefaultArguments=defaults,
                             Command={"Name": "pythonshell", "ScriptLocation": self.script},
                             ExecutionProperty={"MaxConcurrentRuns": 10})
        self.jobs.append(name)
        return name

    def trigger(self, name=None, **kwargs):
        name = name or unique("trigger")
        self.glue.create_trigger(Name=name, **kwargs)
        self.triggers.append(name)
        return name

    def workflow(self, name=None, **kwargs):
        name = name or unique("wf")
        self.glue.create_workflow(Name=name, **kwargs)
        self.workflows.append(name)
        return name

    def crawler(self, rows=2):
        """A crawler over a JSON folder of `rows` rows in the embedded store, into a new
        database; returns (crawler name, database)."""
        bucket = "wf-lake-" + uuid.uuid4().hex[:10]  # a valid bucket name
        folder = os.path.join(self.server.data_dir, "s3", bucket, "events")
        os.makedirs(folder)
        with open(os.path.join(folder, "part-0.json"), "w") as f:
            for i in range(rows):
                f.write(json.dumps({"id": i, "name": "n%d" % i}) + "\n")
        database, name = unique("wfdb"), unique("crawler")
        self.glue.create_database(DatabaseInput={"Name": database})
        self.glue.create_crawler(Name=name, Role="local", DatabaseName=database,
                                 Targets={"S3Targets": [{"Path": f"s3://{bucket}/events/"}]})
        self.crawlers.append(name)
        return name, database

    def traces(self, job):
        """The recorded arguments of every run of `job` that reached its trace line."""
        try:
            with open(os.path.join(self.out, job + ".runs")) as f:
                return [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def runs(self, job):
        return self.glue.get_job_runs(JobName=job)["JobRuns"]

    def wait_runs(self, job, count, timeout=30, terminal=True):
        """Waits until `job` has `count` runs (all final when `terminal`); returns them."""
        def ready():
            runs = self.runs(job)
            if len(runs) >= count and (not terminal or all(r["JobRunState"] in TERMINAL for r in runs)):
                return runs
            return None
        return wait_for(ready, timeout, f"{count} runs of {job}", interval=0.1)

    def wait_workflow_run(self, workflow, run_id, statuses=("COMPLETED", "STOPPED", "ERROR"),
                          timeout=60):
        last = {}

        def done():
            last["run"] = self.glue.get_workflow_run(Name=workflow, RunId=run_id,
                                                     IncludeGraph=True)["Run"]
            return last["run"] if last["run"]["Status"] in statuses else None
        deadline = time.time() + timeout
        while time.time() < deadline:
            run = done()
            if run:
                return run
            time.sleep(0.1)
        pytest.fail(f"workflow run {run_id} not in {statuses} after {timeout} s: {last.get('run')}")

    def close(self):
        for call, names, key in ((self.glue.delete_trigger, self.triggers, "Name"),
                                 (self.glue.delete_workflow, self.workflows, "Name"),
                                 (self.glue.delete_crawler, self.crawlers, "Name")):
            for name in names:
                try:
                    call(**{key: name})
                except Exception:  # noqa: BLE001  (cleanup of a server that may be gone)
                    pass
        for job in self.jobs:
            try:
                for run in self.runs(job):
                    if run["JobRunState"] not in TERMINAL:
                        self.glue.batch_stop_job_run(JobName=job, JobRunIds=[run["Id"]])
                self.glue.delete_job(JobName=job)
            except Exception:  # noqa: BLE001
                pass


def node(graph, type_, name):
    """The node of `graph` with this type and name."""
    for n in graph["Nodes"]:
        if n["Type"] == type_ and n["Name"] == name:
            return n
    raise AssertionError(f"no {type_} node {name} in {[(n['Type'], n['Name']) for n in graph['Nodes']]}")


def edges(graph):
    """The graph's edges as (source name, destination name) pairs."""
    names = {n["UniqueId"]: n["Name"] for n in graph["Nodes"]}
    return {(names[e["SourceId"]], names[e["DestinationId"]]) for e in graph["Edges"]}
