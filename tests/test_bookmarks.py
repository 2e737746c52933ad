"""Job bookmarks end to end (issue 9, tests 1-8, 10, 11): Glue scripts run through StartJobRun on
a real server; input in the embedded store written over its S3 API (versitygw) or in local
folders; what each run read is reported by the script; GetJobBookmark is checked after each step.

Controlling last-modified times: a run lists `s3://` paths of the embedded store straight from
its folder (OPENGLUE_S3_ROOT), so an object put over the S3 API is a file whose mtime is the
object's LastModified; `os.utime` on that file (or on a local input file) sets it. Test 8 uses
that for files "landing inside the band".
"""
import json
import os
import time
import uuid

import botocore.exceptions
import pyarrow.dataset as ds
import pytest

from jobkit import kit, unique, wait_for, wait_run  # noqa: F401
from test_s3_api import s3_server


@pytest.fixture(scope="module")
def server():
    """This module's server has the S3 API on a known port (conftest's glue and jobkit's kit
    fixtures then use it)."""
    yield from s3_server("openglue-bookmarks-")


SCRIPT = """
    import json
    import os
    import sys
    from awsglue.context import GlueContext
    from awsglue.job import Job
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext

    args = getResolvedOptions(sys.argv, ["JOB_NAME", "JOB_RUN_ID", "inputs", "out", "commit",
                                         "fail", "sink"])
    glue = GlueContext(SparkContext.getOrCreate())
    job = Job(glue)
    job.init(args["JOB_NAME"], args)
    report, frames = {}, []
    for ctx, path, fmt, *extra in json.loads(args["inputs"]):
        options = {"paths": [path]}
        options.update(extra[0] if extra else {})
        frame = glue.create_dynamic_frame.from_options(
            "s3", options, fmt, {"withHeader": True} if fmt == "csv" else {},
            transformation_ctx=ctx)
        report[ctx] = sorted(str(r["id"]) for r in frame.to_arrow().to_pylist())
        frames.append(frame)
    with open(os.path.join(args["out"], args["JOB_RUN_ID"] + ".json"), "w") as f:
        json.dump(report, f)
    if args["sink"] != "-":
        # An idempotent sink: the partitions this run writes are replaced, so a run that
        # repeats a failed run's input leaves no duplicates.
        glue.write_dynamic_frame.from_options(
            frame=frames[0], connection_type="s3",
            connection_options={"path": args["sink"], "partitionKeys": ["day"],
                                "partitionOverwriteMode": "dynamic"}, format="json")
    marker = os.path.join(args["out"], "failed-once")
    if args["fail"] == "always" or (args["fail"] == "once" and not os.path.exists(marker)):
        open(marker, "w").close()
        raise RuntimeError("failing on purpose after reading (and writing)")
    if args["commit"] == "yes":
        job.commit()
"""

ENABLE = {"--job-bookmark-option": "job-bookmark-enable"}
PAUSE = {"--job-bookmark-option": "job-bookmark-pause"}


def rows(*ids, day="d1"):
    return "".join(json.dumps({"id": i, "day": day}) + "\n" for i in ids).encode()


class Input:
    """A folder of JSON files: `s3` (a bucket of the embedded store, written over the S3 API) or
    `local` (a folder of the test's own)."""

    def __init__(self, server, tmp_path, where):
        self.server, self.where = server, where
        if where == "s3":
            self.bucket = "in-" + uuid.uuid4().hex[:10]
            server.s3().create_bucket(Bucket=self.bucket)
            self.path = f"s3://{self.bucket}/data"
            self.folder = os.path.join(server.data_dir, "s3", self.bucket, "data")
        else:
            self.folder = str(tmp_path / ("in-" + uuid.uuid4().hex[:8]))
            os.makedirs(self.folder)
            self.path = self.folder

    def put(self, name, body, mtime_ms=None):
        if self.where == "s3":
            self.server.s3().put_object(Bucket=self.bucket, Key=f"data/{name}", Body=body)
        else:
            with open(os.path.join(self.folder, name), "wb") as f:
                f.write(body)
        path = os.path.join(self.folder, name)
        if mtime_ms is not None:
            os.utime(path, ns=(mtime_ms * 1000000, mtime_ms * 1000000))
        return path


@pytest.fixture()
def make_input(server, tmp_path):
    return lambda where="s3": Input(server, tmp_path, where)


class Bookmarked:
    """One job running SCRIPT, with helpers to run it and read its reports and bookmark."""

    def __init__(self, kit, glue, out, inputs, options=None, **job_kwargs):
        self.kit, self.glue, self.out = kit, glue, str(out)
        defaults = {"--inputs": json.dumps(inputs), "--out": self.out, "--commit": "yes",
                    "--fail": "no", "--sink": "-"}
        defaults.update(options or {})
        self.name = kit.job(SCRIPT, DefaultArguments=defaults, **job_kwargs)

    def run(self, expect="SUCCEEDED", **arguments):
        """Runs the job once with `arguments` (overrides); returns (run id, what it read)."""
        run = self.kit.run(self.name, timeout=120, Arguments=arguments)
        assert run["JobRunState"] == expect, run.get("ErrorMessage")
        return run["Id"], self.report(run["Id"])

    def report(self, run_id):
        with open(os.path.join(self.out, run_id + ".json")) as f:
            return json.load(f)

    def entry(self, run_id=None):
        """GetJobBookmark's entry (as of `run_id`), or None for EntityNotFoundException."""
        kwargs = {"JobName": self.name, **({"RunId": run_id} if run_id else {})}
        try:
            return self.glue.get_job_bookmark(**kwargs)["JobBookmarkEntry"]
        except botocore.exceptions.ClientError as e:
            assert e.response["Error"]["Code"] == "EntityNotFoundException", e
            return None

    def state(self, run_id=None):
        entry = self.entry(run_id)
        return json.loads(entry["JobBookmark"]) if entry else None


def check_entry(entry, version, run, run_id, previous=None, attempt=0):
    assert entry is not None
    assert entry["Version"] == version and entry["Run"] == run, entry
    assert entry["Attempt"] == attempt, entry
    assert entry["RunId"] == run_id, entry
    allowed = previous if isinstance(previous, tuple) else (previous,)
    assert (entry.get("PreviousRunId") or None) in allowed, entry


def output_rows(server, bucket):
    folder = os.path.join(server.data_dir, "s3", bucket, "out")
    files = sorted(os.path.relpath(os.path.join(d, f), folder)
                   for d, _, names in os.walk(folder) for f in names)
    data = ds.dataset(folder, format="json", partitioning="hive").to_table().to_pylist() \
        if files else []
    return files, sorted((str(r["id"]), str(r["day"])) for r in data)


# 1 ----------------------------------------------------------------------------------------------

def test_1_bookmarks_are_off_by_default_a_second_run_reads_everything_again(
        kit, glue, make_input, tmp_path):
    data = make_input("s3")
    data.put("a.json", rows("a1", "a2"))
    data.put("b.json", rows("b1"))
    job = Bookmarked(kit, glue, tmp_path, [["src", data.path, "json"]])
    _, read = job.run()
    assert read == {"src": ["a1", "a2", "b1"]}
    data.put("c.json", rows("c1"))
    _, read = job.run()
    assert read == {"src": ["a1", "a2", "b1", "c1"]}
    assert job.entry() is None  # 11: disable never commits a bookmark


# 2 and 11 ---------------------------------------------------------------------------------------

def test_2_enable_reads_only_new_files_and_a_run_with_nothing_new_writes_nothing(
        kit, glue, server, make_input, tmp_path):
    data = make_input("s3")
    data.put("a.json", rows("a1", "a2", day="d1"))
    data.put("b.json", rows("b1", day="d1"))
    out = "out-" + uuid.uuid4().hex[:10]
    server.s3().create_bucket(Bucket=out)
    job = Bookmarked(kit, glue, tmp_path, [["src", data.path, "json"]],
                     {**ENABLE, "--sink": f"s3://{out}/out"})
    r1, read = job.run()
    assert read == {"src": ["a1", "a2", "b1"]}
    check_entry(job.entry(), 1, 1, r1)
    state = job.state()["src"]
    assert state["type"] == "s3" and state["paths"] == [data.path] and state["format"] == "json"
    # Both files were written within the band before the run: remembered one by one.
    assert sorted(u.rsplit("/", 1)[1] for u, _ in state["band"]) == ["a.json", "b.json"]
    assert state["floor"] == state["high"] - state["maxBand"]

    data.put("c.json", rows("c1", day="d2"))
    r2, read = job.run()
    assert read == {"src": ["c1"]}
    check_entry(job.entry(), 2, 2, r2, previous=r1)
    files_after_2, out_rows = output_rows(server, out)
    assert out_rows == [("a1", "d1"), ("a2", "d1"), ("b1", "d1"), ("c1", "d2")]

    r3, read = job.run()
    assert read == {"src": []}
    check_entry(job.entry(), 3, 3, r3, previous=r2)
    assert output_rows(server, out)[0] == files_after_2  # nothing written
    # GetJobBookmark RunId=... gives the state as of that run.
    assert len(job.state(r1)["src"]["band"]) == 2
    assert len(job.state(r2)["src"]["band"]) == 3


# 3 ----------------------------------------------------------------------------------------------

def test_3_a_run_without_commit_does_not_advance(kit, glue, make_input, tmp_path):
    data = make_input("s3")
    data.put("a.json", rows("a1"))
    job = Bookmarked(kit, glue, tmp_path, [["src", data.path, "json"]], ENABLE)
    _, read = job.run(**{"--commit": "no"})
    assert read == {"src": ["a1"]}
    assert job.entry() is None  # 11: nothing committed yet
    r2, read = job.run()
    assert read == {"src": ["a1"]}
    check_entry(job.entry(), 1, 1, r2)
    _, read = job.run(**{"--commit": "no"})
    assert read == {"src": []}
    check_entry(job.entry(), 1, 1, r2)


# 4 ----------------------------------------------------------------------------------------------

def test_4_a_run_failing_after_its_write_is_read_again_and_the_overwrite_sink_has_no_duplicates(
        kit, glue, server, make_input, tmp_path):
    data = make_input("s3")
    data.put("a.json", rows("a1", "a2", day="d1"))
    out = "out-" + uuid.uuid4().hex[:10]
    server.s3().create_bucket(Bucket=out)
    job = Bookmarked(kit, glue, tmp_path, [["src", data.path, "json"]],
                     {**ENABLE, "--sink": f"s3://{out}/out"})
    r1, read = job.run(expect="FAILED", **{"--fail": "always"})
    assert read == {"src": ["a1", "a2"]}
    assert output_rows(server, out)[1] == [("a1", "d1"), ("a2", "d1")]  # written, then failed
    assert job.entry() is None
    data.put("b.json", rows("b1", day="d2"))
    r2, read = job.run()
    assert read == {"src": ["a1", "a2", "b1"]}  # at-least-once: a.json again
    check_entry(job.entry(), 1, 1, r2)
    assert output_rows(server, out)[1] == [("a1", "d1"), ("a2", "d1"), ("b1", "d2")]


# 5 ----------------------------------------------------------------------------------------------

def test_5_two_contexts_keep_independent_positions_and_a_renamed_one_starts_over(
        kit, glue, make_input, tmp_path):
    a, b = make_input("s3"), make_input("local")
    a.put("a1.json", rows("a1"))
    b.put("b1.json", rows("b1"))
    both = [["src_a", a.path, "json"], ["src_b", b.path, "json"]]
    job = Bookmarked(kit, glue, tmp_path, both, ENABLE)
    r1, read = job.run()
    assert read == {"src_a": ["a1"], "src_b": ["b1"]}
    a.put("a2.json", rows("a2"))
    b.put("b2.json", rows("b2"))
    renamed = [["src_a", a.path, "json"], ["src_b_v2", b.path, "json"]]
    r2, read = job.run(**{"--inputs": json.dumps(renamed)})
    assert read == {"src_a": ["a2"], "src_b_v2": ["b1", "b2"]}
    check_entry(job.entry(), 2, 2, r2, previous=r1)
    state = job.state()
    assert sorted(state) == ["src_a", "src_b", "src_b_v2"]
    assert state["src_b"] == job.state(r1)["src_b"]  # untouched by run 2
    # The old name still has its own position: only b2 is new to it.
    r3, read = job.run()
    assert read == {"src_a": [], "src_b": ["b2"]}


# 6 ----------------------------------------------------------------------------------------------

def test_6_pause_reads_from_the_position_without_moving_it_and_from_to_reads_the_window(
        kit, glue, make_input, tmp_path):
    data = make_input("s3")
    data.put("a.json", rows("a1"))
    job = Bookmarked(kit, glue, tmp_path, [["src", data.path, "json"]], ENABLE)
    r1, read = job.run()
    assert read == {"src": ["a1"]}
    data.put("b.json", rows("b1"))
    for _ in range(2):
        _, read = job.run(**PAUSE)
        assert read == {"src": ["b1"]}
        check_entry(job.entry(), 1, 1, r1)  # not moved
    r2, read = job.run()
    assert read == {"src": ["b1"]}
    data.put("c.json", rows("c1"))
    r3, read = job.run()
    assert read == {"src": ["c1"]}
    data.put("d.json", rows("d1"))  # read by no run

    def window(start, end):
        _, got = job.run(**PAUSE, **{"--job-bookmark-from": start, "--job-bookmark-to": end})
        return got["src"]

    assert window(r1, r2) == ["b1"]
    assert window(r1, r3) == ["b1", "c1"]
    assert window(r2, r3) == ["c1"]
    check_entry(job.entry(), 3, 3, r3, previous=r2)
    # An unknown run id in the window fails the run, saying so.
    run = kit.run(job.name, timeout=120, Arguments={
        **PAUSE, "--job-bookmark-from": "jr_" + "0" * 64, "--job-bookmark-to": r2})
    assert run["JobRunState"] == "FAILED" and "job-bookmark-from" in run["ErrorMessage"]


# 7 ----------------------------------------------------------------------------------------------

def test_7_reset_reprocesses_everything_and_reset_to_a_run_rewinds_to_it(
        kit, glue, make_input, tmp_path):
    data = make_input("local")
    data.put("a.json", rows("a1"))
    job = Bookmarked(kit, glue, tmp_path, [["src", data.path, "json"]], ENABLE)
    r1, _ = job.run()
    data.put("b.json", rows("b1"))
    r2, read = job.run()
    assert read == {"src": ["b1"]}
    entry = glue.reset_job_bookmark(JobName=job.name)["JobBookmarkEntry"]
    assert entry["Version"] == 3 and json.loads(entry["JobBookmark"]) == {}
    assert job.entry() is None  # reset to nothing: no bookmark until the next commit
    data.put("c.json", rows("c1"))
    r3, read = job.run()
    assert read == {"src": ["a1", "b1", "c1"]}
    # After a reset the "RunId before" may be the last committer or none: both are accepted.
    check_entry(job.entry(), 4, 3, r3, previous=(r2, None))
    glue.reset_job_bookmark(JobName=job.name, RunId=r1)
    assert job.state() == job.state(r1)
    data.put("d.json", rows("d1"))
    r4, read = job.run()
    assert read == {"src": ["b1", "c1", "d1"]}
    check_entry(job.entry(), 6, 4, r4, previous=r3)


# 8 ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["local", "s3"])
def test_8_a_file_overwritten_in_place_is_read_again_and_one_landing_in_the_band_is_not_lost(
        kit, glue, make_input, tmp_path, where):
    data = make_input(where)
    data.put("a.json", rows("a-v1"))
    data.put("b.json", rows("b1"))
    job = Bookmarked(kit, glue, tmp_path, [["src", data.path, "json"]], ENABLE)
    _, read = job.run()
    assert read == {"src": ["a-v1", "b1"]}
    data.put("a.json", rows("a-v2"))  # rewritten in place: a newer last-modified time
    r2, read = job.run()
    assert read == {"src": ["a-v2"]}
    state = job.state()["src"]
    start = state["high"]  # run 2's start
    # Files that were not in run 2's listing although their times are before its start: one
    # inside the band (a late listing) and one below it (too late: the documented limit).
    data.put("late.json", rows("late1"), mtime_ms=start - 60000)
    data.put("too-late.json", rows("old1"), mtime_ms=start - state["maxBand"] - 60000)
    _, read = job.run()
    assert read == {"src": ["late1"]}
    _, read = job.run()
    assert read == {"src": []}


# 10 ---------------------------------------------------------------------------------------------

def test_10_a_retried_attempt_starts_from_the_same_state_as_the_failed_one(
        kit, glue, make_input, tmp_path):
    data = make_input("s3")
    data.put("a.json", rows("a1"))
    job = Bookmarked(kit, glue, tmp_path, [["src", data.path, "json"]], ENABLE, MaxRetries=1)
    r1, read = job.run()
    assert read == {"src": ["a1"]}
    data.put("b.json", rows("b1"))
    first, read = job.run(expect="FAILED", **{"--fail": "once"})
    assert read == {"src": ["b1"]}

    def retry():
        runs = glue.get_job_runs(JobName=job.name)["JobRuns"]
        return next((r for r in runs if r.get("PreviousRunId") == first), None)

    retry_id = wait_for(retry, 60, "the retry attempt")["Id"]
    kit.runs.append((job.name, retry_id))
    run = wait_run(glue, job.name, retry_id, timeout=120)
    assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
    assert run["Attempt"] == 1
    assert job.report(retry_id) == {"src": ["b1"]}  # the same input as the failed attempt
    check_entry(job.entry(), 2, 2, retry_id, previous=r1, attempt=1)


# 2, from_catalog --------------------------------------------------------------------------------

CATALOG_SCRIPT = """
    import json
    import os
    import sys
    from awsglue.context import GlueContext
    from awsglue.job import Job
    from awsglue.utils import getResolvedOptions
    from pyspark.context import SparkContext

    args = getResolvedOptions(sys.argv, ["JOB_NAME", "JOB_RUN_ID", "database", "out"])
    glue = GlueContext(SparkContext.getOrCreate())
    job = Job(glue)
    job.init(args["JOB_NAME"], args)
    frame = glue.create_dynamic_frame.from_catalog(
        database=args["database"], table_name="events", transformation_ctx="events")
    read = sorted((str(r["id"]), str(r["day"])) for r in frame.to_arrow().to_pylist())
    with open(os.path.join(args["out"], args["JOB_RUN_ID"] + ".json"), "w") as f:
        json.dump({"events": read}, f)
    job.commit()
"""


def test_2_from_catalog_with_enable_reads_only_new_files_of_the_table(
        kit, glue, server, tmp_path):
    bucket = "cat-" + uuid.uuid4().hex[:10]
    s3 = server.s3()
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="events/day=1/a.csv", Body=b"id\na1\na2\n")
    db = unique("bm")
    glue.create_database(DatabaseInput={"Name": db})
    glue.create_table(DatabaseName=db, TableInput={
        "Name": "events", "Parameters": {"classification": "csv", "skip.header.line.count": "1"},
        "PartitionKeys": [{"Name": "day", "Type": "string"}],
        "StorageDescriptor": {
            "Columns": [{"Name": "id", "Type": "string"}],
            "Location": f"s3://{bucket}/events/",
            "SerdeInfo": {"SerializationLibrary": "org.apache.hadoop.hive.serde2.OpenCSVSerde"}}})
    glue.create_partition(DatabaseName=db, TableName="events", PartitionInput={
        "Values": ["1"], "StorageDescriptor": {"Location": f"s3://{bucket}/events/day=1/"}})
    job = kit.job(CATALOG_SCRIPT, DefaultArguments={**ENABLE, "--database": db,
                                                    "--out": str(tmp_path)})

    def run():
        run = kit.run(job, timeout=120)
        assert run["JobRunState"] == "SUCCEEDED", run.get("ErrorMessage")
        with open(os.path.join(str(tmp_path), run["Id"] + ".json")) as f:
            return [tuple(r) for r in json.load(f)["events"]]

    assert run() == [("a1", "1"), ("a2", "1")]
    s3.put_object(Bucket=bucket, Key="events/day=1/b.csv", Body=b"id\nb1\n")
    s3.put_object(Bucket=bucket, Key="events/day=2/c.csv", Body=b"id\nc1\n")
    glue.create_partition(DatabaseName=db, TableName="events", PartitionInput={
        "Values": ["2"], "StorageDescriptor": {"Location": f"s3://{bucket}/events/day=2/"}})
    assert run() == [("b1", "1"), ("c1", "2")]
    assert run() == []
    state = json.loads(glue.get_job_bookmark(JobName=job)["JobBookmarkEntry"]["JobBookmark"])
    assert state["events"]["database"] == db and state["events"]["table"] == "events"
    assert "paths" not in state["events"]  # the table, not its partitions' folders
