"""JDBC sources and sinks in job runs, end to end: StartJobRun runs a Glue script that reads and
writes real PostgreSQL and MariaDB databases (tests/dbkit.py), through url/user/password options,
Glue connections (CreateConnection -> connectionName, from_jdbc_conf, extract_jdbc_conf) and JDBC
catalog tables; issue 9's test 9 (JDBC bookmarks) at the end."""
import json
import os
import uuid

import pytest

from dbkit import anydb, maria, pg  # noqa: F401
from jobkit import kit, unique  # noqa: F401

# One script for every test: --spec (JSON) says what to read, write and extract; the result
# (rows read per name, extract_jdbc_conf's dict) goes to spec["out"] as JSON.
SCRIPT = r'''
import json, sys
from awsglue.utils import getResolvedOptions
from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame
from awsglue.job import Job

args = getResolvedOptions(sys.argv, ["JOB_NAME", "spec"])
spec = json.loads(args["spec"])
gc = GlueContext()
job = Job(gc)
job.init(args["JOB_NAME"], args)
out = {"reads": {}}
for name, r in spec.get("reads", {}).items():
    if "catalog" in r:
        frame = gc.create_dynamic_frame.from_catalog(
            database=r["catalog"][0], table_name=r["catalog"][1],
            transformation_ctx=r.get("ctx", ""), additional_options=r.get("options", {}))
    else:
        frame = gc.create_dynamic_frame.from_options(
            connection_type=r["type"], connection_options=r["options"],
            transformation_ctx=r.get("ctx", ""))
    rows = json.loads(json.dumps(frame.to_arrow().to_pylist(), default=str))
    out["reads"][name] = sorted(rows, key=lambda row: json.dumps(row, sort_keys=True))
for w in spec.get("writes", []):
    frame = DynamicFrame.from_records(w["rows"], gc, "rows")
    if w.get("jdbc_conf"):
        gc.write_dynamic_frame.from_jdbc_conf(frame, catalog_connection=w["jdbc_conf"],
                                              connection_options=w["options"])
    elif w.get("catalog"):
        gc.write_dynamic_frame.from_catalog(frame, database=w["catalog"][0],
                                            table_name=w["catalog"][1])
    else:
        gc.write_dynamic_frame.from_options(frame, connection_type=w["type"],
                                            connection_options=w["options"])
if spec.get("extract"):
    out["extract"] = gc.extract_jdbc_conf(spec["extract"])
with open(spec["out"], "w") as f:
    json.dump(out, f)
if spec.get("fail_after_write"):
    raise RuntimeError("failing on purpose after the writes")
job.commit()
'''


def run_spec(kit, tmp_path, spec, job=None, arguments=None, expect="SUCCEEDED", timeout=120,
             connections=()):
    """Runs SCRIPT on `spec`; a new job lists `connections` (a run reads only their passwords)."""
    out = str(tmp_path / (uuid.uuid4().hex + ".json"))
    spec = dict(spec, out=out)
    if job is None:
        extra = {"Connections": {"Connections": list(connections)}} if connections else {}
        job = kit.job(SCRIPT, **extra)
    args = {"--spec": json.dumps(spec)}
    args.update(arguments or {})
    run = kit.run(job, timeout=timeout, Arguments=args)
    assert run["JobRunState"] == expect, run.get("ErrorMessage")
    if expect != "SUCCEEDED":
        return run, None
    with open(out) as f:
        return run, json.load(f)


def _people(db, table, n=20):
    db.execute(f"DROP TABLE IF EXISTS {table}")
    db.execute(f"CREATE TABLE {table} (id integer PRIMARY KEY, name varchar(20), score integer)")
    values = ", ".join(f"({i}, 'p{i}', {i * 10})" for i in range(1, n + 1))
    db.execute(f"INSERT INTO {table} VALUES {values}")
    return [{"id": i, "name": f"p{i}", "score": i * 10} for i in range(1, n + 1)]


def _sorted(rows):
    return sorted(rows, key=lambda row: json.dumps(row, sort_keys=True))


def test_a_job_reads_tables_with_and_without_hash_partitioning(kit, anydb, tmp_path):
    table = unique("people")
    expected = _people(anydb, table)
    spec = {"reads": {
        "plain": {"type": anydb.kind, "options": anydb.options(dbtable=table)},
        "hashfield": {"type": anydb.kind,
                      "options": anydb.options(dbtable=table, hashfield="name",
                                               hashpartitions="4")},
        "hashexpression": {"type": anydb.kind,
                           "options": anydb.options(dbtable=table, hashexpression="id",
                                                    hashpartitions="3")},
    }}
    _, out = run_spec(kit, tmp_path, spec)
    for name in ("plain", "hashfield", "hashexpression"):
        assert out["reads"][name] == _sorted(expected), name


def test_a_job_appends_and_merges_into_tables(kit, anydb, tmp_path):
    appended, merged = unique("appended"), unique("merged")
    rows1 = [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]
    rows2 = [{"id": 2, "v": "B"}, {"id": 3, "v": "c"}]
    writes = [
        {"type": anydb.kind, "options": anydb.options(dbtable=appended), "rows": rows1},
        {"type": anydb.kind, "options": anydb.options(dbtable=appended), "rows": rows2},
        {"type": anydb.kind, "options": anydb.options(dbtable=merged, mergeKeys=["id"]),
         "rows": rows1},
        {"type": anydb.kind, "options": anydb.options(dbtable=merged, mergeKeys=["id"]),
         "rows": rows2},
    ]
    run_spec(kit, tmp_path, {"writes": writes})
    assert sorted(anydb.execute(f"SELECT id, v FROM {appended}")) == [
        (1, "a"), (2, "B"), (2, "b"), (3, "c")]
    assert anydb.execute(f"SELECT id, v FROM {merged} ORDER BY id") == [
        (1, "a"), (2, "B"), (3, "c")]
    # at-least-once: the same run again (a retry after a failure) changes nothing with merge
    run_spec(kit, tmp_path, {"writes": writes[2:]})
    assert anydb.execute(f"SELECT id, v FROM {merged} ORDER BY id") == [
        (1, "a"), (2, "B"), (3, "c")]


def _connection(glue, db, name=None):
    name = name or unique("conn")
    glue.create_connection(ConnectionInput={
        "Name": name, "ConnectionType": "JDBC",
        "ConnectionProperties": {"JDBC_CONNECTION_URL": db.url, "USERNAME": db.user,
                                 "PASSWORD": db.password}})
    return name


def test_connection_name_from_jdbc_conf_and_extract_jdbc_conf(kit, glue, anydb, tmp_path):
    conn = _connection(glue, anydb)
    try:
        table, written = unique("src"), unique("dst")
        expected = _people(anydb, table, n=5)
        spec = {
            "reads": {"viaconn": {"type": anydb.kind, "options": {
                "useConnectionProperties": "true", "connectionName": conn, "dbtable": table}}},
            "writes": [{"jdbc_conf": conn, "rows": [{"id": 7, "v": "x"}],
                        "options": {"dbtable": written, "database": anydb.database}}],
            "extract": conn,
        }
        _, out = run_spec(kit, tmp_path, spec, connections=[conn])
        assert out["reads"]["viaconn"] == _sorted(expected)
        assert anydb.execute(f"SELECT id, v FROM {written}") == [(7, "x")]
        conf = out["extract"]
        assert conf["user"] == anydb.user and conf["password"] == anydb.password
        assert conf["vendor"] == anydb.kind
        assert conf["fullUrl"] == anydb.url
        assert conf["url"] == f"jdbc:{anydb.kind}://{anydb.host}:{anydb.port}"
    finally:
        glue.delete_connection(ConnectionName=conn)


def test_an_unknown_connection_fails_the_run_naming_it(kit, anydb, tmp_path):
    spec = {"reads": {"x": {"type": anydb.kind, "options": {
        "connectionName": "no_such_connection_og", "dbtable": "t"}}}}
    run, _ = run_spec(kit, tmp_path, spec, expect="FAILED")
    assert "no_such_connection_og" in run["ErrorMessage"]


def test_from_catalog_on_a_jdbc_table_reads_and_writes(kit, glue, anydb, tmp_path):
    conn = _connection(glue, anydb)
    dbname = unique("jdbcdb")
    glue.create_database(DatabaseInput={"Name": dbname})
    try:
        table = unique("cust")
        expected = _people(anydb, table, n=6)
        # As Glue's JDBC crawler names them: PostgreSQL database.schema.table, MySQL database.table
        location = (f"{anydb.database}.public.{table}" if anydb.kind == "postgresql"
                    else f"{anydb.database}.{table}")
        glue.create_table(DatabaseName=dbname, TableInput={
            "Name": f"{anydb.database}_{table}", "TableType": "EXTERNAL_TABLE",
            "Parameters": {"classification": anydb.kind, "connectionName": conn,
                           "typeOfData": "table", "hashfield": "id", "hashpartitions": "3"},
            "StorageDescriptor": {"Location": location, "Columns": [
                {"Name": "id", "Type": "int"}, {"Name": "name", "Type": "string"},
                {"Name": "score", "Type": "int"}]}})
        spec = {"reads": {"cat": {"catalog": [dbname, f"{anydb.database}_{table}"]}},
                "writes": [{"catalog": [dbname, f"{anydb.database}_{table}"],
                            "rows": [{"id": 100, "name": "new", "score": 1}]}]}
        _, out = run_spec(kit, tmp_path, spec, connections=[conn])
        assert out["reads"]["cat"] == _sorted(expected)
        assert anydb.execute(f"SELECT id, name FROM {table} WHERE id = 100") == [(100, "new")]
    finally:
        glue.delete_database(Name=dbname)
        glue.delete_connection(ConnectionName=conn)


# ---------------------------------------------------------------------------------------------
# Issue 9, test 9: JDBC bookmarks

BOOKMARKS = {"--job-bookmark-option": "job-bookmark-enable"}


def test_9_new_rows_above_the_high_water_mark_are_read_once(kit, glue, anydb, tmp_path):
    table = unique("events")
    _people(anydb, table, n=5)
    spec = {"reads": {"ev": {"type": anydb.kind, "options": anydb.options(dbtable=table),
                             "ctx": "events_src"}}}
    job = kit.job(SCRIPT)
    _, out = run_spec(kit, tmp_path, spec, job=job, arguments=BOOKMARKS)
    assert [r["id"] for r in out["reads"]["ev"]] == [1, 2, 3, 4, 5]
    anydb.execute(f"INSERT INTO {table} VALUES (6, 'p6', 60), (7, 'p7', 70)")
    _, out = run_spec(kit, tmp_path, spec, job=job, arguments=BOOKMARKS)
    assert sorted(r["id"] for r in out["reads"]["ev"]) == [6, 7]
    _, out = run_spec(kit, tmp_path, spec, job=job, arguments=BOOKMARKS)
    assert out["reads"]["ev"] == []  # nothing new: read once
    state = json.loads(glue.get_job_bookmark(JobName=job)["JobBookmarkEntry"]["JobBookmark"])
    assert state["events_src"]["high"] == [7] and state["events_src"]["keys"] == ["id"]
    # pause reads from the mark without moving it; enable then reads the same rows once
    anydb.execute(f"INSERT INTO {table} VALUES (8, 'p8', 80)")
    for option, ids in (("job-bookmark-pause", [8]), ("job-bookmark-pause", [8]),
                        ("job-bookmark-enable", [8]), ("job-bookmark-enable", [])):
        _, out = run_spec(kit, tmp_path, spec, job=job,
                          arguments={"--job-bookmark-option": option})
        assert [r["id"] for r in out["reads"]["ev"]] == ids, option
    # bookmarks disabled (the default): everything again
    _, out = run_spec(kit, tmp_path, spec, job=job)
    assert len(out["reads"]["ev"]) == 8


def test_9_a_non_monotonic_key_skips_exactly_the_rows_glue_skips(kit, glue, anydb, tmp_path):
    """jobBookmarkKeys=["updated_at"] (not the primary key). The bookmark remembers the highest
    updated_at read; the next run reads `updated_at > high`. A row whose updated_at moves
    backwards (below the mark), or a late row stamped in the past, is never read again: these
    are exactly the rows Glue skips (docs/bookmarks.md: keys must be strictly monotonic)."""
    table = unique("orders")
    anydb.execute(f"DROP TABLE IF EXISTS {table}")
    ts = "timestamp" if anydb.kind == "postgresql" else "datetime(6)"
    anydb.execute(f"CREATE TABLE {table} (id integer PRIMARY KEY, status varchar(10), "
                  f"updated_at {ts})")
    anydb.execute(f"INSERT INTO {table} VALUES (1, 'new', '2024-01-01 10:00:00'), "
                  "(2, 'new', '2024-01-01 11:00:00'), (3, 'new', '2024-01-01 12:00:00')")
    spec = {"reads": {"o": {"type": anydb.kind, "options": anydb.options(
        dbtable=table, jobBookmarkKeys=["updated_at"], jobBookmarkKeysSortOrder="asc"),
        "ctx": "orders_src"}}}
    job = kit.job(SCRIPT)
    _, out = run_spec(kit, tmp_path, spec, job=job, arguments=BOOKMARKS)
    assert [r["id"] for r in out["reads"]["o"]] == [1, 2, 3]
    # After run 1 the mark is 12:00.
    anydb.execute(f"UPDATE {table} SET status = 'paid', updated_at = '2024-01-01 13:00:00' "
                  "WHERE id = 1")                        # moved forwards: read again
    anydb.execute(f"UPDATE {table} SET status = 'void', updated_at = '2024-01-01 09:00:00' "
                  "WHERE id = 2")                        # moved backwards: skipped
    anydb.execute(f"INSERT INTO {table} VALUES (4, 'late', '2024-01-01 11:30:00'), "  # late: skipped
                  "(5, 'new', '2024-01-01 12:00:00'), "  # equal to the mark: skipped
                  "(6, 'new', '2024-01-01 14:00:00')")   # above: read
    _, out = run_spec(kit, tmp_path, spec, job=job, arguments=BOOKMARKS)
    assert [(r["id"], r["status"]) for r in out["reads"]["o"]] == [(1, "paid"), (6, "new")]
    state = json.loads(glue.get_job_bookmark(JobName=job)["JobBookmarkEntry"]["JobBookmark"])
    assert state["orders_src"]["keys"] == ["updated_at"]
    assert state["orders_src"]["high"] == ["2024-01-01 14:00:00"]
    # what was skipped stays skipped: nothing new above 14:00
    _, out = run_spec(kit, tmp_path, spec, job=job, arguments=BOOKMARKS)
    assert out["reads"]["o"] == []
    skipped = anydb.execute(f"SELECT id FROM {table} WHERE updated_at <= '2024-01-01 12:00:00' "
                            "AND id IN (2, 4, 5) ORDER BY id")
    assert skipped == [(2,), (4,), (5,)]


def test_9_a_run_that_fails_before_commit_reads_the_same_rows_again(kit, anydb, tmp_path):
    table = unique("retry")
    _people(anydb, table, n=3)
    spec = {"reads": {"r": {"type": anydb.kind, "options": anydb.options(dbtable=table),
                            "ctx": "retry_src"}}}
    job = kit.job(SCRIPT)
    run_spec(kit, tmp_path, dict(spec, fail_after_write=True), job=job, arguments=BOOKMARKS,
             expect="FAILED")
    _, out = run_spec(kit, tmp_path, spec, job=job, arguments=BOOKMARKS)
    assert [r["id"] for r in out["reads"]["r"]] == [1, 2, 3]


def test_9_on_the_spark_engine_each_query_is_a_task_and_bookmarks_hold(kit, glue, pg, tmp_path):
    """--engine spark: the source's queries (3 hash partitions) run in Spark tasks with the
    same reader and type mapping; the bookmark's high-water mark is fixed on the driver and
    moves only on commit, as on the embedded engine. PostgreSQL only: MariaDB's reader is the
    same code in the task (its type merging: python/tests/test_spark_frames.py)."""
    table = unique("sparkjdbc")
    expected = _people(pg, table, n=12)
    spec = {"reads": {"hashed": {"type": pg.kind, "ctx": "src", "options": pg.options(
        dbtable=table, hashfield="name", hashpartitions="3")}}}
    job = kit.job(SCRIPT)
    arguments = dict(BOOKMARKS, **{"--engine": "spark"})
    _, out = run_spec(kit, tmp_path, spec, job=job, arguments=arguments, timeout=300)
    assert out["reads"]["hashed"] == _sorted(expected)
    pg.execute(f"INSERT INTO {table} VALUES (13, 'p13', 130), (14, 'p14', 140)")
    _, out = run_spec(kit, tmp_path, spec, job=job, arguments=arguments, timeout=300)
    assert [r["id"] for r in out["reads"]["hashed"]] == [13, 14]
    assert [r["score"] for r in out["reads"]["hashed"]] == [130, 140]
    state = json.loads(glue.get_job_bookmark(JobName=job)["JobBookmarkEntry"]["JobBookmark"])
    assert state["src"]["high"] == [14] and state["src"]["keys"] == ["id"]
