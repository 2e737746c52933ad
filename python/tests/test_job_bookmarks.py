"""Job's bookmark side in-process: load at init, select_new, bounds, commit, with a fake server
(awsglue.job.service_factory replaced) and GlueContext sources on the pyarrow stand-in engine."""
import json
import os

import pyarrow as pa
import pyarrow.orc as porc
import pyarrow.parquet as pq
import pytest

from awsglue import job as jobmod
from openglue_runtime import bookmarks
from openglue_runtime.engines.embedded import native
from openglue_runtime.catalog import CatalogSource
from awsglue.context import GlueContext
from awsglue.job import Job

import fake_engine
from job_isolation import no_current_job  # noqa: F401  (autouse: no Job leaks between tests)

MIN = 60000


class FakeService:
    """Records calls; `states` maps run id (None: current) -> the job's bookmark document."""

    def __init__(self, states=None, fail_commit=None, fail_get=None):
        self.states = dict(states or {})
        self.fail_commit = fail_commit
        self.fail_get = fail_get
        self.gets = []
        self.commits = []

    def get(self, job_name, run_id=None):
        self.gets.append((job_name, run_id))
        if self.fail_get:
            raise bookmarks.BookmarkServiceError(*self.fail_get)
        return json.loads(json.dumps(self.states[run_id])) if run_id in self.states else None

    def commit(self, job_name, run_id, states, reads):
        if self.fail_commit:
            raise bookmarks.BookmarkServiceError(*self.fail_commit)
        self.commits.append((job_name, run_id, json.loads(json.dumps(states)),
                             json.loads(json.dumps(reads))))
        return {"Version": len(self.commits), "Run": len(self.commits)}


@pytest.fixture
def service(monkeypatch):
    svc = FakeService()
    monkeypatch.setattr(jobmod, "service_factory", lambda: svc)
    return svc


@pytest.fixture
def in_run(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENGLUE_JOB_RUN_ID", "jr_1")
    monkeypatch.chdir(tmp_path)


def start(option, **extra):
    job = Job()
    args = {"JOB_NAME": "orders", "job-bookmark-option": option}
    args.update(extra)
    job.init("orders", args)
    return job


FILES = [("s3://b/in/a.csv", 10, 1000), ("s3://b/in/b.csv", 20, 2000)]


def test_enable_loads_once_reads_everything_first_and_commits_the_new_state(service, in_run):
    job = start("job-bookmark-enable")
    assert service.gets == [("orders", None)]  # EntityNotFound (None): no state yet
    assert job.bookmark_bounds("src") == (None, None)
    assert job.select_new("src", FILES, {"paths": ["s3://b/in/"], "format": "csv",
                                         "boundedFiles": "5"}) == FILES
    job.register_source("src", {"type": "s3", "files": FILES})
    job.commit()
    [(name, run_id, states, reads)] = service.commits
    assert (name, run_id) == ("orders", "jr_1")
    state = states["src"]
    assert state["type"] == "s3" and state["paths"] == ["s3://b/in/"] and state["format"] == "csv"
    assert state["options"] == {"boundedFiles": "5"}
    assert state["high"] == job._started_ms and state["floor"] <= state["high"]
    assert reads["src"]["objects"] == 2 and reads["src"]["bytes"] == 30
    assert service.gets == [("orders", None)]  # loaded once


def test_the_next_run_reads_only_the_new_files(service, in_run):
    job = start("job-bookmark-enable")
    job.select_new("src", FILES)
    job.commit()
    service.states[None] = service.commits[-1][2]
    job2 = start("job-bookmark-enable")
    newer = ("s3://b/in/c.csv", 5, job2._started_ms - 10)
    assert job2.select_new("src", FILES + [newer]) == [newer]
    # The other ctx has no state: it reads everything.
    assert job2.select_new("other", FILES) == FILES


def test_disable_loads_and_sends_nothing(service, in_run):
    job = start("job-bookmark-disable")
    assert job.bookmark_bounds("src") == (None, None)
    assert job.select_new("src", FILES) == FILES
    job.commit()
    assert service.gets == [] and service.commits == []
    assert json.load(open(jobmod.STATE_FILE))["run_id"] == "jr_1"


def test_pause_reads_from_the_current_position_and_sends_nothing(service, in_run):
    _, state = bookmarks.s3_select(FILES[:1], None, now_ms=1500, max_band_ms=0)
    service.states[None] = {"src": state}
    job = start("job-bookmark-pause")
    assert job.bookmark_bounds("src") == (state, None)
    assert job.select_new("src", FILES) == FILES[1:]
    job.commit()
    assert service.commits == []


def test_pause_with_from_and_to_reads_exactly_the_window(service, in_run):
    s1 = bookmarks.s3_select(FILES[:1], None, now_ms=1500, max_band_ms=0)[1]
    s2 = bookmarks.s3_select(FILES, s1, now_ms=2500, max_band_ms=0)[1]
    service.states.update({"jr_a": {"src": s1}, "jr_b": {"src": s2}, None: {"src": s2}})
    job = start("job-bookmark-pause", **{"job-bookmark-from": "jr_a", "job-bookmark-to": "jr_b"})
    assert sorted(service.gets) == [("orders", "jr_a"), ("orders", "jr_b")]
    later = ("s3://b/in/z.csv", 1, 2600)  # after run B: not in the window
    assert job.select_new("src", FILES + [later]) == [FILES[1]]
    # A ctx that had no state at the window's end: an empty window.
    assert job.bookmark_bounds("other") == (None, {})
    assert job.select_new("other", FILES) == []
    job.commit()
    assert service.commits == []


def test_a_window_run_that_the_server_does_not_know_fails_init(service, in_run):
    with pytest.raises(RuntimeError, match="jr_nope"):
        start("job-bookmark-pause", **{"job-bookmark-from": "jr_nope", "job-bookmark-to": "jr_x"})


def test_a_failing_load_fails_init_with_a_clear_message(service, in_run):
    service.fail_get = ("AccessDeniedException", "not yours")
    with pytest.raises(RuntimeError, match="cannot load the job bookmark of orders: "
                                           "AccessDeniedException: not yours"):
        start("job-bookmark-enable")


def test_a_refused_commit_fails_the_run(service, in_run):
    job = start("job-bookmark-enable")
    job.select_new("src", FILES)
    service.fail_commit = ("ConcurrentModificationException", "run jr_1 is not running")
    with pytest.raises(RuntimeError, match="was not saved .*ConcurrentModificationException.*"
                                           "read this run's input again"):
        job.commit()
    assert not job.committed


def test_a_second_commit_sends_nothing_more(service, in_run, capsys):
    job = start("job-bookmark-enable")
    job.commit()
    job.commit()
    assert len(service.commits) == 1
    assert "already committed" in capsys.readouterr().out


def test_an_enable_run_with_no_sources_still_commits(service, in_run):
    start("job-bookmark-enable").commit()
    assert service.commits == [("orders", "jr_1", {}, {})]


def test_outside_a_job_run_nothing_is_loaded_or_sent(service, monkeypatch, tmp_path):
    monkeypatch.delenv("OPENGLUE_JOB_RUN_ID", raising=False)
    monkeypatch.chdir(tmp_path)
    job = start("job-bookmark-enable")
    assert job.select_new("src", FILES) == FILES
    job.commit()
    assert service.gets == [] and service.commits == []


def test_a_source_without_ctx_takes_no_part(service, in_run):
    service.states[None] = {"src": bookmarks.s3_select(FILES, None, now_ms=3000)[1]}
    job = start("job-bookmark-enable")
    assert job.select_new("", FILES) == FILES
    assert job.select_new(None, FILES) == FILES
    job.commit()
    assert service.commits[0][2] == {}


def test_a_source_passing_its_own_state_is_committed_as_given(service, in_run):
    job = start("job-bookmark-enable")
    state = {"type": "jdbc", "table": "t", "keys": ["id"], "sort_order": "asc", "high": [7]}
    job.register_source("rows", {"type": "jdbc", "table": "t", "rows": 3, "high": [7],
                                 "state": state})
    job.commit()
    [(_, _, states, reads)] = service.commits
    assert states == {"rows": state}
    assert reads == {"rows": {"type": "jdbc", "rows": 3, "high": [7]}}
    assert "state" not in job.sources()["rows"]


def test_a_ctx_holding_another_kind_of_state_fails_the_read(service, in_run):
    service.states[None] = {"src": {"type": "jdbc", "high": [1]}}
    job = start("job-bookmark-enable")
    with pytest.raises(RuntimeError, match="'src'.*jdbc"):
        job.select_new("src", FILES)


def test_bad_bounded_options_fail_the_read(service, in_run):
    job = start("job-bookmark-enable")
    with pytest.raises(ValueError, match="boundedFiles"):
        job.select_new("src", FILES, {"boundedFiles": "many"})


# ---------------------------------------------------------------------------------------------
# Every GlueContext reader path goes through select_new.

@pytest.fixture
def engine(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "_ext", fake_engine)
    root = tmp_path / "s3"
    root.mkdir()
    monkeypatch.setenv("OPENGLUE_S3_ROOT", str(root))
    return root


def _write(folder, name, fmt, ident, mtime_s):
    path = os.path.join(folder, name)
    os.makedirs(folder, exist_ok=True)
    table = pa.table({"id": pa.array([ident], pa.int64())})
    if fmt == "csv":
        with open(path, "w") as f:
            f.write(f"id\n{ident}\n")
    elif fmt == "json":
        with open(path, "w") as f:
            f.write(json.dumps({"id": ident}) + "\n")
    elif fmt == "parquet":
        pq.write_table(table, path)
    else:
        porc.write_table(table, path)
    os.utime(path, (mtime_s, mtime_s))
    return path


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "orc"])
@pytest.mark.parametrize("where", ["s3", "local"])
def test_from_options_reads_only_new_files_for_every_format(service, in_run, engine, tmp_path,
                                                             fmt, where):
    folder = str(engine / "bkt" / "in") if where == "s3" else str(tmp_path / "local" / "in")
    path = "s3://bkt/in/" if where == "s3" else folder + "/"
    import time
    old = time.time() - 3600
    _write(folder, f"a.{fmt}", fmt, 1, old)
    ctx = GlueContext(object())

    def run():
        job = start("job-bookmark-enable")
        frame = ctx.create_dynamic_frame.from_options(
            "s3", {"paths": [path]}, fmt, {"withHeader": True} if fmt == "csv" else {},
            transformation_ctx="src")
        ids = sorted(int(r["id"]) for r in frame.to_arrow().to_pylist())
        job.commit()
        service.states[None] = service.commits[-1][2]
        return ids, service.commits[-1]

    ids, (_, _, states, reads) = run()
    assert ids == [1]
    assert states["src"]["paths"] == [path] and states["src"]["format"] == fmt
    _write(folder, f"b.{fmt}", fmt, 2, time.time() - 1)  # new: after run 1
    ids, _ = run()
    assert ids == [2]
    ids, (_, _, _, reads) = run()
    assert ids == [] and reads["src"]["objects"] == 0


def test_from_options_passes_the_bounded_options(service, in_run, engine):
    import time
    old = time.time() - 3600
    for i in range(5):
        _write(str(engine / "bkt" / "in"), f"f{i}.json", "json", i, old + i)
    ctx = GlueContext(object())
    seen = []
    for _ in range(3):
        job = start("job-bookmark-enable")
        frame = ctx.create_dynamic_frame.from_options(
            "s3", {"paths": ["s3://bkt/in/"], "boundedFiles": "2"}, "json",
            transformation_ctx="src")
        seen.append(sorted(int(r["id"]) for r in frame.to_arrow().to_pylist()))
        job.commit()
        service.states[None] = service.commits[-1][2]
    assert seen == [[0, 1], [2, 3], [4]]
    assert service.commits[-1][2]["src"]["options"] == {"boundedFiles": "2"}


def test_from_catalog_reads_only_new_files_and_keeps_the_table_in_the_state(
        service, in_run, engine, monkeypatch):
    import time
    from openglue_runtime import catalog
    old = time.time() - 3600
    _write(str(engine / "bkt" / "t" / "day=1"), "a.json", "json", 1, old)
    _write(str(engine / "bkt" / "t" / "day=2"), "b.json", "json", 2, old)

    def resolve_source(database, table_name, **kwargs):
        return CatalogSource(database=database, table_name=table_name, location="s3://bkt/t/",
                             paths=[("s3://bkt/t/day=1/", {"day": "1"}),
                                    ("s3://bkt/t/day=2/", {"day": "2"})],
                             format="json", format_options={}, schema_columns=[("id", "long")],
                             partition_keys=[("day", "string")])
    monkeypatch.setattr(catalog, "resolve_source", resolve_source)
    ctx = GlueContext(object())

    def run():
        job = start("job-bookmark-enable")
        frame = ctx.create_dynamic_frame.from_catalog(
            database="db", table_name="t", transformation_ctx="cat",
            push_down_predicate="day > '0'", additional_options={"boundedFiles": 10})
        rows = sorted((int(r["id"]), r["day"]) for r in frame.to_arrow().to_pylist())
        job.commit()
        service.states[None] = service.commits[-1][2]
        return rows

    assert run() == [(1, "1"), (2, "2")]
    state = service.commits[-1][2]["cat"]
    assert state["database"] == "db" and state["table"] == "t" and "paths" not in state
    assert state["location"] == "s3://bkt/t/" and state["push_down_predicate"] == "day > '0'"
    assert state["options"] == {"boundedFiles": 10}
    _write(str(engine / "bkt" / "t" / "day=2"), "c.json", "json", 3, time.time() - 1)
    assert run() == [(3, "2")]
    assert run() == []


def test_the_bookmark_option_comes_from_the_command_line_when_args_lack_it(
        service, in_run, monkeypatch):
    """Glue scripts pass getResolvedOptions(sys.argv, ["JOB_NAME"]): the option is not in args."""
    monkeypatch.setattr("sys.argv", ["script.py", "--JOB_NAME", "orders",
                                     "--job-bookmark-option", "job-bookmark-enable"])
    job = Job()
    job.init("orders", {"JOB_NAME": "orders"})
    assert job.bookmark_option == "job-bookmark-enable"
    assert service.gets == [("orders", None)]
    monkeypatch.setattr("sys.argv", ["script.py", "--job-bookmark-option=job-bookmark-pause",
                                     "--job-bookmark-from", "jr_a", "--job-bookmark-to", "jr_b"])
    service.states.update({"jr_a": {}, "jr_b": {}})
    job = Job()
    job.init("orders", {"JOB_NAME": "orders"})
    assert job.bookmark_option == "job-bookmark-pause"
    assert service.gets[-2:] == [("orders", "jr_a"), ("orders", "jr_b")]
    # What the script passes wins.
    job = Job()
    job.init("orders", {"JOB_NAME": "orders", "job-bookmark-option": "job-bookmark-disable"})
    assert job.bookmark_option == "job-bookmark-disable"


def test_a_run_with_nothing_new_writes_nothing_even_partitioned(service, in_run, engine,
                                                                 tmp_path):
    import time
    _write(str(engine / "bkt" / "in"), "a.json", "json", 1, time.time() - 3600)
    ctx = GlueContext(object())
    for expected in (1, 0):
        job = start("job-bookmark-enable")
        frame = ctx.create_dynamic_frame.from_options(
            "s3", {"paths": ["s3://bkt/in/"]}, "json", transformation_ctx="src")
        written = ctx.write_dynamic_frame.from_options(
            frame=frame, connection_type="s3",
            connection_options={"path": str(tmp_path / "out"), "partitionKeys": ["id"]},
            format="json")
        assert len(ctx.written[str(tmp_path / "out")]) == expected
        job.commit()
        service.states[None] = service.commits[-1][2]
