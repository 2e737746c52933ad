"""openglue_runtime.jdbc in-process against real PostgreSQL and MariaDB (tests/dbkit.py): types, parallel
reads, sampleQuery, sinks (create, append, merge), and bookmark selection with a stand-in Job."""
import datetime
import decimal

import pytest

from openglue_runtime import jdbc
from awsglue import job as jobmod
from openglue_runtime import run_state
from awsglue.context import GlueContext
from dbkit import anydb, maria, pg  # noqa: F401


@pytest.fixture(autouse=True)
def no_current_job():
    """A test here that runs Job.init() leaves no current Job behind (python/tests'
    job_isolation does the same for that folder; pytest runs both folders in one process)."""
    run_state.set_current_job(None)
    yield
    run_state.set_current_job(None)


# --------------------------------------------------------------------------------------------
# URLs

@pytest.mark.parametrize("url,expected", [
    ("jdbc:postgresql://db.example:6543/sales", ("postgresql", "db.example", 6543, "sales")),
    ("jdbc:postgresql://db.example/sales?sslmode=require", ("postgresql", "db.example", 5432, "sales")),
    ("jdbc:mysql://10.0.0.5:3307/shop", ("mysql", "10.0.0.5", 3307, "shop")),
    ("jdbc:mariadb://h/shop", ("mysql", "h", 3306, "shop")),
    ("jdbc:postgresql://[::1]:5433/x", ("postgresql", "::1", 5433, "x")),
])
def test_jdbc_urls_are_parsed_as_glue_writes_them(url, expected):
    assert jdbc.parse_url(url)[:4] == expected


@pytest.mark.parametrize("url", ["", "postgresql://h/db", "jdbc:oracle:thin:@h:1521:x",
                                 "jdbc:sqlserver://h:1433;databaseName=x"])
def test_unsupported_urls_are_refused_with_the_expected_forms(url):
    with pytest.raises(jdbc.JdbcError, match="jdbc:postgresql://host:port/database"):
        jdbc.parse_url(url)


def test_options_without_url_or_connection_name_are_refused():
    with pytest.raises(jdbc.JdbcError, match="connectionName"):
        jdbc.resolve("postgresql", {"dbtable": "t"})
    with pytest.raises(jdbc.JdbcError, match="does not match"):
        jdbc.resolve("mysql", {"url": "jdbc:postgresql://h/db", "dbtable": "t"})


# --------------------------------------------------------------------------------------------
# Reading

def _types_table(db, name):
    db.execute(f"DROP TABLE IF EXISTS {name}")
    if db.kind == "postgresql":
        db.execute(f"CREATE TABLE {name} (id bigint PRIMARY KEY, small smallint, i integer, "
                   "name text, code varchar(5), amount numeric(10,2), free numeric, ts timestamp, "
                   "tz timestamptz, d date, ok boolean, raw bytea, f double precision, r real, "
                   "doc jsonb)")
        db.execute(f"INSERT INTO {name} VALUES (1, 2, 3, 'é', 'ab', 12.50, 1.25, "
                   "'2024-01-02 03:04:05.123456', '2024-01-02 03:04:05+02', '2024-01-02', true, "
                   "'\\x0102', 1.5, 2.5, '{\"a\": 1}'), "
                   "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                   "NULL, NULL)")
    else:
        db.execute(f"CREATE TABLE {name} (id bigint PRIMARY KEY, small smallint, i int, "
                   "name text, code varchar(5), amount decimal(10,2), free decimal(20,6), "
                   "ts datetime(6), tz timestamp(6) NULL, d date, ok boolean, raw blob, f double, "
                   "r float, doc json)")
        db.execute(f"INSERT INTO {name} VALUES (1, 2, 3, 'é', 'ab', 12.50, 1.25, "
                   "'2024-01-02 03:04:05.123456', '2024-01-02 01:04:05', '2024-01-02', true, "
                   "X'0102', 1.5, 2.5, '{\"a\": 1}'), "
                   "(2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                   "NULL, NULL)")


def test_column_types_map_to_glue_types(anydb):
    _types_table(anydb, "types_t")
    gc = GlueContext()
    frame = gc.create_dynamic_frame.from_options(anydb.kind, anydb.options(dbtable="types_t"))
    types = {f.name: f.dataType.typeName() for f in frame.schema().fields}
    assert types["id"] == "long" and types["small"] == "short" and types["i"] == "int"
    assert types["name"] == "string" and types["code"] == "string" and types["doc"] == "string"
    assert types["amount"] == "decimal" and types["free"] == "decimal"
    assert types["ts"] == "timestamp" and types["tz"] == "timestamp" and types["d"] == "date"
    assert types["ok"] == "boolean" and types["raw"] == "binary"
    assert types["f"] == "double" and types["r"] in ("float", "double")
    rows = sorted(frame.to_arrow().to_pylist(), key=lambda r: r["id"])
    one = rows[0]
    assert one["name"] == "é" and one["code"] == "ab"
    assert one["amount"] == decimal.Decimal("12.50")
    assert one["ts"] == datetime.datetime(2024, 1, 2, 3, 4, 5, 123456)
    assert one["tz"] == datetime.datetime(2024, 1, 2, 1, 4, 5)  # as UTC
    assert one["d"] == datetime.date(2024, 1, 2) and one["ok"] is True
    assert one["raw"] == b"\x01\x02" and one["f"] == 1.5
    assert '"a"' in one["doc"]
    assert all(v is None for k, v in rows[1].items() if k != "id")


def _numbers(db, name, n=100):
    db.execute(f"DROP TABLE IF EXISTS {name}")
    db.execute(f"CREATE TABLE {name} (id integer PRIMARY KEY, grp varchar(10), v integer)")
    values = ", ".join(f"({i}, {'NULL' if i % 10 == 0 else repr('g' + str(i % 13))}, {i * 3})"
                       for i in range(1, n + 1))
    db.execute(f"INSERT INTO {name} VALUES {values}")


class _Counter:
    def __init__(self, monkeypatch):
        self.queries = []
        real = jdbc._fetch

        def fetch(target, sql, params):
            self.queries.append(sql)
            return real(target, sql, params)
        monkeypatch.setattr(jdbc, "_fetch", fetch)


@pytest.mark.parametrize("option", [{"hashfield": "grp"}, {"hashexpression": "id"},
                                    {"hashexpression": "v % 17"}])
def test_parallel_reads_cover_every_row_exactly_once(anydb, monkeypatch, option):
    _numbers(anydb, "par_t")
    counter = _Counter(monkeypatch)
    frame = GlueContext().create_dynamic_frame.from_options(
        anydb.kind, anydb.options(dbtable="par_t", hashpartitions="5", **option))
    ids = sorted(r["id"] for r in frame.to_arrow().to_pylist())
    assert ids == list(range(1, 101))  # rows with a NULL hashfield included, none twice
    assert len(counter.queries) == 5


def test_hashpartitions_defaults_to_seven(pg, monkeypatch):
    _numbers(pg, "par7_t")
    counter = _Counter(monkeypatch)
    frame = GlueContext().create_dynamic_frame.from_options(
        "postgresql", pg.options(dbtable="par7_t", hashfield="id"))
    assert frame.count() == 100
    assert len(counter.queries) == 7


def test_sample_query_with_partitioning(anydb):
    _numbers(anydb, "sq_t")
    gc = GlueContext()
    frame = gc.create_dynamic_frame.from_options(anydb.kind, anydb.options(
        dbtable="sq_t", sampleQuery="SELECT id, v FROM sq_t WHERE v > 150 AND",
        enablePartitioningForSampleQuery=True, hashfield="id", hashpartitions=4))
    assert sorted(r["id"] for r in frame.to_arrow().to_pylist()) == list(range(51, 101))
    frame = gc.create_dynamic_frame.from_options(anydb.kind, anydb.options(
        dbtable="sq_t", sampleQuery="SELECT id FROM sq_t WHERE id <= 3"))
    assert sorted(r["id"] for r in frame.to_arrow().to_pylist()) == [1, 2, 3]


def test_a_missing_table_fails_naming_the_database(anydb):
    with pytest.raises(jdbc.JdbcError, match="no_such_table"):
        GlueContext().create_dynamic_frame.from_options(
            anydb.kind, anydb.options(dbtable="no_such_table")).count()


def test_a_wrong_password_fails_without_echoing_it(anydb):
    opts = anydb.options(dbtable="t", password="wrong-Secret-77")
    with pytest.raises(jdbc.JdbcError) as e:
        GlueContext().create_dynamic_frame.from_options(anydb.kind, opts)
    assert "cannot connect" in str(e.value) and "wrong-Secret-77" not in str(e.value)


# --------------------------------------------------------------------------------------------
# Writing

def _frame(gc, rows):
    from awsglue.dynamicframe import DynamicFrame
    return DynamicFrame.from_records(rows, gc, "in")


def test_sink_creates_the_table_and_appends(anydb):
    anydb.execute("DROP TABLE IF EXISTS out_append")
    gc = GlueContext()
    rows = [{"id": 1, "name": "a", "amount": decimal.Decimal("1.25"), "ok": True,
             "at": datetime.datetime(2024, 5, 6, 7, 8, 9), "tags": ["x", "y"]},
            {"id": 2, "name": None, "amount": None, "ok": False, "at": None, "tags": []}]
    frame = _frame(gc, rows)
    opts = anydb.options(dbtable="out_append")
    gc.write_dynamic_frame.from_options(frame, anydb.kind, opts)
    gc.write_dynamic_frame.from_options(frame, anydb.kind, opts)
    got = anydb.execute("SELECT id, name, amount, ok, at, tags FROM out_append ORDER BY id")
    assert [r[0] for r in got] == [1, 1, 2, 2]
    assert got[0][1] == "a" and got[0][2] == decimal.Decimal("1.25") and bool(got[0][3])
    assert got[0][4] == datetime.datetime(2024, 5, 6, 7, 8, 9)
    assert got[0][5] == '["x", "y"]'


def test_merge_on_keys_makes_a_repeated_write_harmless(anydb):
    anydb.execute("DROP TABLE IF EXISTS out_merge")
    gc = GlueContext()
    opts = anydb.options(dbtable="out_merge", mergeKeys=["id"])
    gc.write_dynamic_frame.from_options(
        _frame(gc, [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]), anydb.kind, opts)
    gc.write_dynamic_frame.from_options(
        _frame(gc, [{"id": 2, "v": "B"}, {"id": 3, "v": "c"}]), anydb.kind, opts)
    gc.write_dynamic_frame.from_options(
        _frame(gc, [{"id": 2, "v": "B"}, {"id": 3, "v": "c"}]), anydb.kind, opts)  # repeat
    assert anydb.execute("SELECT id, v FROM out_merge ORDER BY id") == [
        (1, "a"), (2, "B"), (3, "c")]


def test_merge_with_compound_keys_into_an_existing_table(anydb):
    anydb.execute("DROP TABLE IF EXISTS out_merge2")
    anydb.execute("CREATE TABLE out_merge2 (a integer, b varchar(10), v integer, "
                  "PRIMARY KEY (a, b))")
    anydb.execute("INSERT INTO out_merge2 VALUES (1, 'x', 1)")
    gc = GlueContext()
    opts = anydb.options(dbtable="out_merge2", mergeKeys="a,b")
    gc.write_dynamic_frame.from_options(
        _frame(gc, [{"a": 1, "b": "x", "v": 10}, {"a": 1, "b": "y", "v": 20}]), anydb.kind, opts)
    assert anydb.execute("SELECT a, b, v FROM out_merge2 ORDER BY a, b") == [
        (1, "x", 10), (1, "y", 20)]


def test_merge_without_a_unique_key_is_refused_and_writes_nothing(anydb):
    anydb.execute("DROP TABLE IF EXISTS out_nokey")
    anydb.execute("CREATE TABLE out_nokey (id integer, v varchar(10))")
    gc = GlueContext()
    with pytest.raises(jdbc.JdbcError, match="primary key or unique index"):
        gc.write_dynamic_frame.from_options(
            _frame(gc, [{"id": 1, "v": "a"}]), anydb.kind,
            anydb.options(dbtable="out_nokey", mergeKeys=["id"]))
    assert anydb.execute("SELECT COUNT(*) FROM out_nokey") == [(0,)]


def test_a_failing_write_leaves_no_rows(anydb):
    anydb.execute("DROP TABLE IF EXISTS out_atomic")
    anydb.execute("CREATE TABLE out_atomic (id integer PRIMARY KEY, v varchar(10))")
    gc = GlueContext()
    rows = [{"id": i, "v": "x"} for i in range(1, 50)] + [{"id": 1, "v": "dup"}]
    with pytest.raises(jdbc.JdbcError, match="out_atomic"):
        gc.write_dynamic_frame.from_options(_frame(gc, rows), anydb.kind,
                                            anydb.options(dbtable="out_atomic"))
    assert anydb.execute("SELECT COUNT(*) FROM out_atomic") == [(0,)]


def test_a_frame_column_missing_in_the_table_is_an_error(anydb):
    anydb.execute("DROP TABLE IF EXISTS out_cols")
    anydb.execute("CREATE TABLE out_cols (id integer)")
    gc = GlueContext()
    with pytest.raises(jdbc.JdbcError, match="extra"):
        gc.write_dynamic_frame.from_options(_frame(gc, [{"id": 1, "extra": 2}]), anydb.kind,
                                            anydb.options(dbtable="out_cols"))


# --------------------------------------------------------------------------------------------
# Bookmarks (with a stand-in for the running Job: contract section 3)

class FakeJob:
    def __init__(self, start=None, end=None, option="job-bookmark-enable"):
        self.start, self.end = start, end
        self.bookmark_option = option
        self.registered = {}

    def bookmark_bounds(self, ctx):
        return self.start, self.end

    def register_source(self, ctx, info):
        self.registered[ctx] = info


def _read_ids(monkeypatch, db, job, **opts):
    monkeypatch.setattr(run_state, "current_job", lambda: job)
    frame = GlueContext().create_dynamic_frame.from_options(
        db.kind, db.options(**opts), transformation_ctx="src")
    return sorted(tuple(r.values()) for r in frame.to_arrow().to_pylist())


def test_bookmark_reads_above_the_high_water_mark_of_the_primary_key(anydb, monkeypatch):
    _numbers(anydb, "bm_t", n=5)
    job = FakeJob()
    assert _read_ids(monkeypatch, anydb, job, dbtable="bm_t") == [
        (i, None if i % 10 == 0 else f"g{i % 13}", i * 3) for i in range(1, 6)]
    state = job.registered["src"]["state"]
    assert state == {"type": "jdbc", "connection": anydb.url, "table": "bm_t", "keys": ["id"],
                     "sort_order": "asc", "high": [5]}
    assert job.registered["src"]["rows"] == 5
    anydb.execute("INSERT INTO bm_t VALUES (6, 'n', 1), (7, 'n', 2)")
    job2 = FakeJob(start=state)
    frame_ids = [r[0] for r in _read_ids(monkeypatch, anydb, job2, dbtable="bm_t")]
    assert frame_ids == [6, 7]
    assert job2.registered["src"]["state"]["high"] == [7] and job2.registered["src"]["low"] == [5]
    job3 = FakeJob(start=job2.registered["src"]["state"])
    assert _read_ids(monkeypatch, anydb, job3, dbtable="bm_t") == []
    assert job3.registered["src"]["state"]["high"] == [7]  # nothing new: the mark stays


def test_bookmark_compound_keys_compare_as_tuples(anydb, monkeypatch):
    anydb.execute("DROP TABLE IF EXISTS bm_c")
    anydb.execute("CREATE TABLE bm_c (day integer, seq integer, v integer)")
    anydb.execute("INSERT INTO bm_c VALUES (1, 1, 0), (1, 2, 0), (2, 1, 0)")
    job = FakeJob()
    opts = {"dbtable": "bm_c", "jobBookmarkKeys": ["day", "seq"]}
    assert len(_read_ids(monkeypatch, anydb, job, **opts)) == 3
    assert job.registered["src"]["state"]["high"] == [2, 1]
    # (1, 3) < (2, 1): below the mark as a tuple, skipped; (2, 2) and (3, 0) are above it
    anydb.execute("INSERT INTO bm_c VALUES (1, 3, 1), (2, 2, 1), (3, 0, 1)")
    job2 = FakeJob(start=job.registered["src"]["state"])
    assert _read_ids(monkeypatch, anydb, job2, **opts) == [(2, 2, 1), (3, 0, 1)]


def test_bookmark_descending_keys(anydb, monkeypatch):
    anydb.execute("DROP TABLE IF EXISTS bm_d")
    anydb.execute("CREATE TABLE bm_d (k integer PRIMARY KEY)")
    anydb.execute("INSERT INTO bm_d VALUES (100), (90), (80)")
    opts = {"dbtable": "bm_d", "jobBookmarkKeysSortOrder": "desc"}
    job = FakeJob()
    _read_ids(monkeypatch, anydb, job, **opts)
    assert job.registered["src"]["state"]["high"] == [80]
    anydb.execute("INSERT INTO bm_d VALUES (70), (85)")
    job2 = FakeJob(start=job.registered["src"]["state"])
    monkeypatch.setattr(run_state, "current_job", lambda: job2)
    frame = GlueContext().create_dynamic_frame.from_options(
        anydb.kind, anydb.options(**opts), transformation_ctx="src")
    assert [r["k"] for r in frame.to_arrow().to_pylist()] == [70]


def test_bookmark_pause_window_reads_between_two_states(anydb, monkeypatch):
    _numbers(anydb, "bm_w", n=10)
    start = {"type": "jdbc", "keys": ["id"], "sort_order": "asc", "high": [3]}
    end = {"type": "jdbc", "keys": ["id"], "sort_order": "asc", "high": [6]}
    job = FakeJob(start=start, end=end)
    assert [r[0] for r in _read_ids(monkeypatch, anydb, job, dbtable="bm_w")] == [4, 5, 6]


def test_bookmark_with_parallel_reads(anydb, monkeypatch):
    _numbers(anydb, "bm_p", n=40)
    start = {"type": "jdbc", "keys": ["id"], "sort_order": "asc", "high": [25]}
    job = FakeJob(start=start)
    got = _read_ids(monkeypatch, anydb, job, dbtable="bm_p", hashexpression="id",
                    hashpartitions=4)
    assert [r[0] for r in got] == list(range(26, 41))
    got = _read_ids(monkeypatch, anydb, FakeJob(start=start), dbtable="bm_p", hashfield="grp",
                    hashpartitions=3)
    assert [r[0] for r in got] == list(range(26, 41))


def test_bookmark_without_keys_or_primary_key_is_an_error(anydb, monkeypatch):
    anydb.execute("DROP TABLE IF EXISTS bm_nopk")
    anydb.execute("CREATE TABLE bm_nopk (v integer)")
    with pytest.raises(jdbc.JdbcError, match="no primary key"):
        _read_ids(monkeypatch, anydb, FakeJob(), dbtable="bm_nopk")


def test_a_source_without_transformation_ctx_reads_everything(anydb, monkeypatch):
    _numbers(anydb, "bm_noctx", n=4)
    job = FakeJob(start={"type": "jdbc", "keys": ["id"], "sort_order": "asc", "high": [3]})
    monkeypatch.setattr(run_state, "current_job", lambda: job)
    frame = GlueContext().create_dynamic_frame.from_options(
        anydb.kind, anydb.options(dbtable="bm_noctx"))
    assert frame.count() == 4 and job.registered == {}


@pytest.mark.parametrize("coltype,values", [
    ("timestamp", ["2024-01-01 10:00:00", "2024-01-01 11:30:00.25", "2024-01-02 00:00:00"]),
    ("date", ["2024-01-01", "2024-01-02", "2024-02-01"]),
    ("decimal(10,2)", ["1.50", "2.25", "10.00"]),
    ("varchar(20)", ["apple", "banana", "cherry"]),
])
def test_bookmark_marks_of_every_key_type_round_trip_through_json(anydb, monkeypatch, coltype,
                                                                   values):
    import json
    if anydb.kind == "mysql" and coltype == "timestamp":
        coltype = "datetime(6)"
    anydb.execute("DROP TABLE IF EXISTS bm_types")
    anydb.execute(f"CREATE TABLE bm_types (k {coltype} PRIMARY KEY, n integer)")
    anydb.execute("INSERT INTO bm_types VALUES (%s, 1), (%s, 2)", values[:2])
    job = FakeJob()
    assert [r[1] for r in _read_ids(monkeypatch, anydb, job, dbtable="bm_types")] == [1, 2]
    state = json.loads(json.dumps(job.registered["src"]["state"]))  # as the server keeps it
    anydb.execute("INSERT INTO bm_types VALUES (%s, 3)", values[2:])
    job2 = FakeJob(start=state)
    assert [r[1] for r in _read_ids(monkeypatch, anydb, job2, dbtable="bm_types")] == [3]
    job3 = FakeJob(start=json.loads(json.dumps(job2.registered["src"]["state"])))
    assert _read_ids(monkeypatch, anydb, job3, dbtable="bm_types") == []


def test_jdbc_catalog_tables_name_database_and_table_as_the_crawler_writes_them(monkeypatch):
    props = {"shop": {"JDBC_CONNECTION_URL": "jdbc:mysql://h:3306/other", "USERNAME": "u",
                      "PASSWORD": "p"},
             "dw": {"JDBC_CONNECTION_URL": "jdbc:postgresql://h/other", "USERNAME": "u",
                    "PASSWORD": "p"}}
    monkeypatch.setattr(jdbc, "_connection_props", lambda name, catalog_id=None: props[name])
    table = {"Name": "sales_orders", "Parameters": {"classification": "mysql",
                                                     "connectionName": "shop",
                                                     "hashfield": "id"},
             "StorageDescriptor": {"Location": "sales.orders"}}
    assert jdbc.is_jdbc_table(table)
    target, options = jdbc.catalog_target(table, {"hashpartitions": "3"})
    assert (target.vendor, target.database, target.dbtable) == ("mysql", "sales", "orders")
    assert options["hashfield"] == "id" and options["hashpartitions"] == "3"
    table = {"Name": "dw_public_people", "Parameters": {"classification": "postgresql",
                                                         "connectionName": "dw"},
             "StorageDescriptor": {"Location": "dw.public.people"}}
    target, _ = jdbc.catalog_target(table, {})
    assert (target.database, target.dbtable, target.user) == ("dw", "public.people", "u")
    assert target.label == "dw" and "p" not in target.url.split("//")[1].split("/")[0]
    with pytest.raises(jdbc.JdbcError, match="Location"):
        jdbc.catalog_target({"Name": "x", "Parameters": {"connectionName": "dw"},
                             "StorageDescriptor": {"Location": "people"}}, {})


def test_credentials_in_the_url_and_the_url_never_carries_the_password():
    target = jdbc.resolve("postgresql", {"url": "jdbc:postgresql://h:1/db?user=a&password=Sekr1t&"
                                                "sslmode=require", "dbtable": "t"})
    assert (target.user, target.password) == ("a", "Sekr1t")
    assert target.url == "jdbc:postgresql://h:1/db" and target.params == {"sslmode": "require"}
    assert "Sekr1t" not in repr(target)


def test_bookmarks_disabled_read_everything_without_needing_keys(anydb, monkeypatch):
    anydb.execute("DROP TABLE IF EXISTS bm_off")
    anydb.execute("CREATE TABLE bm_off (v integer)")  # no primary key: fine when disabled
    anydb.execute("INSERT INTO bm_off VALUES (1), (2)")
    job = FakeJob(option="job-bookmark-disable")
    assert _read_ids(monkeypatch, anydb, job, dbtable="bm_off") == [(1,), (2,)]
    assert job.registered == {}


def test_bookmark_pause_window_ending_where_the_ctx_had_no_state_is_empty(anydb, monkeypatch):
    _numbers(anydb, "bm_empty", n=3)
    job = FakeJob(start=None, end={}, option="job-bookmark-pause")
    assert _read_ids(monkeypatch, anydb, job, dbtable="bm_empty") == []
    job = FakeJob(start=None, end={"type": "jdbc", "keys": ["id"], "sort_order": "asc",
                                   "high": [2]}, option="job-bookmark-pause")
    assert [r[0] for r in _read_ids(monkeypatch, anydb, job, dbtable="bm_empty")] == [1, 2]


def test_the_running_job_gets_the_new_state_and_read_summary_for_its_commit(anydb, monkeypatch):
    """With the real awsglue.job.Job (bmrt's bookmark API, contract section 3): what a JDBC read
    registers is what commit() sends."""
    monkeypatch.delenv("OPENGLUE_JOB_RUN_ID", raising=False)
    _numbers(anydb, "bm_real", n=3)
    job = jobmod.Job()
    job.init("jdbc_job", {"JOB_NAME": "jdbc_job", "job-bookmark-option": "job-bookmark-enable"})
    frame = GlueContext().create_dynamic_frame.from_options(
        anydb.kind, anydb.options(dbtable="bm_real"), transformation_ctx="real_src")
    assert frame.count() == 3
    states, reads = job.bookmark_update()
    assert states["real_src"] == {"type": "jdbc", "connection": anydb.url, "table": "bm_real",
                                  "keys": ["id"], "sort_order": "asc", "high": [3]}
    assert reads["real_src"]["type"] == "jdbc" and reads["real_src"]["rows"] == 3
    assert reads["real_src"]["high"] == [3]
