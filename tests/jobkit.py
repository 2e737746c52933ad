"""Helpers for the job, job-run and run-log end-to-end tests (tests/test_job*.py).

Job scripts are written into the server's embedded object store (`s3://bucket/key` is
`<data_dir>/s3/bucket/key`). Runs are polled through GetJobRun, as a user would, with a deadline.
"""
import os
import signal
import socket
import textwrap
import threading
import time
import uuid

import botocore.exceptions
import pytest

TERMINAL = ("SUCCEEDED", "FAILED", "TIMEOUT", "STOPPED", "ERROR")
ACTIVE = ("STARTING", "RUNNING", "STOPPING", "WAITING")
OUTPUT = "/aws-glue/jobs/output"
ERROR = "/aws-glue/jobs/error"


def unique(prefix):
    return prefix + "_" + uuid.uuid4().hex[:10]


def write_script(server, body, bucket="scripts", name=None):
    """Writes `body` (dedented) into the server's object store; returns its s3:// location."""
    key = f"{name or unique('script')}.py"
    path = os.path.join(server.data_dir, "s3", bucket, key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(textwrap.dedent(body).lstrip("\n"))
    return f"s3://{bucket}/{key}"


def wait_for(predicate, timeout, what, interval=0.05):
    """Calls `predicate` until it returns something truthy; fails the test after `timeout` s."""
    deadline = time.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.time() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def wait_run(glue, job, run_id, timeout=30, states=TERMINAL):
    """Polls GetJobRun until the run is in one of `states`; returns the JobRun."""
    last = {}

    def reached():
        last["run"] = glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]
        return last["run"] if last["run"]["JobRunState"] in states else None

    deadline = time.time() + timeout
    while time.time() < deadline:
        run = reached()
        if run:
            return run
        time.sleep(0.05)
    pytest.fail(f"run {run_id} of {job} not in {states} after {timeout} s: {last.get('run')}")


def wait_file(path, timeout=20):
    """Waits until `path` exists and is not empty; returns its text."""
    def ready():
        try:
            with open(path) as f:
                text = f.read()
            return text if text.strip() else None
        except FileNotFoundError:
            return None
    return wait_for(ready, timeout, f"file {path}")


def process_alive(pid):
    """Whether `pid` is a live process: any of its threads has not ended. A zombie has ended,
    but a multi-threaded process's leader shows as a zombie while its other threads still exit
    (and hold its files and sockets), so every thread is looked at."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except (FileNotFoundError, ProcessLookupError):
        return False
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                stat = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if stat[stat.rindex(")") + 2] not in "ZX":
            return True
    return False


def wait_gone(pid, timeout=5):
    wait_for(lambda: not process_alive(pid), timeout, f"process {pid} to end")


def log_messages(logs, group, stream):
    """Every message of a stream, oldest first, following nextForwardToken to its end."""
    messages = []
    kwargs = {"logGroupName": group, "logStreamName": stream, "startFromHead": True}
    for _ in range(10000):
        page = logs.get_log_events(**kwargs)
        messages.extend(e["message"] for e in page["events"])
        if page["nextForwardToken"] == kwargs.get("nextToken"):
            return messages  # the end of the stream: the token passed comes back
        kwargs["nextToken"] = page["nextForwardToken"]
    pytest.fail(f"GetLogEvents of {group} {stream} never returned the end token")


class JobKit:
    """Creates jobs and starts runs on one server; on close, stops the runs it started that are
    still active and deletes its jobs, so no test leaves a script running."""

    def __init__(self, server, glue):
        self.server = server
        self.glue = glue
        self.jobs = []
        self.runs = []  # (job, run id)

    def script(self, body, **kwargs):
        return write_script(self.server, body, **kwargs)

    def job(self, body=None, script=None, name=None, command="glueetl", **kwargs):
        """Creates a job running `body` (or the script at `script`); returns its name."""
        name = name or unique("job")
        location = script or self.script(body)
        self.glue.create_job(Name=name, Role="local",
                             Command={"Name": command, "ScriptLocation": location}, **kwargs)
        self.jobs.append(name)
        return name

    def start(self, job, **kwargs):
        run_id = self.glue.start_job_run(JobName=job, **kwargs)["JobRunId"]
        self.runs.append((job, run_id))
        return run_id

    def run(self, job, timeout=30, **kwargs):
        """Starts a run and waits for its end; returns the JobRun."""
        return wait_run(self.glue, job, self.start(job, **kwargs), timeout=timeout)

    def close(self):
        for job, run_id in self.runs:
            try:
                state = self.glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]["JobRunState"]
                if state in ACTIVE:
                    self.glue.batch_stop_job_run(JobName=job, JobRunIds=[run_id])
            except (botocore.exceptions.ClientError, botocore.exceptions.EndpointConnectionError):
                pass
        for job in self.jobs:
            try:
                self.glue.delete_job(JobName=job)
            except (botocore.exceptions.ClientError, botocore.exceptions.EndpointConnectionError):
                pass


@pytest.fixture()
def kit(server, glue):
    """A JobKit on the session's server (import this fixture into a test module)."""
    k = JobKit(server, glue)
    yield k
    k.close()


def kill_group(pgid):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def rss_kib(pid):
    """The resident memory of process `pid` in KiB (VmRSS)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


class RssPeak:
    """Samples the resident memory of process `pid` every 50 ms while the `with` block runs;
    `peak_kib` is the highest value seen (including the first sample, taken on entry)."""

    def __init__(self, pid):
        self.pid = pid
        self.samples = [rss_kib(pid)]
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self._done.is_set():
            self.samples.append(rss_kib(self.pid))
            time.sleep(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()

    @property
    def peak_kib(self):
        return max(self.samples)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def srv(fresh_server):
    """The test's own server, restartable on the same port (runs call back to the endpoint
    they were started with). Import this fixture into a test module."""
    port = free_port()
    fresh_server.stop()
    fresh_server.extra_args = ["--port", str(port)]
    fresh_server.start()
    assert fresh_server.port == port
    yield fresh_server
