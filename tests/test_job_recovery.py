"""Job runs across server restarts: kill -9 and SIGTERM of the server mid-run, runs that end
while it is down, queued runs, and DeleteJob keeping finished runs readable. See docs/jobs.md
("Restarts")."""
import os
import time

import pytest

from conftest import open_to_job_users, raises_glue
from jobkit import (OUTPUT, JobKit, kill_group, log_messages, process_alive, unique, wait_file,
                    wait_for, wait_gone, wait_run)
from jobkit import srv  # noqa: F401  (a fixture)


@pytest.fixture()
def kit(srv):
    """A JobKit on the test's server; at the end it stops the runs still going, so a failed
    test leaves no script behind (the server keeps its port across restarts)."""
    k = JobKit(srv, srv.client())
    yield k
    k.close()


def restart(server, how="kill9"):
    if how == "kill9":
        server.kill9()
    else:
        server.stop()
    return server.start()


# Records its pid and process group, prints, sleeps a little, calls back to the server (which
# has been restarted meanwhile), prints again.
SLEEPER = """
    import os, sys, time
    import boto3
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    out = args["--out"]
    with open(out + "/pid.tmp", "w") as f:
        f.write("%d %d" % (os.getpid(), os.getpgid(0)))
    os.rename(out + "/pid.tmp", out + "/pid")
    print("before")
    time.sleep(float(args["--sleep"]))
    boto3.client("glue").create_database(DatabaseInput={"Name": args["--database"]})
    print("after")
"""


def pids(path):
    pid, pgid = wait_file(path / "pid").split()
    return int(pid), int(pgid)


@pytest.mark.parametrize("how", ["kill9", "sigterm"])
def test_a_running_run_is_readopted_after_a_restart(srv, kit, tmp_path, how):
    glue = kit.glue
    database = unique("after_restart")
    job = kit.job(SLEEPER)
    run_id = kit.start(job, Arguments={"--out": str(tmp_path), "--sleep": "3",
                                       "--database": database})
    pid, pgid = pids(tmp_path)
    wait_for(lambda: glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]["JobRunState"]
             == "RUNNING", 10, "the run to be RUNNING")
    restart(srv, how)
    # The server going away did not take the run with it.
    assert process_alive(pid)
    glue = srv.client()
    assert glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]["JobRunState"] == "RUNNING"

    run = wait_run(glue, job, run_id, timeout=30)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert run["ExecutionTime"] >= 3
    # Its credential was granted again: the call back after the restart worked.
    assert glue.get_database(Name=database)["Database"]["Name"] == database
    # Its output, before and after the restart, is all there, once.
    assert log_messages(srv.client("logs"), OUTPUT, run_id) == ["before", "after"]
    wait_gone(pid)


def test_a_run_that_ends_while_the_server_is_down_is_finished_from_its_exit_status(
        srv, kit, tmp_path):
    glue = kit.glue
    job = kit.job("""
        import os, sys, time
        out = sys.argv[sys.argv.index("--out") + 1]
        with open(out + "/pid", "w") as f:
            f.write("%d %d" % (os.getpid(), os.getpgid(0)))
        print("working")
        time.sleep(1)
        if sys.argv[sys.argv.index("--fail") + 1] == "yes":
            raise KeyError("missing column")
        print("finished alone")
    """, ExecutionProperty={"MaxConcurrentRuns": 2})
    ok_dir, bad_dir = tmp_path / "ok", tmp_path / "bad"
    ok_dir.mkdir()
    bad_dir.mkdir()
    open_to_job_users(ok_dir), open_to_job_users(bad_dir)
    ok = kit.start(job, Arguments={"--out": str(ok_dir), "--fail": "no"})
    ok_pid, _ = pids(ok_dir)
    bad = kit.start(job, Arguments={"--out": str(bad_dir), "--fail": "yes"})
    bad_pid, _ = pids(bad_dir)
    srv.kill9()
    for run_id in (ok, bad):
        wait_for(lambda: os.path.exists(os.path.join(srv.data_dir, "runs", run_id, "exit_code")),
                 10, "the run to end")
    wait_gone(ok_pid)
    wait_gone(bad_pid)
    srv.start()
    glue = srv.client()
    run = wait_run(glue, job, ok, timeout=10)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert log_messages(srv.client("logs"), OUTPUT, ok) == ["working", "finished alone"]
    run = wait_run(glue, job, bad, timeout=10)
    assert run["JobRunState"] == "FAILED"
    assert run["ErrorMessage"] == "KeyError: 'missing column'"


def test_a_run_killed_while_the_server_is_down_fails_naming_the_restart(srv, kit, tmp_path):
    glue = kit.glue
    job = kit.job(SLEEPER)
    run_id = kit.start(job, Arguments={"--out": str(tmp_path), "--sleep": "60",
                                       "--database": unique("never")})
    pid, pgid = pids(tmp_path)
    wait_for(lambda: glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]["JobRunState"]
             == "RUNNING", 10, "the run to be RUNNING")
    srv.kill9()
    # The whole run (the script and the supervisor's wrapper around it) dies with the server
    # gone, so nothing records an exit status.
    kill_group(pgid)
    wait_gone(pid)
    srv.start()
    glue = srv.client()
    run = wait_run(glue, job, run_id, timeout=10)
    assert run["JobRunState"] == "FAILED"
    assert "restart" in run["ErrorMessage"].lower()
    assert run["CompletedOn"] >= run["StartedOn"]
    # What it printed before it died is kept.
    assert log_messages(srv.client("logs"), OUTPUT, run_id) == ["before"]
    # The job is free again.
    assert glue.get_job_runs(JobName=job)["JobRuns"][0]["Id"] == run_id
    second = kit.start(job, Arguments={"--out": str(tmp_path), "--sleep": "0",
                                       "--database": unique("second")})
    assert wait_run(glue, job, second)["JobRunState"] == "SUCCEEDED"


def test_a_waiting_run_still_starts_after_a_restart(srv, kit, tmp_path):
    glue = kit.glue
    release = tmp_path / "release"
    trace = tmp_path / "trace"
    job = kit.job("""
        import os, sys, time
        args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
        with open(args["--trace"], "a") as f:
            f.write("start %s %d\\n" % (args["--JOB_RUN_ID"], os.getpid()))
        deadline = time.time() + 60
        while not os.path.exists(args["--release"]) and time.time() < deadline:
            time.sleep(0.05)
        with open(args["--trace"], "a") as f:
            f.write("end %s\\n" % args["--JOB_RUN_ID"])
    """, JobRunQueuingEnabled=True)
    arguments = {"--release": str(release), "--trace": str(trace)}
    first = kit.start(job, Arguments=arguments)
    wait_for(lambda: trace.exists() and trace.read_text().startswith("start"), 10,
             "the first run to start")
    second = kit.start(job, Arguments=arguments)
    assert glue.get_job_run(JobName=job, RunId=second)["JobRun"]["JobRunState"] == "WAITING"

    restart(srv)
    glue = srv.client()
    time.sleep(0.3)
    # Still one at a time: the re-adopted first run holds the only slot.
    assert glue.get_job_run(JobName=job, RunId=first)["JobRun"]["JobRunState"] == "RUNNING"
    assert glue.get_job_run(JobName=job, RunId=second)["JobRun"]["JobRunState"] == "WAITING"
    release.write_text("go")
    for run_id in (first, second):
        run = wait_run(glue, job, run_id, timeout=20)
        assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    lines = trace.read_text().split("\n")
    assert [line.split()[:2] for line in lines if line] == [
        ["start", first], ["end", first], ["start", second], ["end", second]]
    # No process of either run is left.
    for line in lines:
        if line.startswith("start"):
            wait_gone(int(line.split()[2]))


def test_delete_job_stops_its_runs_and_keeps_finished_ones_readable(srv, kit, tmp_path):
    glue = kit.glue
    job = kit.job(SLEEPER, ExecutionProperty={"MaxConcurrentRuns": 2})
    done_dir, live_dir = tmp_path / "done", tmp_path / "live"
    done_dir.mkdir()
    live_dir.mkdir()
    open_to_job_users(done_dir), open_to_job_users(live_dir)
    done = kit.run(job, Arguments={"--out": str(done_dir), "--sleep": "0",
                                   "--database": unique("done")})
    assert done["JobRunState"] == "SUCCEEDED", done.get("ErrorMessage")
    live = kit.start(job, Arguments={"--out": str(live_dir), "--sleep": "60",
                                     "--database": unique("live")})
    live_pid, _ = pids(live_dir)

    glue.delete_job(JobName=job)
    with raises_glue("EntityNotFoundException"):
        glue.get_job(JobName=job)
    # The active run was stopped.
    run = wait_run(glue, job, live, timeout=15)
    assert run["JobRunState"] == "STOPPED"
    wait_gone(live_pid)
    # Finished runs stay readable, also after a restart.
    restart(srv)
    glue = srv.client()
    assert glue.get_job_run(JobName=job, RunId=done["Id"])["JobRun"]["JobRunState"] == "SUCCEEDED"
    runs = glue.get_job_runs(JobName=job)["JobRuns"]
    assert [(r["Id"], r["JobRunState"]) for r in runs] == [(live, "STOPPED"),
                                                          (done["Id"], "SUCCEEDED")]
    assert log_messages(srv.client("logs"), OUTPUT, done["Id"]) == ["before", "after"]
    with raises_glue("EntityNotFoundException"):
        glue.start_job_run(JobName=job)


def test_a_run_failed_at_restart_is_retried_beside_other_adopted_runs(srv, kit, tmp_path):
    glue = kit.glue
    # The first attempt sleeps and is killed while the server is down; the retry succeeds.
    retried = kit.job("""
        import os, sys, time
        args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
        marker = os.path.join(args["--out"], "first")
        if os.path.exists(marker):
            print("retry " + args["--JOB_RUN_ID"])
            sys.exit(0)
        with open(marker + ".tmp", "w") as f:
            f.write("%d %d" % (os.getpid(), os.getpgid(0)))
        os.rename(marker + ".tmp", marker)
        time.sleep(60)
    """, name=unique("a"), MaxRetries=1)
    # Another job's run, started after it, still running when the server comes back.
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    open_to_job_users(other_dir)
    other = kit.job(SLEEPER, name=unique("b"))
    first = kit.start(retried, Arguments={"--out": str(tmp_path)})
    pid, pgid = map(int, wait_file(tmp_path / "first").split())
    other_run = kit.start(other, Arguments={"--out": str(other_dir), "--sleep": "2",
                                           "--database": unique("other")})
    other_pid, _ = pids(other_dir)
    srv.kill9()
    kill_group(pgid)
    wait_gone(pid)
    srv.start()
    glue = srv.client()
    run = wait_run(glue, retried, first, timeout=10)
    assert run["JobRunState"] == "FAILED"
    assert "restart" in run["ErrorMessage"].lower()

    def retry_finished():
        runs = glue.get_job_runs(JobName=retried)["JobRuns"]
        return runs if len(runs) == 2 and runs[0]["JobRunState"] not in (
            "STARTING", "WAITING", "RUNNING") else None
    runs = wait_for(retry_finished, 15, "the retry to run")
    assert runs[0]["Attempt"] == 1
    assert runs[0]["PreviousRunId"] == first
    assert runs[0]["JobRunState"] == "SUCCEEDED", runs[0].get("ErrorMessage")
    assert log_messages(srv.client("logs"), OUTPUT, runs[0]["Id"]) == ["retry " + runs[0]["Id"]]
    assert wait_run(glue, other, other_run)["JobRunState"] == "SUCCEEDED"
    wait_gone(other_pid)
