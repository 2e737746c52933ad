"""Issue 6, defect 9: every process a run starts ends with the run, including a grandchild that
left the run's process group and session with setsid(): on a normal end, on a stop and on a
timeout. Each case runs twice: with a cgroup per run (job_cgroup=auto, where the machine has a
writable cgroup v2) and without (job_cgroup=off: the run's own uid is what catches the escape,
as on a machine or chroot without cgroupfs)."""
import os
import shutil
import tempfile
import time

import pytest

from conftest import Server, open_to_job_users
from jobkit import JobKit, kit, process_alive, wait_file, wait_for, wait_run  # noqa: F401


@pytest.fixture(scope="module")
def off_server():
    """A server with job_cgroup=off, started with the module (its timeout run starts at once)."""
    data_dir = tempfile.mkdtemp(prefix="openglue-e2e-")
    srv = Server(data_dir, extra_args=["--job-cgroup", "off"]).start()
    yield srv
    srv.stop()
    shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def timeout_runs():
    """The Timeout=1 run of each server, by endpoint: `server` below starts both with the module,
    so their minute passes while the other tests run and both servers' minutes overlap."""
    runs = {}
    yield runs
    for run in runs.values():
        run.close()


@pytest.fixture(scope="module", params=["auto", "off"])
def server(request, server, off_server, timeout_runs, tmp_path_factory):
    """The session's server (job_cgroup=auto), then the one with job_cgroup=off; conftest's glue
    and jobkit's kit fixtures follow it."""
    if not timeout_runs:
        for srv in (server, off_server):
            timeout_runs[srv.endpoint] = TimeoutRun(srv, tmp_path_factory)
    yield server if request.param == "auto" else off_server


pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="containment of setsid() grandchildren needs root (a cgroup per run)")

# Starts `sleep 300` in a session of its own (setsid), records its pid, then ends at once or
# sleeps until stopped or timed out.
ESCAPER = """
    import os, subprocess, sys, time
    args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
    child = subprocess.Popen(["sleep", "300"], start_new_session=True)
    assert os.getsid(child.pid) != os.getsid(0)
    with open(args["--out"] + ".tmp", "w") as f:
        f.write(str(child.pid))
    os.rename(args["--out"] + ".tmp", args["--out"])
    if args["--then"] == "sleep":
        time.sleep(600)
"""


def escaped_pid(path):
    pid = int(wait_file(path))
    assert process_alive(pid)
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        assert f.read().split(b"\0")[:2] == [b"sleep", b"300"]
    return pid


def assert_ends(pid):
    wait_for(lambda: not process_alive(pid), 10, f"the setsid() grandchild {pid} to end")


def test_grandchild_ends_when_the_run_ends(kit, glue, tmp_path):
    job = kit.job(ESCAPER, command="pythonshell")
    run = kit.run(job, Arguments={"--out": str(tmp_path / "pid"), "--then": "exit"})
    assert run["JobRunState"] == "SUCCEEDED"
    assert_ends(escaped_pid_no_check(tmp_path / "pid"))


def escaped_pid_no_check(path):
    return int(wait_file(path))


def test_grandchild_ends_when_the_run_is_stopped(kit, glue, tmp_path):
    job = kit.job(ESCAPER, command="pythonshell")
    run_id = kit.start(job, Arguments={"--out": str(tmp_path / "pid"), "--then": "sleep"})
    pid = escaped_pid(tmp_path / "pid")
    glue.batch_stop_job_run(JobName=job, JobRunIds=[run_id])
    assert wait_run(glue, job, run_id, timeout=30)["JobRunState"] == "STOPPED"
    assert_ends(pid)


class TimeoutRun:
    """Starts the escaper with Timeout=1 (one minute, Glue's least) and waits for its grandchild's
    pid, noting whether that process was alive and was `sleep 300` then; the test checks the
    rest once the minute is over."""

    def __init__(self, server, tmp_path_factory):
        self.glue = server.client()
        self.kit = JobKit(server, self.glue)
        out = open_to_job_users(tmp_path_factory.mktemp("timeout")) + "/pid"
        self.job = self.kit.job(ESCAPER, command="pythonshell")
        self.started = time.time()
        self.run_id = self.kit.start(self.job, Timeout=1, Arguments={"--out": out, "--then": "sleep"})
        self.pid = int(wait_file(out))
        self.alive = process_alive(self.pid)
        with open(f"/proc/{self.pid}/cmdline", "rb") as f:
            self.cmdline = f.read().split(b"\0")[:2]

    def close(self):
        self.kit.close()
        self.glue.close()


def test_grandchild_ends_when_the_run_times_out(server, timeout_runs):
    run = timeout_runs[server.endpoint]
    assert run.alive and run.cmdline == [b"sleep", b"300"]
    remaining = run.started + 120 - time.time()
    state = wait_run(run.glue, run.job, run.run_id, timeout=max(remaining, 1))["JobRunState"]
    assert state == "TIMEOUT"
    assert_ends(run.pid)
