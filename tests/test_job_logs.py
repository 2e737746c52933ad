"""Job-run logs through the CloudWatch-Logs-compatible API (boto3's `logs` client and
`aws logs ... --endpoint-url`). See docs/jobs.md ("Logs")."""
import pytest

from conftest import raises_glue
from jobkit import (ERROR, OUTPUT, JobKit, RssPeak, kit, log_messages, unique,  # noqa: F401
                    wait_for, wait_run)


# Prints 25 numbered lines, the last one without a newline.
TWENTY_FIVE_LINES = """
    import sys
    for i in range(24):
        print("line %02d" % i)
    sys.stdout.write("line 24")
"""


@pytest.fixture()
def logs(server):
    client = server.client("logs")
    yield client
    client.close()


def test_log_groups_and_the_runs_streams(kit, glue, logs):
    job = kit.job("import sys\nprint('out')\nprint('err', file=sys.stderr)\n")
    run = kit.run(job)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    groups = logs.describe_log_groups(logGroupNamePrefix="/aws-glue/jobs")["logGroups"]
    assert {OUTPUT, ERROR} <= {g["logGroupName"] for g in groups}
    for group in (OUTPUT, ERROR):
        streams = logs.describe_log_streams(logGroupName=group,
                                            logStreamNamePrefix=run["Id"])["logStreams"]
        assert [s["logStreamName"] for s in streams] == [run["Id"]]
        assert streams[0]["arn"].endswith(f"log-group:{group}:log-stream:{run['Id']}")
    # The newest stream first when ordered by LastEventTime, descending.
    newest = logs.describe_log_streams(logGroupName=OUTPUT, orderBy="LastEventTime",
                                       descending=True, limit=1)["logStreams"]
    assert [s["logStreamName"] for s in newest] == [run["Id"]]
    with raises_glue("ResourceNotFoundException"):
        logs.get_log_events(logGroupName=OUTPUT, logStreamName="jr_" + "0" * 64)
    with raises_glue("ResourceNotFoundException"):
        logs.describe_log_streams(logGroupName="/aws-glue/jobs/" + unique("nope"))


def test_get_log_events_pages_forward_and_backward(kit, glue, logs):
    job = kit.job(TWENTY_FIVE_LINES)
    run = kit.run(job)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    expected = ["line %02d" % i for i in range(25)]

    pages = []
    kwargs = {"logGroupName": OUTPUT, "logStreamName": run["Id"], "startFromHead": True,
              "limit": 10}
    for _ in range(10):
        page = logs.get_log_events(**kwargs)
        pages.append([e["message"] for e in page["events"]])
        if page["nextForwardToken"] == kwargs.get("nextToken"):
            break  # the end: the same token comes back
        kwargs["nextToken"] = page["nextForwardToken"]
    assert pages == [expected[:10], expected[10:20], expected[20:], []]

    # startFromHead=False (the default) starts from the newest events.
    last = logs.get_log_events(logGroupName=OUTPUT, logStreamName=run["Id"], limit=5)
    assert [e["message"] for e in last["events"]] == expected[20:]
    before = logs.get_log_events(logGroupName=OUTPUT, logStreamName=run["Id"], limit=5,
                                 nextToken=last["nextBackwardToken"])
    assert [e["message"] for e in before["events"]] == expected[15:20]

    # Timestamps and ingestion times: milliseconds, in order, within the run.
    events = logs.get_log_events(logGroupName=OUTPUT, logStreamName=run["Id"],
                                 startFromHead=True)["events"]
    stamps = [e["timestamp"] for e in events]
    assert stamps == sorted(stamps)
    started = run["StartedOn"].timestamp() * 1000
    completed = run["CompletedOn"].timestamp() * 1000
    assert started - 1000 <= stamps[0] and stamps[-1] <= completed + 1000
    assert all(e["ingestionTime"] >= e["timestamp"] - 1000 for e in events)
    # Nothing went to the error group.
    assert log_messages(logs, ERROR, run["Id"]) == []


def test_filter_log_events(kit, glue, logs):
    token = unique("tok")
    job = kit.job(f"""
        print("INFO {token} started")
        print("ERROR {token} disk full")
        print("INFO {token} retrying")
        print("ERROR {token} network down")
        print("INFO done")
    """)
    run = kit.run(job)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    run_id = run["Id"]

    found = logs.filter_log_events(logGroupName=OUTPUT, logStreamNames=[run_id],
                                   filterPattern="ERROR")["events"]
    assert [e["message"] for e in found] == [f"ERROR {token} disk full",
                                             f"ERROR {token} network down"]
    assert all(e["logStreamName"] == run_id for e in found)
    # A quoted phrase; several terms must all match.
    assert [e["message"] for e in logs.filter_log_events(
        logGroupName=OUTPUT, logStreamNames=[run_id], filterPattern='"disk full"')["events"]] == [
        f"ERROR {token} disk full"]
    assert [e["message"] for e in logs.filter_log_events(
        logGroupName=OUTPUT, logStreamNames=[run_id], filterPattern="INFO retrying")["events"]] == [
        f"INFO {token} retrying"]
    # Across the whole group (other runs' streams too), by a term only this run printed.
    everywhere = logs.filter_log_events(logGroupName=OUTPUT, filterPattern=token)["events"]
    assert len(everywhere) == 4
    assert {e["logStreamName"] for e in everywhere} == {run_id}
    # Paging with limit and nextToken.
    messages = []
    kwargs = {"logGroupName": OUTPUT, "logStreamNames": [run_id], "filterPattern": token,
              "limit": 1}
    for _ in range(10):
        page = logs.filter_log_events(**kwargs)
        messages.extend(e["message"] for e in page["events"])
        if "nextToken" not in page:
            break
        kwargs["nextToken"] = page["nextToken"]
    assert messages == [e["message"] for e in everywhere]
    # Nothing matches.
    assert logs.filter_log_events(logGroupName=OUTPUT, logStreamNames=[run_id],
                                  filterPattern=unique("absent"))["events"] == []


def test_events_are_readable_while_the_run_is_going(kit, glue, logs, tmp_path):
    release = tmp_path / "release"
    job = kit.job("""
        import os, sys, time
        release = sys.argv[sys.argv.index("--release") + 1]
        print("first at %d" % int(time.time() * 1000))
        print("naïve ✓ utf-8")
        deadline = time.time() + 30
        while not os.path.exists(release) and time.time() < deadline:
            time.sleep(0.05)
        print("second")
    """)
    run_id = kit.start(job, Arguments={"--release": str(release)})

    def first_events():
        try:
            page = logs.get_log_events(logGroupName=OUTPUT, logStreamName=run_id,
                                       startFromHead=True)
        except Exception:  # the stream appears when the run starts
            return None
        return page["events"] if len(page["events"]) >= 2 else None
    events = wait_for(first_events, 10, "the run's first lines")
    assert glue.get_job_run(JobName=job, RunId=run_id)["JobRun"]["JobRunState"] == "RUNNING"
    assert [e["message"] for e in events][1:] == ["naïve ✓ utf-8"]
    printed_at = int(events[0]["message"].split()[-1])
    # Stamped when the server read it: within 0.1 s of being written (the bound allows for
    # scheduling on a busy machine; a tailer that polls every second or so fails it).
    assert printed_at - 50 <= events[0]["timestamp"] <= printed_at + 400

    release.write_text("go")
    run = wait_run(glue, job, run_id)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    messages = log_messages(logs, OUTPUT, run_id)
    assert messages[1:] == ["naïve ✓ utf-8", "second"]


def test_aws_cli_reads_the_logs(kit, glue, server, tmp_path, aws_cli):
    job = kit.job(TWENTY_FIVE_LINES)
    run = kit.run(job)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    def aws(*args):
        return aws_cli("logs", *args)

    got = aws("get-log-events", "--log-group-name", OUTPUT, "--log-stream-name", run["Id"],
              "--start-from-head")
    assert [e["message"] for e in got["events"]] == ["line %02d" % i for i in range(25)]
    filtered = aws("filter-log-events", "--log-group-name", OUTPUT, "--log-stream-names",
                   run["Id"], "--filter-pattern", '"line 07"')
    assert [e["message"] for e in filtered["events"]] == ["line 07"]
    streams = aws("describe-log-streams", "--log-group-name", OUTPUT,
                  "--log-stream-name-prefix", run["Id"])
    assert [s["logStreamName"] for s in streams["logStreams"]] == [run["Id"]]


def test_fifty_megabytes_of_output_keep_the_server_small(fresh_server):
    glue = fresh_server.client()
    logs = fresh_server.client("logs")
    kit = JobKit(fresh_server, glue)
    # 500,000 lines of 100 bytes: 50 MB on standard output.
    job = kit.job("""
        import sys
        line = "x" * 87
        out = sys.stdout
        for i in range(500000):
            out.write("row %08d %s\\n" % (i, line))
        out.write("last line\\n")
    """)
    with RssPeak(fresh_server.proc.pid) as rss:
        run = kit.run(job, timeout=120)
    peak = rss.samples
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    # Every line became an event: the last ones are there, and one from the middle.
    tail = logs.get_log_events(logGroupName=OUTPUT, logStreamName=run["Id"], limit=2)["events"]
    assert [e["message"] for e in tail] == ["row 00499999 " + "x" * 87, "last line"]
    middle = logs.filter_log_events(logGroupName=OUTPUT, logStreamNames=[run["Id"]],
                                    filterPattern='"row 00250000"')["events"]
    assert [e["message"] for e in middle] == ["row 00250000 " + "x" * 87]
    head = logs.get_log_events(logGroupName=OUTPUT, logStreamName=run["Id"], limit=1,
                               startFromHead=True)["events"]
    assert [e["message"] for e in head] == ["row 00000000 " + "x" * 87]
    assert max(peak) < 300 * 1024, f"server RSS peaked at {max(peak) // 1024} MiB"
