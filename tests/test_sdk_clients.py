"""The Glue clients of the AWS SDKs for Java v2, Go v2 and JavaScript v3 against the real server,
each configured as a user points it at OpenGlue and otherwise unchanged (docs/clients.md).

Each SDK runs the same scenario, a small program of its own in tests/clients/<sdk>/: CreateDatabase,
CreateTable with partition keys, BatchCreatePartition, GetPartitions through the SDK's own
paginator (two a page, filtered by an expression), GetTable (its timestamps parsed by the SDK), a
missing table (the SDK's typed EntityNotFoundException), a request from a client whose clock is
20 minutes slow (Java and JavaScript: the SDK corrects its clock from the server's Date header and
retries; Go: the Date header as the SDK reads it), CreateJob with a Python script, StartJobRun,
GetJobRun until the run ends, GetJobRuns. It prints a JSON summary and waits; the test checks the
summary and the server's state through boto3, then lets the program delete what it created, and
checks that through boto3 too. The clients are built once (tools/sdk_clients.py, `make
clients-deps`); `make clients` runs this file alone.
"""
import datetime
import email.utils
import http.client
import json
import os
import queue
import subprocess
import threading
import time

import pytest

from conftest import raises_glue, unique
from jobkit import write_script
import sdk_clients  # tools/sdk_clients.py (conftest puts tools/ on sys.path)

SDKS = sdk_clients.SDKS
# The partitions each scenario creates (year, month) and those its expression selects, in the
# pages its paginator must return at two a page.
ALL_PARTITIONS = [["2023", "01"], ["2023", "02"], ["2024", "01"], ["2024", "02"], ["2024", "03"]]
PAGES = [[["2024", "01"], ["2024", "02"]], [["2024", "03"]]]

SCRIPT = """
    import sys
    from awsglue.utils import getResolvedOptions
    args = getResolvedOptions(sys.argv, ["JOB_NAME", "out", "sdk"])
    with open(args["out"], "w") as f:
        f.write("ran " + args["sdk"] + " " + args["JOB_NAME"])
"""


class Scenario:
    """One scenario program: started with the server's endpoint, read line by line."""

    def __init__(self, sdk, endpoint, name, script, out, home):
        # Nothing of the machine's AWS configuration: the program configures its client itself.
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update({"HOME": str(home), "AWS_CONFIG_FILE": os.devnull,
                    "AWS_SHARED_CREDENTIALS_FILE": os.devnull, "AWS_EC2_METADATA_DISABLED": "true"})
        self.proc = subprocess.Popen(
            sdk_clients.command(sdk) + [endpoint, name, script, str(out)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(home))
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def summary(self, timeout):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.proc.kill()
            pytest.fail(f"no summary after {timeout} s; stderr: {self.proc.stderr.read()[-3000:]}")
        if line is None:
            self.proc.wait()
            pytest.fail(f"the scenario exited {self.proc.returncode} without a summary; stderr: "
                        f"{self.proc.stderr.read()[-3000:]}")
        return json.loads(line)

    def go_on(self):
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def parse_stamp(text):
    """A summary's timestamp (ISO 8601, UTC, milliseconds) as an aware datetime."""
    assert text.endswith("Z"), text
    return datetime.datetime.fromisoformat(text[:-1]).replace(tzinfo=datetime.timezone.utc)


def same_instant(sdk_text, boto3_value):
    """The SDK's parse of a wire timestamp and boto3's agree, to the millisecond."""
    return abs((parse_stamp(sdk_text) - boto3_value).total_seconds()) < 0.001


def test_every_response_carries_a_date_header(server, glue):
    """The SDKs' clock skew correction reads the server's time from the Date header (RFC 9110
    requires one of a server with a clock): answers, errors, refusals before the body is read."""
    def date_of(headers):
        value = headers.get("Date")
        assert value and value.endswith(" GMT"), headers
        when = email.utils.parsedate_to_datetime(value)
        assert abs((when - datetime.datetime.now(datetime.timezone.utc)).total_seconds()) < 5, value
        return value

    seen = {}
    glue.meta.events.register("after-call.glue.GetDatabases",
                              lambda http_response, **_: seen.update(headers=http_response.headers))
    glue.get_databases()
    date_of(seen["headers"])
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        for method, body, headers, status in [
            ("GET", None, {}, 200),  # /health
            ("POST", b"{}", {"X-Amz-Target": "AWSGlue.GetDatabases",
                             "Content-Type": "application/x-amz-json-1.1"}, 403),  # unsigned
            ("POST", b"{}", {"X-Amz-Target": "AWSGlue.GetDatabases",
                             "Authorization": "AWS4-HMAC-SHA256 Credential=nobody/20240101/"
                                              "us-east-1/glue/aws4_request, SignedHeaders=host, "
                                              "Signature=00"}, None),  # refused before the body
        ]:
            connection.request(method, "/health" if method == "GET" else "/", body, headers)
            response = connection.getresponse()
            response.read()
            assert status is None or response.status == status, (response.status, headers)
            assert response.status == 200 or method == "POST"
            date_of(response.headers)
            if response.getheader("Connection") == "close":
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    finally:
        connection.close()


@pytest.mark.parametrize("sdk", SDKS)
def test_sdk_scenario(sdk, server, glue, tmp_path):
    sdk_clients.build(sdk)  # outside the timed part: a no-op once built
    name = unique(sdk)
    script = write_script(server, SCRIPT)
    out = tmp_path / "out.txt"
    home = tmp_path / "home"
    home.mkdir()
    before = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=1)
    started = time.monotonic()
    program = Scenario(sdk, server.endpoint, name, script, out, home)
    try:
        s = program.summary(timeout=120)
        scenario_seconds = time.monotonic() - started
        after = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=1)
        database, table, job = s["database"], s["tableName"], s["job"]
        assert (database, table, job) == (f"{name}_db", f"{name}_events", f"{name}_job")

        # The pinned SDK ran (not some other copy).
        assert s["sdk"] == sdk
        assert s["sdkVersion"] == sdk_clients.pinned_version(sdk)

        # The catalog as the SDK saw it.
        assert s["batchCreateErrors"] == 0
        assert s["partitionPages"] == PAGES
        assert s["table"]["name"] == table and s["table"]["partitionKeys"] == 2

        # ... and as boto3 sees it: every partition is there, with its own location.
        partitions = glue.get_partitions(DatabaseName=database, TableName=table)["Partitions"]
        assert sorted(p["Values"] for p in partitions) == ALL_PARTITIONS
        for p in partitions:
            year, month = p["Values"]
            assert p["StorageDescriptor"]["Location"] == \
                f"s3://bucket/{table}/year={year}/month={month}/"
        got = glue.get_table(DatabaseName=database, Name=table)["Table"]
        assert [k["Name"] for k in got["PartitionKeys"]] == ["year", "month"]
        assert [c["Name"] for c in got["StorageDescriptor"]["Columns"]] == ["id", "payload"]
        assert got["Parameters"] == {"classification": "json"}

        # Timestamps: the SDK parsed the wire's epoch seconds to the same instants boto3 did.
        assert before <= parse_stamp(s["table"]["createTime"]) <= after
        assert same_instant(s["table"]["createTime"], got["CreateTime"])
        assert same_instant(s["table"]["updateTime"], got["UpdateTime"])
        creation = {tuple(p["Values"]): p["CreationTime"] for p in partitions}
        selected = [tuple(v) for page in PAGES for v in page]
        assert len(s["partitionCreationTimes"]) == len(selected)
        for values, text in zip(selected, s["partitionCreationTimes"]):
            assert same_instant(text, creation[values])

        # The missing table: the SDK's own typed exception, answered at once (no retries).
        missing = s["missingTable"]
        assert missing["type"] == "EntityNotFoundException", missing
        assert "absent" in missing["message"]
        assert missing["seconds"] < 2, missing

        # A client whose clock is off: the server's Date header lets the SDK correct it.
        clock = s["clock"]
        if sdk == "go":
            skew = parse_stamp(clock["serverTime"]) - parse_stamp(clock["clientTime"])
            assert abs(skew.total_seconds()) < 5, clock
        else:
            assert clock["ok"] is True, clock
            assert clock["attempts"] == 2, clock  # refused once as expired, then corrected
            assert abs(clock["offsetSeconds"]) < 5, clock

        # The job run, through the SDK and through boto3.
        run = s["jobRun"]
        assert run["state"] == "SUCCEEDED", f"{run['state']}: {run['error']}"
        assert out.read_text() == f"ran {sdk} {job}"
        assert run["arguments"] == {"--out": str(out), "--sdk": sdk}
        assert isinstance(run["executionTime"], int) and run["executionTime"] >= 1
        assert run["polls"] >= 1
        assert s["jobRuns"] == [run["id"]]
        boto_run = glue.get_job_run(JobName=job, RunId=run["id"])["JobRun"]
        assert boto_run["JobRunState"] == "SUCCEEDED"
        assert same_instant(run["startedOn"], boto_run["StartedOn"])
        assert same_instant(run["completedOn"], boto_run["CompletedOn"])
        assert parse_stamp(run["startedOn"]) <= parse_stamp(run["completedOn"])
        assert glue.get_job(JobName=job)["Job"]["Command"]["ScriptLocation"] == script

        # The clean-up, through the SDK.
        program.go_on()
        done = program.summary(timeout=60)
        assert done == {"deleted": True, "databaseGone": True}
        assert program.proc.wait(timeout=30) == 0, program.proc.stderr.read()[-3000:]
        with raises_glue("EntityNotFoundException"):
            glue.get_database(Name=database)
        with raises_glue("EntityNotFoundException"):
            glue.get_job(JobName=job)
        print(f"{sdk} scenario: {scenario_seconds:.1f} s to the summary")
    finally:
        program.close()
