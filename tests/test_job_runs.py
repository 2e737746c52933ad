"""Job runs: StartJobRun, GetJobRun, GetJobRuns, BatchStopJobRun against the real server, with
real scripts run by its supervisor. See docs/jobs.md ("What a run is", "States")."""
import datetime
import json
import os
import time
import zipfile

import pytest

from conftest import REGION, Server, open_to_job_users, raises_glue
from jobkit import (ERROR, OUTPUT, JobKit, kit, log_messages, process_alive,  # noqa: F401
                    unique, wait_file, wait_for, wait_gone, wait_run)

# A script that waits (up to 60 s) for a file named by its --release argument, recording its
# run's start and end in the file named by --trace.
WAIT_FOR_RELEASE = """
    import os, sys, time
    from awsglue.utils import getResolvedOptions
    args = getResolvedOptions(sys.argv, ["JOB_RUN_ID", "release", "trace"])
    with open(args["trace"], "a") as f:
        f.write("start " + args["JOB_RUN_ID"] + "\\n")
    deadline = time.time() + 60
    while not os.path.exists(args["release"]) and time.time() < deadline:
        time.sleep(0.05)
    with open(args["trace"], "a") as f:
        f.write("end " + args["JOB_RUN_ID"] + "\\n")
"""


# --- The timeout run ----------------------------------------------------------------------------
# A run with Timeout=1 takes a minute to time out. It is started when this module's first test
# starts, so the minute overlaps the other tests; test_timeout (last in the module) checks it.

@pytest.fixture(scope="module", autouse=True)
def timeout_run(server, tmp_path_factory):
    glue = server.client()
    kit = JobKit(server, glue)
    pids = tmp_path_factory.mktemp("timeout")
    open_to_job_users(pids)
    job = kit.job("""
        import os, subprocess, sys, time
        out = sys.argv[sys.argv.index("--pids") + 1]
        child = subprocess.Popen(["sleep", "150"])
        with open(out + "/child", "w") as f:
            f.write(str(child.pid))
        with open(out + "/script", "w") as f:
            f.write(str(os.getpid()))
        time.sleep(150)
    """, MaxRetries=1)
    started = time.time()
    run_id = kit.start(job, Timeout=1, Arguments={"--pids": str(pids)})
    yield {"job": job, "run_id": run_id, "pids": pids, "started": started}
    kit.close()
    glue.close()


# --- Succeeding and failing scripts --------------------------------------------------------------

def test_succeeding_script(kit, glue, server, tmp_path):
    out = tmp_path / "result.txt"
    job = kit.job("""
        import os, sys
        out = sys.argv[sys.argv.index("--out") + 1]
        with open(out, "w") as f:
            f.write("rows=42" if os.listdir(".") == [] else "cwd not empty")
        with open("in_cwd.txt", "w") as f:
            f.write(os.getcwd())
        print("hello stdout")
        print("hello stderr", file=sys.stderr)
    """)
    before = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=1)
    run_id = kit.start(job, Arguments={"--out": str(out)})
    assert run_id.startswith("jr_")
    run = wait_run(glue, job, run_id)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert out.read_text() == "rows=42"
    work = os.path.join(server.data_dir, "runs", run_id, "work")
    with open(os.path.join(work, "in_cwd.txt")) as f:
        assert os.path.realpath(f.read()) == os.path.realpath(work)

    assert run["Id"] == run_id
    assert run["JobName"] == job
    assert run["Attempt"] == 0
    assert "PreviousRunId" not in run
    assert "ErrorMessage" not in run
    assert run["StartedOn"] >= before
    assert run["CompletedOn"] >= run["StartedOn"]
    assert run["LastModifiedOn"] >= run["StartedOn"]
    assert isinstance(run["ExecutionTime"], int) and run["ExecutionTime"] >= 1  # rounded up
    assert run["ExecutionTime"] <= (run["CompletedOn"] - run["StartedOn"]).total_seconds() + 1
    assert run["Arguments"] == {"--out": str(out)}
    assert run["Timeout"] == 2880
    assert run["LogGroupName"] == "/aws-glue/jobs"

    logs = server.client("logs")
    assert log_messages(logs, OUTPUT, run_id) == ["hello stdout"]
    assert log_messages(logs, ERROR, run_id) == ["hello stderr"]
    # The run is listed for its job.
    assert [r["Id"] for r in glue.get_job_runs(JobName=job)["JobRuns"]] == [run_id]
    with raises_glue("EntityNotFoundException"):
        glue.get_job_run(JobName=kit.job(script="s3://scripts/x.py"), RunId=run_id)


def test_run_environment_is_clean_and_leads_back_to_the_server(tmp_path):
    # A server with a variable of its own in its environment: a run must not inherit it.
    # The data folder is the server's (jobs may not write there): the output goes beside it.
    os.makedirs(tmp_path / "data")
    srv = Server(str(tmp_path / "data"), env={"OPENGLUE_TEST_SERVER_ONLY": "leak"}).start()
    try:
        glue = srv.client()
        kit = JobKit(srv, glue)
        out = tmp_path / "env.json"
        job = kit.job("""
            import json, os, sys
            out = sys.argv[sys.argv.index("--out") + 1]
            with open(out, "w") as f:
                json.dump(dict(os.environ), f)
        """)
        run_id = kit.start(job, Arguments={"--out": str(out)})
        assert wait_run(glue, job, run_id)["JobRunState"] == "SUCCEEDED"
        env = json.loads(out.read_text())
        assert "OPENGLUE_TEST_SERVER_ONLY" not in env
        assert env["PATH"] == os.environ["PATH"]
        assert env["LANG"] == "C.UTF-8"
        assert env["PYTHONUNBUFFERED"] == "1"
        run_dir = os.path.join(str(tmp_path / "data"), "runs", run_id)
        assert env["TMPDIR"] == os.path.join(run_dir, "tmp")
        assert env["AWS_ENDPOINT_URL_GLUE"] == srv.endpoint
        assert env["AWS_ENDPOINT_URL_CLOUDWATCH_LOGS"] == srv.endpoint
        assert env["OPENGLUE_ENDPOINT"] == srv.endpoint
        assert env["OPENGLUE_JOB_NAME"] == job
        assert env["OPENGLUE_JOB_RUN_ID"] == run_id
        assert os.path.realpath(env["OPENGLUE_S3_ROOT"]) == os.path.realpath(
            os.path.join(str(tmp_path / "data"), "s3"))
        assert env.get("AWS_REGION", env.get("AWS_DEFAULT_REGION")) == REGION
        assert env["AWS_ACCESS_KEY_ID"] not in ("", "test")
        kit.close()
    finally:
        srv.stop()


def test_script_calls_back_with_a_credential_revoked_after_the_run(kit, glue, server, tmp_path):
    database = unique("from_job")
    creds = tmp_path / "creds.json"
    job = kit.job("""
        import json, os, sys
        import boto3
        args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
        glue = boto3.client("glue")  # endpoint, region and credential from the environment
        glue.create_database(DatabaseInput={"Name": args["--database"]})
        groups = boto3.client("logs").describe_log_groups(logGroupNamePrefix="/aws-glue/jobs")
        print("groups", sorted(g["logGroupName"] for g in groups["logGroups"]))
        with open(args["--creds"], "w") as f:
            json.dump({"key": os.environ["AWS_ACCESS_KEY_ID"],
                       "secret": os.environ["AWS_SECRET_ACCESS_KEY"]}, f)
    """)
    run = kit.run(job, Arguments={"--database": database, "--creds": str(creds)})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    try:
        assert glue.get_database(Name=database)["Database"]["Name"] == database
        assert log_messages(server.client("logs"), OUTPUT, run["Id"]) == [
            "groups ['/aws-glue/jobs/error', '/aws-glue/jobs/output']"]
        captured = json.loads(creds.read_text())
        assert captured["key"] != "test"
        revoked = server.client(key=captured["key"], secret=captured["secret"])
        with raises_glue("UnrecognizedClientException"):
            revoked.get_databases()
        with raises_glue("UnrecognizedClientException"):
            revoked.create_database(DatabaseInput={"Name": unique("after")})
    finally:
        glue.delete_database(Name=database)


@pytest.mark.parametrize("body, expected", [
    ("""
        import sys
        print("reading rows")
        def parse(row):
            raise ValueError("bad row %d" % row)
        parse(7)
     """, "ValueError: bad row 7"),
    ("""
        import sys
        print("some progress", file=sys.stderr)
        print("fatal: disk on fire", file=sys.stderr)
        sys.exit(1)
     """, "fatal: disk on fire"),
], ids=["exception", "stderr"])
def test_failing_script_reports_its_error(kit, glue, server, body, expected):
    job = kit.job(body)
    run = kit.run(job)
    assert run["JobRunState"] == "FAILED", run.get("ErrorMessage")
    assert run["ErrorMessage"] == expected
    assert run["CompletedOn"] >= run["StartedOn"]
    assert run["Attempt"] == 0
    # The whole traceback is in the error log.
    assert expected in log_messages(server.client("logs"), ERROR, run["Id"])


def test_sys_exit_with_a_status_fails_the_run(kit, glue):
    job = kit.job("""
        import sys
        print("done, but unhappy")
        sys.exit(3)
    """)
    run = kit.run(job)
    assert run["JobRunState"] == "FAILED", run.get("ErrorMessage")
    assert "3" in run["ErrorMessage"]
    assert "status" in run["ErrorMessage"].lower()


def test_sys_exit_zero_succeeds(kit, glue):
    job = kit.job("import sys\nsys.exit(0)\n")
    assert kit.run(job)["JobRunState"] == "SUCCEEDED"


def test_missing_script_fails_the_run_naming_it(kit, glue):
    location = f"s3://scripts/{unique('absent')}.py"
    job = kit.job(script=location)
    run = kit.run(job)
    assert run["JobRunState"] == "FAILED", run.get("ErrorMessage")
    assert location in run["ErrorMessage"]


@pytest.mark.parametrize("scheme", ["", "file://"])
def test_local_script_locations(kit, glue, tmp_path, scheme):
    script = tmp_path / "local_job.py"
    script.write_text("import os, sys\n"
                      "with open(sys.argv[sys.argv.index('--out') + 1], 'w') as f:\n"
                      "    f.write('%d %d %d' % (os.getpid(), os.getpgid(0), os.getsid(0)))\n")
    job = kit.job(script=scheme + str(script))
    run = kit.run(job, Arguments={"--out": str(tmp_path / "ids")})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    pid, pgid, sid = map(int, (tmp_path / "ids").read_text().split())
    # Its own process group and session, not the server's (nor this test's).
    assert pgid == sid
    assert pgid != os.getpgid(0)
    assert sid != os.getsid(0)


# --- Arguments ----------------------------------------------------------------------------------

def test_arguments_merge_and_reach_the_script(kit, glue, tmp_path):
    out = tmp_path / "args.json"
    job = kit.job("""
        import json, os, sys
        from awsglue.utils import getResolvedOptions
        args = getResolvedOptions(sys.argv, ["JOB_NAME", "JOB_ID", "JOB_RUN_ID", "TempDir",
                                             "a", "b", "c", "fixed", "out"])
        args["tempdir_exists"] = os.path.isdir(args["TempDir"])
        args["tmpdir"] = os.environ["TMPDIR"]
        args["argv_sql"] = sys.argv[sys.argv.index("--sql") + 1]
        with open(args["out"], "w") as f:
            json.dump(args, f)
    """, DefaultArguments={"--a": "default-a", "--b": "default-b", "--fixed": "default-fixed"},
        NonOverridableArguments={"--fixed": "job-fixed"})
    sql = "select * from t where v = 'x  y' -- \"q\" $HOME"
    run_id = kit.start(job, Arguments={"--b": "run-b", "--c": "run-c", "--fixed": "run-fixed",
                                       "--out": str(out), "--sql": sql})
    run = wait_run(glue, job, run_id)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    args = json.loads(out.read_text())
    assert args["a"] == "default-a"      # DefaultArguments
    assert args["b"] == "run-b"          # < run Arguments
    assert args["c"] == "run-c"
    assert args["fixed"] == "job-fixed"  # < NonOverridableArguments
    assert args["JOB_NAME"] == job
    assert args["JOB_ID"] == "j_" + job
    assert args["JOB_RUN_ID"] == run_id
    assert args["tempdir_exists"] is True
    assert args["TempDir"] == args["tmpdir"]  # the run's own temporary directory
    assert args["argv_sql"] == sql  # one argument, passed as it is
    # The run reports the merged arguments.
    assert run["Arguments"] == {"--a": "default-a", "--b": "run-b", "--c": "run-c",
                                "--fixed": "job-fixed", "--out": str(out), "--sql": sql}


def test_run_capacity_comes_from_the_job_unless_the_run_sets_it(kit, glue):
    job = kit.job("print('sized')\n", WorkerType="G.1X", NumberOfWorkers=2, Timeout=30)
    run = kit.run(job)
    assert (run["WorkerType"], run["NumberOfWorkers"], run["Timeout"]) == ("G.1X", 2, 30)
    run = kit.run(job, WorkerType="G.2X", NumberOfWorkers=5, Timeout=7)
    assert (run["WorkerType"], run["NumberOfWorkers"], run["Timeout"]) == ("G.2X", 5, 7)


def test_temp_dir_argument_is_kept_when_set(kit, glue, tmp_path):
    out = tmp_path / "tempdir.txt"
    job = kit.job("""
        import sys
        from awsglue.utils import getResolvedOptions
        args = getResolvedOptions(sys.argv, ["TempDir", "out"])
        with open(args["out"], "w") as f:
            f.write(args["TempDir"])
    """)
    run = kit.run(job, Arguments={"--TempDir": "s3://temp/bucket/", "--out": str(out)})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert out.read_text() == "s3://temp/bucket/"


def test_extra_py_files_are_importable(kit, glue, server, tmp_path):
    module = unique("helper")
    package = unique("pkg")
    lib = os.path.join(server.data_dir, "s3", "libs", unique("v1"))
    os.makedirs(lib)
    with open(os.path.join(lib, module + ".py"), "w") as f:
        f.write("def greet(name):\n    return 'hello ' + name\n")
    with zipfile.ZipFile(os.path.join(lib, "bundle.zip"), "w") as z:
        z.writestr(f"{package}/__init__.py", "ANSWER = 42\n")
    s3_dir = "s3://libs/" + os.path.basename(lib)
    out = tmp_path / "out.txt"
    job = kit.job(f"""
        import sys
        import {module}
        import {package}
        with open(sys.argv[sys.argv.index("--out") + 1], "w") as f:
            f.write({module}.greet("glue") + " " + str({package}.ANSWER))
    """, DefaultArguments={"--extra-py-files": f"{s3_dir}/{module}.py,{s3_dir}/bundle.zip"})
    run = kit.run(job, Arguments={"--out": str(out)})
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert out.read_text() == "hello glue 42"


# --- Stopping -----------------------------------------------------------------------------------

def test_batch_stop_job_run_stops_the_script_and_its_children(kit, glue, tmp_path):
    job = kit.job("""
        import os, signal, subprocess, sys, time
        out = sys.argv[sys.argv.index("--out") + 1]
        def on_term(signum, frame):
            with open(out + "/term", "w") as f:
                f.write("SIGTERM")
            time.sleep(1)  # cleaning up: the run is STOPPING meanwhile
            with open(out + "/cleaned", "w") as f:
                f.write("done")
            sys.exit(0)
        signal.signal(signal.SIGTERM, on_term)
        # A child that ignores SIGTERM: only the group kill at the end gets rid of it.
        child = subprocess.Popen(["sleep", "300"],
                                 preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_IGN))
        with open(out + "/child", "w") as f:
            f.write(str(child.pid))
        with open(out + "/script", "w") as f:
            f.write(str(os.getpid()))
        time.sleep(300)
    """)
    run_id = kit.start(job, Arguments={"--out": str(tmp_path)})
    script_pid = int(wait_file(tmp_path / "script"))
    child_pid = int(wait_file(tmp_path / "child"))
    assert glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]["JobRunState"] == "RUNNING"

    result = glue.batch_stop_job_run(JobName=job, JobRunIds=[run_id])
    assert result["SuccessfulSubmissions"] == [{"JobName": job, "JobRunId": run_id}]
    assert result["Errors"] == []
    assert glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]["JobRunState"] == "STOPPING"
    stopped_at = time.time()
    run = wait_run(glue, job, run_id, timeout=15)
    assert run["JobRunState"] == "STOPPED", run.get("ErrorMessage")
    # SIGTERM first, and the script had its time to clean up: SIGKILL only comes 10 s later
    # if it is still there. It ended on its own, well before that.
    assert (tmp_path / "term").read_text() == "SIGTERM"
    assert (tmp_path / "cleaned").read_text() == "done"
    assert time.time() - stopped_at < 8
    assert run["CompletedOn"] >= run["StartedOn"]
    wait_gone(script_pid)
    wait_gone(child_pid)

    # A finished run cannot be stopped: reported per run in Errors.
    again = glue.batch_stop_job_run(JobName=job, JobRunIds=[run_id, "jr_" + "f" * 64])
    assert again["SuccessfulSubmissions"] == []
    assert sorted(e["JobRunId"] for e in again["Errors"]) == sorted([run_id, "jr_" + "f" * 64])
    for error in again["Errors"]:
        assert error["JobName"] == job
        assert error["ErrorDetail"]["ErrorCode"]
        assert error["ErrorDetail"]["ErrorMessage"]
    assert glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]["JobRunState"] == "STOPPED"


def test_a_script_ignoring_sigterm_is_killed_after_the_grace_period(kit, glue, tmp_path):
    job = kit.job("""
        import os, signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with open(sys.argv[sys.argv.index("--out") + 1], "w") as f:
            f.write(str(os.getpid()))
        time.sleep(120)
    """)
    run_id = kit.start(job, Arguments={"--out": str(tmp_path / "pid")})
    pid = int(wait_file(tmp_path / "pid"))
    stopped_at = time.time()
    assert glue.batch_stop_job_run(JobName=job, JobRunIds=[run_id])["Errors"] == []
    time.sleep(5)
    # Still there, still STOPPING: SIGKILL comes 10 s after SIGTERM.
    assert process_alive(pid)
    assert glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]["JobRunState"] == "STOPPING"
    run = wait_run(glue, job, run_id, timeout=15)
    assert run["JobRunState"] == "STOPPED", run.get("ErrorMessage")
    assert 9.5 <= time.time() - stopped_at
    wait_gone(pid)


# --- Concurrency --------------------------------------------------------------------------------

def test_max_concurrent_runs_refuses_a_second_run(kit, glue, tmp_path):
    job = kit.job(WAIT_FOR_RELEASE)
    arguments = {"--release": str(tmp_path / "release"), "--trace": str(tmp_path / "trace")}
    first = kit.start(job, Arguments=arguments)
    with raises_glue("ConcurrentRunsExceededException"):
        glue.start_job_run(JobName=job, Arguments=arguments)
    (tmp_path / "release").write_text("go")
    assert wait_run(glue, job, first)["JobRunState"] == "SUCCEEDED"
    # The refused start left no run behind; now that the slot is free, a run starts.
    assert [r["Id"] for r in glue.get_job_runs(JobName=job)["JobRuns"]] == [first]
    assert kit.run(job, Arguments=arguments)["JobRunState"] == "SUCCEEDED"


@pytest.mark.parametrize("where", ["job", "run"])
def test_queued_runs_wait_and_run_in_order(kit, glue, tmp_path, where):
    trace = tmp_path / "trace"
    release = tmp_path / "release"
    job = kit.job(WAIT_FOR_RELEASE, **({"JobRunQueuingEnabled": True} if where == "job" else {}))
    queue = {"JobRunQueuingEnabled": True} if where == "run" else {}
    arguments = {"--release": str(release), "--trace": str(trace)}
    first = kit.start(job, Arguments=arguments)
    wait_for(lambda: trace.exists() and trace.read_text().startswith("start"), 20,
             "the first run to start")
    second = kit.start(job, Arguments=arguments, **queue)
    third = kit.start(job, Arguments=arguments, **queue)
    dropped = kit.start(job, Arguments=arguments, **queue)
    for run_id in (second, third, dropped):
        assert glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]["JobRunState"] == "WAITING"
    # A WAITING run is stopped at once.
    stop = glue.batch_stop_job_run(JobName=job, JobRunIds=[dropped])
    assert stop["Errors"] == []
    assert glue.get_job_run(JobName=job, RunId=dropped)["JobRun"]["JobRunState"] == "STOPPED"
    time.sleep(0.3)
    assert glue.get_job_run(JobName=job, RunId=second)["JobRun"]["JobRunState"] == "WAITING"
    assert glue.get_job_run(JobName=job, RunId=first)["JobRun"]["JobRunState"] == "RUNNING"

    release.write_text("go")
    for run_id in (first, second, third):
        assert wait_run(glue, job, run_id)["JobRunState"] == "SUCCEEDED"
    # One at a time, first come first served; the stopped run never ran.
    assert trace.read_text().split("\n") == [
        f"start {first}", f"end {first}", f"start {second}", f"end {second}",
        f"start {third}", f"end {third}", ""]
    runs = glue.get_job_runs(JobName=job)["JobRuns"]
    assert [r["Id"] for r in runs] == [dropped, third, second, first]
    assert [r["JobRunState"] for r in runs] == ["STOPPED", "SUCCEEDED", "SUCCEEDED", "SUCCEEDED"]


def test_server_wide_limit_holds_runs_in_waiting(tmp_path):
    srv = Server(str(tmp_path / "data"), extra_args=["--max-concurrent-runs", "1"])
    os.makedirs(srv.data_dir)
    srv.start()
    try:
        glue = srv.client()
        kit = JobKit(srv, glue)
        trace, release = tmp_path / "trace", tmp_path / "release"
        arguments = {"--release": str(release), "--trace": str(trace)}
        a = kit.job(WAIT_FOR_RELEASE)
        b = kit.job(WAIT_FOR_RELEASE)
        run_a = kit.start(a, Arguments=arguments)
        wait_for(lambda: trace.exists() and trace.read_text().startswith("start"), 20,
                 "the first run to start")
        # Another job, no queuing asked for: the server's own limit makes it wait.
        run_b = kit.start(b, Arguments=arguments)
        wait_for(lambda: glue.get_job_run(JobName=b, RunId=run_b)["JobRun"]["JobRunState"]
                 == "WAITING", 5, "the second run to wait")
        time.sleep(0.3)
        assert glue.get_job_run(JobName=b, RunId=run_b)["JobRun"]["JobRunState"] == "WAITING"
        release.write_text("go")
        assert wait_run(glue, a, run_a)["JobRunState"] == "SUCCEEDED"
        assert wait_run(glue, b, run_b)["JobRunState"] == "SUCCEEDED"
        assert trace.read_text().split("\n") == [
            f"start {run_a}", f"end {run_a}", f"start {run_b}", f"end {run_b}", ""]
        kit.close()
    finally:
        srv.stop()


# --- Retries and listing ------------------------------------------------------------------------

def test_failed_runs_are_retried_up_to_max_retries(kit, glue, tmp_path):
    seen = tmp_path / "seen"
    job = kit.job("""
        import sys
        from awsglue.utils import getResolvedOptions
        args = getResolvedOptions(sys.argv, ["JOB_RUN_ID", "seen"])
        with open(args["seen"], "a") as f:
            f.write(args["JOB_RUN_ID"] + "\\n")
        raise RuntimeError("always broken")
    """, MaxRetries=2)
    first = kit.start(job, Arguments={"--seen": str(seen)})

    def all_finished():
        runs = glue.get_job_runs(JobName=job)["JobRuns"]
        return runs if len(runs) == 3 and all(r["JobRunState"] == "FAILED" for r in runs) else None
    runs = wait_for(all_finished, 30, "three failed attempts")
    time.sleep(0.5)  # no fourth attempt follows
    runs = glue.get_job_runs(JobName=job)["JobRuns"]
    assert len(runs) == 3

    # Newest first.
    assert [r["Attempt"] for r in runs] == [2, 1, 0]
    assert runs[2]["Id"] == first
    assert "PreviousRunId" not in runs[2]
    assert runs[1]["PreviousRunId"] == runs[2]["Id"]
    assert runs[0]["PreviousRunId"] == runs[1]["Id"]
    for run in runs:
        assert run["ErrorMessage"] == "RuntimeError: always broken"
        assert run["Arguments"] == {"--seen": str(seen)}
    # Each attempt really ran, as its own run.
    assert seen.read_text().split() == [runs[2]["Id"], runs[1]["Id"], runs[0]["Id"]]

    # Paging: one run per page, same order, then no NextToken.
    paged = []
    token = None
    for _ in range(5):
        page = glue.get_job_runs(JobName=job, MaxResults=1,
                                 **({"NextToken": token} if token else {}))
        assert len(page["JobRuns"]) == 1
        paged.append(page["JobRuns"][0]["Id"])
        token = page.get("NextToken")
        if not token:
            break
    assert paged == [r["Id"] for r in runs]
    two = glue.get_job_runs(JobName=job, MaxResults=2)
    assert [r["Id"] for r in two["JobRuns"]] == paged[:2]
    rest = glue.get_job_runs(JobName=job, MaxResults=2, NextToken=two["NextToken"])
    assert [r["Id"] for r in rest["JobRuns"]] == paged[2:]
    assert "NextToken" not in rest


def test_get_job_runs_lists_only_the_jobs_own_runs(kit, glue):
    a = kit.job("print('a')\n")
    b = kit.job("print('b')\n")
    run_a = kit.run(a)["Id"]
    run_b = kit.run(b)["Id"]
    assert [r["Id"] for r in glue.get_job_runs(JobName=a)["JobRuns"]] == [run_a]
    assert [r["Id"] for r in glue.get_job_runs(JobName=b)["JobRuns"]] == [run_b]
    with raises_glue("EntityNotFoundException"):
        glue.get_job_run(JobName=a, RunId=run_b)


def test_start_job_run_timeout_must_be_positive(kit, glue, raw_glue):
    job = kit.job("print('never')\n")
    # The service model's range check, as AWS answers it.
    with raises_glue("ValidationException", "timeout"):
        raw_glue.start_job_run(JobName=job, Timeout=0)
    assert glue.get_job_runs(JobName=job)["JobRuns"] == []


def test_start_job_run_allocated_and_max_capacity_are_exclusive(kit, glue):
    job = kit.job("print('never')\n")
    # AllocatedCapacity is MaxCapacity's deprecated name; AWS refuses both at once (moto's suite
    # asserts the same message).
    with raises_glue("InvalidInputException", "Please set only Allocated Capacity or Max Capacity"):
        glue.start_job_run(JobName=job, AllocatedCapacity=2, MaxCapacity=5.0)
    assert glue.get_job_runs(JobName=job)["JobRuns"] == []


# --- Timeout (keep last: its run was started with the module) ----------------------------------

def test_timeout(timeout_run, server):
    glue = server.client()
    job, run_id, pids = timeout_run["job"], timeout_run["run_id"], timeout_run["pids"]
    script_pid = int(wait_file(pids / "script"))
    child_pid = int(wait_file(pids / "child"))
    remaining = timeout_run["started"] + 100 - time.time()
    run = wait_run(glue, job, run_id, timeout=max(remaining, 1))
    assert run["JobRunState"] == "TIMEOUT", run.get("ErrorMessage")
    assert run["Timeout"] == 1
    assert run["ExecutionTime"] >= 60
    assert (run["CompletedOn"] - run["StartedOn"]).total_seconds() >= 60
    assert "ErrorMessage" in run
    # The whole process group was killed.
    wait_gone(script_pid)
    wait_gone(child_pid)
    # A timed-out run is not retried, though the job has MaxRetries=1.
    time.sleep(0.3)
    assert [r["Id"] for r in glue.get_job_runs(JobName=job)["JobRuns"]] == [run_id]
