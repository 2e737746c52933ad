"""Job runs under load (issue 6, "what held and must keep holding"): 300 StartJobRun at once
are each accepted or refused with ConcurrentRunsExceededException exactly as the limits say,
none lost and none run twice; a job writing ~1.3 GB on standard output completes while the
server's memory stays bounded.

Each test has a server of its own on 127.0.0.1; every loop and wait is bounded. The output
size can be scaled down with OPENGLUE_HOSTILE_OUTPUT_MB on a slow machine."""
import os
import threading
import time

import botocore.config
import botocore.exceptions
import pytest

from conftest import REGION
from jobkit import OUTPUT, TERMINAL, JobKit, RssPeak, wait_for

BURST = 300
OUTPUT_MB = int(os.environ.get("OPENGLUE_HOSTILE_OUTPUT_MB", "1300"))


def burst_client(server):
    """One boto3 client for every thread (clients are thread-safe), with a connection each."""
    import boto3
    config = botocore.config.Config(retries={"max_attempts": 1, "mode": "standard"},
                                    read_timeout=120, connect_timeout=30,
                                    max_pool_connections=BURST)
    return boto3.client("glue", endpoint_url=server.endpoint, region_name=REGION,
                        aws_access_key_id="test", aws_secret_access_key="test", config=config)


def start_burst(glue, job, n=BURST, **kwargs):
    """n threads call StartJobRun together; returns [(kind, value)]: ("ok", run id) or
    ("error", Glue error code) or ("exception", text)."""
    barrier = threading.Barrier(n)
    results = [None] * n

    def one(i):
        try:
            barrier.wait(timeout=60)
            results[i] = ("ok", glue.start_job_run(JobName=job, **kwargs)["JobRunId"])
        except botocore.exceptions.ClientError as e:
            results[i] = ("error", e.response["Error"]["Code"])
        except Exception as e:  # noqa: BLE001 (reported by the assertions)
            results[i] = ("exception", repr(e))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=180)
    assert not any(t.is_alive() for t in threads), "StartJobRun calls still hanging after 180 s"
    return results


def all_runs(glue, job):
    runs, kwargs = [], {"JobName": job, "MaxResults": 200}
    for _ in range(100):
        page = glue.get_job_runs(**kwargs)
        runs.extend(page["JobRuns"])
        if not page.get("NextToken"):
            return runs
        kwargs["NextToken"] = page["NextToken"]
    pytest.fail("GetJobRuns never ended")


def test_a_burst_without_queuing_accepts_exactly_max_concurrent_runs(fresh_server):
    glue = fresh_server.client()
    kit = JobKit(fresh_server, glue)
    try:
        job = kit.job("import time\ntime.sleep(60)\n", ExecutionProperty={"MaxConcurrentRuns": 10})
        results = start_burst(burst_client(fresh_server), job)
        accepted = [value for kind, value in results if kind == "ok"]
        kit.runs.extend((job, run_id) for run_id in accepted)
        other = [r for r in results if r[0] != "ok" and r != ("error", "ConcurrentRunsExceededException")]
        assert other == [], other[:5]
        assert len(accepted) == 10
        assert len(set(accepted)) == 10
        # None lost, none invented: the job's runs are exactly the accepted ones.
        assert sorted(r["Id"] for r in all_runs(glue, job)) == sorted(accepted)
        stopped = glue.batch_stop_job_run(JobName=job, JobRunIds=accepted)
        assert len(stopped["SuccessfulSubmissions"]) == 10, stopped["Errors"]
        for run_id in accepted:
            wait_for(lambda: glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]["JobRunState"]
                     in TERMINAL, 60, f"run {run_id} to stop")
        assert fresh_server.proc.poll() is None
    finally:
        kit.close()


QUEUED_SCRIPT = """
import os, sys, time
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
out, run_id = args["--out"], args["--JOB_RUN_ID"]
begin = time.time()
time.sleep(0.02)
end = time.time()
# 0o666: as root, each run is a uid of its own; the runs share this file through the folder's
# group ACL, which a 0o644 creation mode would mask to read-only.
fd = os.open(os.path.join(out, "ran"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
os.write(fd, ("%s %.6f %.6f\\n" % (run_id, begin, end)).encode())
os.close(fd)
"""


def test_a_burst_with_queuing_runs_every_run_once_within_the_limit(fresh_server, tmp_path):
    glue = fresh_server.client()
    kit = JobKit(fresh_server, glue)
    try:
        job = kit.job(QUEUED_SCRIPT, command="pythonshell",
                      ExecutionProperty={"MaxConcurrentRuns": 4}, JobRunQueuingEnabled=True,
                      DefaultArguments={"--out": str(tmp_path)})
        results = start_burst(burst_client(fresh_server), job)
        accepted = [value for kind, value in results if kind == "ok"]
        kit.runs.extend((job, run_id) for run_id in accepted)
        assert [r for r in results if r[0] != "ok"] == []
        assert len(set(accepted)) == BURST

        def finished():
            runs = all_runs(glue, job)
            return runs if all(r["JobRunState"] in TERMINAL for r in runs) else None
        runs = wait_for(finished, 300, "every queued run to end", interval=1)
        assert sorted(r["Id"] for r in runs) == sorted(accepted)
        assert {r["JobRunState"] for r in runs} == {"SUCCEEDED"}, \
            [r.get("ErrorMessage") for r in runs if r["JobRunState"] != "SUCCEEDED"][:3]
        # Each ran exactly once, and never more than 4 at a time.
        lines = (tmp_path / "ran").read_text().split("\n")[:-1]
        ran = [line.split() for line in lines]
        assert sorted(r[0] for r in ran) == sorted(accepted)
        events = sorted([(float(b), 1) for _, b, _ in ran] + [(float(e), -1) for _, _, e in ran])
        overlap = peak = 0
        for _, delta in events:
            overlap += delta
            peak = max(peak, overlap)
        assert peak <= 4
        assert fresh_server.proc.poll() is None
    finally:
        kit.close()


def test_a_job_writing_gigabytes_of_output_completes_and_the_server_stays_small(fresh_server):
    glue = fresh_server.client()
    logs = fresh_server.client("logs")
    kit = JobKit(fresh_server, glue)
    # OUTPUT_MB MiB of 1 KiB lines, written in 1 MiB pieces, then a last line.
    job = kit.job(f"""
        import sys
        chunk = (b"y" * 1023 + b"\\n") * 1024
        out = sys.stdout.buffer
        for _ in range({OUTPUT_MB}):
            out.write(chunk)
        out.write(b"last line\\n")
        out.flush()
    """)
    began = time.time()
    try:
        with RssPeak(fresh_server.proc.pid) as rss:
            run = kit.run(job, timeout=180)
            took = time.time() - began
            # The server answers meanwhile and after.
            tail = logs.get_log_events(logGroupName=OUTPUT, logStreamName=run["Id"],
                                       limit=1)["events"]
    finally:
        kit.close()
    peak = rss.samples
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert [e["message"] for e in tail] == ["last line"]
    print(f"{OUTPUT_MB} MiB of output: run took {took:.1f} s, server RSS peak "
          f"{max(peak) // 1024} MiB")
    assert max(peak) < 300 * 1024, f"server RSS peaked at {max(peak) // 1024} MiB"
    assert fresh_server.proc.poll() is None
