"""GlueContext sources and sinks end to end in-process: read files, transform, write, read back.

Each test runs twice: on `fake` (tests/fake_engine.py, a pyarrow stand-in for the C++ module
that implements the CONTRACT's interface, so the Python layer's use of it is checked today) and on
`real` (the built `openglue_runtime.engines.embedded._engine`).
"""
import datetime
import glob
import json
import os
import sys
import time
import types

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from awsglue import gluetypes as gt
from openglue_runtime.engines.embedded import native
from awsglue.context import GlueContext
from awsglue.dynamicframe import DynamicFrame

import fake_engine
from engine_kit import glue_context
from job_isolation import no_current_job  # noqa: F401  (autouse: no Job leaks between tests)

@pytest.fixture(params=["fake", "real", "spark"])
def engine(request, monkeypatch, tmp_path):
    if request.param in ("real", "spark"):
        import openglue_runtime.engines.embedded._engine  # noqa: F401  (`make build` puts it in python/awsglue)
    else:
        monkeypatch.setattr(native, "_ext", fake_engine)
        fake_engine.CALLS.clear()
    root = tmp_path / "s3"
    root.mkdir()
    monkeypatch.setenv("OPENGLUE_S3_ROOT", str(root))
    return request.param


@pytest.fixture
def ctx(engine):
    """`spark`: the same tests with DynamicFrames over Spark DataFrames, the files read and
    written in Spark tasks by the built engine (openglue_runtime/engines/spark/frames.py)."""
    return glue_context("spark" if engine == "spark" else "embedded")


def put(tmp_path, key, text):
    p = tmp_path / "s3" / key
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


SALES = ("order_id,day,amount,qty,note\n"
         "1,2024-01-01,10.50,3,ok\n"
         "2,2024-01-01,7.25,1,\n"
         "3,2024-01-02,99.99,12,big\n"
         "4,2024-01-02,bad,4000000000,x\n")


def test_csv_from_options_reads_every_column_as_a_string(engine, ctx, tmp_path, capsys):
    """As the developer guide's map example shows (its CSV's printSchema is all `string`): a CSV
    read through from_options types nothing; a catalog table's columns type a CSV read."""
    put(tmp_path, "raw/sales/a.csv", SALES)
    dyf = ctx.create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": ["s3://raw/sales/"]}, format="csv",
        format_options={"withHeader": True})
    assert dyf.count() == 4
    schema = dyf.schema()
    assert schema.names() == ["order_id", "day", "amount", "qty", "note"]
    assert all(f.dataType == gt.StringType() for f in schema.fields)
    assert dyf.to_arrow().to_pylist()[3] == {"order_id": "4", "day": "2024-01-02",
                                             "amount": "bad", "qty": "4000000000", "note": "x"}
    dyf.printSchema()
    assert "|-- amount: string\n|-- qty: string\n" in capsys.readouterr().out


def test_csv_without_header_names_columns_like_glue(engine, ctx, tmp_path):
    put(tmp_path, "raw/nh/a.csv", "1,x\n2,y\n")
    dyf = ctx.create_dynamic_frame_from_options("s3", {"paths": ["s3://raw/nh"]}, format="csv")
    assert dyf.schema().names() == ["col0", "col1"]
    assert dyf.to_arrow().to_pylist() == [{"col0": "1", "col1": "x"}, {"col0": "2", "col1": "y"}]


def test_csv_to_partitioned_parquet(engine, ctx, tmp_path):
    put(tmp_path, "raw/sales/a.csv", SALES)
    dyf = ctx.create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": ["s3://raw/sales/"], "recurse": True,
                                                  "groupFiles": "inPartition", "groupSize": "1048576"},
        format="csv", format_options={"withHeader": True}, transformation_ctx="src")
    mapped = dyf.apply_mapping([
        ("order_id", "string", "order_id", "long"),
        ("day", "string", "day", "string"),
        ("amount", "string", "amount", "decimal(10,2)"),
        ("qty", "string", "qty", "int"),
    ])
    ctx.write_dynamic_frame.from_options(
        frame=mapped, connection_type="s3",
        connection_options={"path": "s3://out/sales/", "partitionKeys": ["day"]},
        format="glueparquet", format_options={"compression": "snappy"})
    files = sorted(glob.glob(str(tmp_path / "s3/out/sales/*/*.parquet")))
    assert [os.path.basename(os.path.dirname(f)) for f in files] == ["day=2024-01-01", "day=2024-01-02"]
    assert all(os.path.basename(f).startswith("part-") and f.endswith(".snappy.parquet") for f in files)
    first = pq.read_table(files[0])
    assert first.column_names == ["order_id", "amount", "qty"]  # the key is in the folder only
    assert first.schema.field("amount").type == pa.decimal128(10, 2)
    second = sorted(pq.read_table(files[1]).to_pylist(), key=lambda r: r["order_id"])
    assert second == [{"order_id": 3, "amount": pa.scalar(99.99).cast(pa.decimal128(10, 2)).as_py(), "qty": 12},
                      {"order_id": 4, "amount": None, "qty": None}]


def test_apply_mapping_streams_with_declared_types(engine, ctx, tmp_path):
    if engine != "fake":
        pytest.skip("checks the calls made to the engine (fake engine spy)")
    put(tmp_path, "raw/sales/a.csv", SALES)
    dyf = ctx.create_dynamic_frame.from_options("s3", {"paths": ["s3://raw/sales/"]}, "csv",
                                                {"withHeader": True})
    mapped = dyf.apply_mapping([("order_id", "string", "id", "long"), ("qty", "string", "qty", "long")])
    assert mapped.count() == 4
    streams = [c for c in fake_engine.CALLS if c[0] == "stream"]
    # One pass: the scan reads each column straight into its mapped type (no inference pass,
    # no second cast of every column).
    assert streams[-1][1] == pa.schema([("order_id", pa.int64()), ("qty", pa.int64())])
    assert mapped.schema() == gt.StructType([gt.Field("id", gt.LongType()), gt.Field("qty", gt.LongType())])


def test_json_nested_choice_resolve_and_write(engine, ctx, tmp_path):
    lines = [{"id": 1, "user": {"name": "a", "score": 5}, "tags": ["x"]},
             {"id": 2, "user": {"name": "b", "score": "high"}, "tags": []}]
    put(tmp_path, "raw/events/e.json", "\n".join(json.dumps(x) for x in lines) + "\n")
    dyf = ctx.create_dynamic_frame.from_options("s3", {"paths": ["s3://raw/events/"]}, "json")
    user = dyf.schema().getField("user").dataType
    assert user.getField("score").dataType == gt.ChoiceType([gt.IntegerType(), gt.StringType()])
    resolved = dyf.resolveChoice(specs=[("user.score", "cast:int")])
    ctx.write_dynamic_frame.from_options(resolved, "s3", {"path": "s3://out/events"}, "json")
    files = glob.glob(str(tmp_path / "s3/out/events/*.json"))
    assert len(files) == 1
    rows = sorted((json.loads(x) for x in open(files[0]) if x.strip()), key=lambda r: r["id"])
    # a null may be written as null or left out (as Spark's JSON writer does)
    assert [(r["id"], r["user"]["name"], r["user"].get("score"), r["tags"]) for r in rows] == \
        [(1, "a", 5, ["x"]), (2, "b", None, [])]


def test_exclusions_and_hidden_files(engine, ctx, tmp_path):
    put(tmp_path, "raw/m/a.json", '{"a": 1}\n')
    put(tmp_path, "raw/m/skip.json", '{"a": 2}\n')
    put(tmp_path, "raw/m/_SUCCESS", "")
    put(tmp_path, "raw/m/.hidden.json", '{"a": 3}\n')
    dyf = ctx.create_dynamic_frame.from_options(
        "s3", {"paths": ["s3://raw/m/"], "exclusions": ["**skip.json"]}, "json")
    assert [r["a"] for r in dyf.to_arrow().to_pylist()] == [1]


class _RecordingJob:
    """What openglue_runtime.run_state.current_job() returns in a run: select_new narrows, register_source records."""

    def __init__(self, keep_suffix):
        self.keep_suffix = keep_suffix
        self.selected, self.registered = [], []

    def select_new(self, ctx_name, files, options=None):
        self.selected.append((ctx_name, list(files)))
        return [f for f in files if f[0].endswith(self.keep_suffix)]

    def register_source(self, ctx_name, info):
        self.registered.append((ctx_name, info))


def test_bookmark_hooks_narrow_the_listing_and_record_reads(engine, ctx, tmp_path, monkeypatch):
    put(tmp_path, "raw/b/1.json", '{"a": 1}\n')
    put(tmp_path, "raw/b/2.json", '{"a": 2}\n')
    from openglue_runtime import run_state as job_mod
    job = _RecordingJob("2.json")
    monkeypatch.setattr(job_mod, "current_job", lambda: job, raising=False)
    dyf = ctx.create_dynamic_frame.from_options("s3", {"paths": ["s3://raw/b/"], "maxBand": 900000},
                                                "json", transformation_ctx="events")
    assert [r["a"] for r in dyf.to_arrow().to_pylist()] == [2]
    (name, listed), = job.selected
    assert name == "events"
    assert sorted(u.rsplit("/", 1)[1] for u, size, mtime in listed) == ["1.json", "2.json"]
    assert all(size > 0 and mtime > 0 for _, size, mtime in listed)
    (name, info), = job.registered
    assert name == "events" and info["type"] == "s3" and info["format"] == "json"
    assert info["paths"] == ["s3://raw/b/"] and info["maxBand"] == 900000
    assert [f[0].rsplit("/", 1)[1] for f in info["files"]] == ["2.json"]  # what was read
    # no transformation_ctx: no hook call, everything read
    assert ctx.create_dynamic_frame.from_options("s3", {"paths": ["s3://raw/b/"]}, "json").count() == 2
    assert len(job.selected) == 1 and len(job.registered) == 1


class _CatalogSource:
    def __init__(self, root):
        self.paths = [("s3://whs/sales/day=2024-01-01/", {"day": "2024-01-01", "region": "7"}),
                      ("s3://whs/sales/day=2024-01-02/", {"day": "2024-01-02", "region": "8"})]
        self.format = "csv"
        self.format_options = {"separator": "|", "withHeader": "true"}
        self.schema_columns = [("id", "bigint"), ("amount", "double")]
        self.partition_keys = [("day", "date"), ("region", "int")]


@pytest.fixture
def fake_catalog(monkeypatch):
    mod = types.ModuleType("openglue_runtime.catalog")
    calls = []

    def resolve_source(database, table_name, push_down_predicate="", catalog_partition_predicate="",
                       additional_options=None, catalog_id=None):
        calls.append(("resolve_source", database, table_name, push_down_predicate,
                      catalog_partition_predicate))
        return _CatalogSource(None)

    class Sink:
        path = "s3://whs/out/"
        format = "parquet"
        format_options = {}
        partition_keys = [("day", "string")]
        columns = []

    def resolve_sink(database, table_name, catalog_id=None):
        calls.append(("resolve_sink", database, table_name))
        return Sink()

    def update_after_write(database, table_name, written_uris, partition_keys, schema_columns,
                           update_behavior, enable_update_catalog, catalog_id=None, **sink):
        calls.append(("update_after_write", database, table_name, list(written_uris),
                      list(partition_keys), list(schema_columns), update_behavior,
                      enable_update_catalog))
    mod.resolve_source, mod.resolve_sink, mod.update_after_write = resolve_source, resolve_sink, update_after_write
    monkeypatch.setitem(sys.modules, "openglue_runtime.catalog", mod)
    import openglue_runtime
    monkeypatch.setattr(openglue_runtime, "catalog", mod, raising=False)
    return calls


def test_from_catalog_partitions_become_typed_fields(engine, ctx, tmp_path, fake_catalog):
    put(tmp_path, "whs/sales/day=2024-01-01/a.csv", "id|amount\n1|2.5\n2|x\n")
    put(tmp_path, "whs/sales/day=2024-01-02/b.csv", "id|amount\n3|4\n")
    dyf = ctx.create_dynamic_frame.from_catalog(
        database="db", table_name="sales", push_down_predicate="day >= '2024-01-01'",
        additional_options={"catalogPartitionPredicate": "region > 1"}, transformation_ctx="cat")
    assert fake_catalog[0] == ("resolve_source", "db", "sales", "day >= '2024-01-01'", "region > 1")
    # `amount` is declared double and one cell is "x": Glue types each cell, so the column is a
    # choice of double and string (issue 20's gap 3; the Medicare example of
    # tests/conformance/test_catalog_reads.py).
    amount = gt.ChoiceType([gt.DoubleType(), gt.StringType()])
    assert dyf.schema() == gt.StructType([gt.Field("id", gt.LongType()), gt.Field("amount", amount),
                                          gt.Field("day", gt.DateType()), gt.Field("region", gt.IntegerType())])
    assert dyf.to_arrow().to_pylist() == [
        {"id": 1, "amount": 2.5, "day": datetime.date(2024, 1, 1), "region": 7},
        {"id": 2, "amount": "x", "day": datetime.date(2024, 1, 1), "region": 7},
        {"id": 3, "amount": 4.0, "day": datetime.date(2024, 1, 2), "region": 8}]
    cast = dyf.resolveChoice(specs=[("amount", "cast:double")])
    assert [r["amount"] for r in cast.to_arrow().to_pylist()] == [2.5, None, 4.0]


def test_catalog_csv_columns_are_the_files_fields_by_position(engine, ctx, tmp_path, fake_catalog):
    """Issue 20's gap 2: a crawled CSV table names its columns its own way (lower case, no
    padding); the header the table skips (` Id `, `AMOUNT `) never renames or drops a column,
    as in Glue: the catalog's columns are the files' fields by position."""
    put(tmp_path, "whs/sales/day=2024-01-01/a.csv", " Id |AMOUNT \n1|2.5\n2|3\n")
    put(tmp_path, "whs/sales/day=2024-01-02/b.csv", "Identifier|Amount (USD)\n3|\n")
    dyf = ctx.create_dynamic_frame.from_catalog(database="db", table_name="sales")
    assert dyf.schema().names() == ["id", "amount", "day", "region"]
    assert [(r["id"], r["amount"]) for r in dyf.to_arrow().to_pylist()] == [
        (1, 2.5), (2, 3.0), (3, None)]
    mapped = dyf.apply_mapping([("amount", "double", "amount", "double"),
                                ("id", "long", "id", "long")])
    assert mapped.to_arrow().to_pylist() == [{"amount": 2.5, "id": 1}, {"amount": 3.0, "id": 2},
                                             {"amount": None, "id": 3}]
    # A mapping names its sources in any case (GlueUnitTestingLocalSample's `customerId` over
    # a crawled `customerid`); case_sensitive=True finds none of them.
    cased = dyf.apply_mapping([("AMOUNT", "string", "Amount", "double"), ("Id", "string", "Id", "int")])
    assert cased.to_arrow().to_pylist() == [{"Amount": 2.5, "Id": 1}, {"Amount": 3.0, "Id": 2},
                                            {"Amount": None, "Id": 3}]
    strict = dyf.apply_mapping([("Id", "string", "Id", "int")], case_sensitive=True)
    assert strict.to_arrow().to_pylist() == [{"Id": None}] * 3


def test_write_from_catalog_updates_catalog(engine, ctx, tmp_path, fake_catalog):
    dyf = DynamicFrame.from_records([{"id": 1, "day": "2024-02-01"}, {"id": 2, "day": "2024-02-02"}], ctx)
    ctx.write_dynamic_frame.from_catalog(
        frame=dyf, database="db", table_name="out",
        additional_options={"enableUpdateCatalog": True, "updateBehavior": "UPDATE_IN_DATABASE",
                            "partitionKeys": ["day"]})
    upd = [c for c in fake_catalog if c[0] == "update_after_write"][0]
    assert upd[1:3] == ("db", "out")
    assert sorted(u.split("/")[-2] for u in upd[3]) == ["day=2024-02-01", "day=2024-02-02"]
    assert upd[4] == [("day", "string")] and upd[5] == [("id", "int")]  # keys are not columns
    assert upd[6] == "UPDATE_IN_DATABASE" and upd[7] is True
    assert len(glob.glob(str(tmp_path / "s3/whs/out/day=*/*.parquet"))) == 2


def test_get_source_and_get_sink(engine, ctx, tmp_path, fake_catalog):
    put(tmp_path, "raw/gs/a.csv", "a;b\n1;2\n")
    src = ctx.getSource("s3", paths=["s3://raw/gs/"])
    src.setFormat("csv", withHeader=True, separator=";")
    dyf = src.getFrame()
    assert dyf.to_arrow().to_pylist() == [{"a": "1", "b": "2"}]
    sink = ctx.getSink(connection_type="s3", path="s3://whs/gs/", enableUpdateCatalog=True,
                       updateBehavior="UPDATE_IN_DATABASE", partitionKeys=["a"])
    sink.setFormat("glueparquet")
    sink.setCatalogInfo(catalogDatabase="db", catalogTableName="gs")
    sink.writeFrame(dyf)
    assert [os.path.basename(os.path.dirname(f)) for f in glob.glob(str(tmp_path / "s3/whs/gs/*/*.parquet"))] == ["a=1"]
    upd = [c for c in fake_catalog if c[0] == "update_after_write"][0]
    assert upd[1:3] == ("db", "gs") and upd[7] is True


def test_purge_s3_path_respects_retention(engine, ctx, tmp_path):
    old = put(tmp_path, "tmp/p/old.json", "{}\n")
    put(tmp_path, "tmp/p/new.json", "{}\n")
    two_days = time.time() - 2 * 86400
    os.utime(old, (two_days, two_days))
    ctx.purge_s3_path("s3://tmp/p/", {"retentionPeriod": 24})
    assert sorted(os.listdir(tmp_path / "s3/tmp/p")) == ["new.json"]
    time.sleep(0.01)
    ctx.purge_s3_path("s3://tmp/p/", {"retentionPeriod": 0})
    assert os.listdir(tmp_path / "s3/tmp/p") == []


def test_dynamic_partition_overwrite_replaces_only_the_partitions_written(engine, ctx, tmp_path):
    def write(records, **options):
        ctx.write_dynamic_frame.from_options(
            frame=DynamicFrame.from_records(records, ctx), connection_type="s3",
            connection_options={"path": "s3://out/ow/", "partitionKeys": ["day"], **options},
            format="json")

    def partition(day):
        lines = []
        for f in sorted(glob.glob(str(tmp_path / "s3/out/ow/day={}/*".format(day)))):
            lines += [json.loads(line) for line in open(f)]
        return sorted(r["v"] for r in lines)

    write([{"day": "1", "v": 1}, {"day": "2", "v": 2}])
    write([{"day": "2", "v": 20}, {"day": "3", "v": 3}], partitionOverwriteMode="dynamic")
    assert [partition(d) for d in "123"] == [[1], [20], [3]]
    write([{"day": "2", "v": 20}, {"day": "3", "v": 3}], partitionOverwriteMode="dynamic")
    assert [partition(d) for d in "123"] == [[1], [20], [3]]  # a repeat leaves no duplicates
    write([{"day": "3", "v": 4}])  # the default appends
    assert partition("3") == [3, 4]
    # Bad input is refused before anything is written.
    with pytest.raises(ValueError, match="partitionOverwriteMode must be one of append, dynamic"):
        write([{"day": "4", "v": 5}], partitionOverwriteMode="static")
    with pytest.raises(ValueError, match="needs partitionKeys"):
        ctx.write_dynamic_frame.from_options(
            frame=DynamicFrame.from_records([{"day": "5", "v": 6}], ctx), connection_type="s3",
            connection_options={"path": "s3://out/ow/", "partitionOverwriteMode": "dynamic"},
            format="json")
    assert sorted(os.listdir(tmp_path / "s3/out/ow")) == ["day=1", "day=2", "day=3"]


def test_spigot_writes_sample(engine, ctx, tmp_path):
    dyf = DynamicFrame.from_records([{"i": i} for i in range(50)], ctx)
    out = dyf.spigot("s3://dbg/spigot/", options={"topk": 5})
    assert out.count() == 50
    files = glob.glob(str(tmp_path / "s3/dbg/spigot/*.json"))
    rows = [json.loads(x) for f in files for x in open(f) if x.strip()]
    assert rows == [{"i": i} for i in range(5)]


def test_unsupported_format_and_connection(engine, ctx, tmp_path):
    put(tmp_path, "raw/gl/a.log", "x")
    with pytest.raises(ValueError, match="grokLog"):
        ctx.create_dynamic_frame.from_options("s3", {"paths": ["s3://raw/gl/"]}, "grokLog")
    with pytest.raises(ValueError, match="not supported"):
        ctx.create_dynamic_frame.from_options("dynamodb", {"paths": ["x"]}, "json")
    with pytest.raises(ValueError, match="paths"):
        ctx.create_dynamic_frame.from_options("s3", {}, "json")


def test_engine_missing_names_the_build(monkeypatch, ctx):
    monkeypatch.setattr(native, "_ext", None)
    with pytest.raises(native.EngineUnavailable, match="make build"):
        ctx.create_dynamic_frame.from_options("s3", {"paths": ["s3://x/"]}, "json")


def test_from_catalog_records_the_source_for_bookmarks(engine, ctx, tmp_path, fake_catalog, monkeypatch):
    put(tmp_path, "whs/sales/day=2024-01-01/a.csv", "id|amount\n1|2.5\n")
    put(tmp_path, "whs/sales/day=2024-01-02/b.csv", "id|amount\n3|4\n")
    from openglue_runtime import run_state as job_mod
    job = _RecordingJob("b.csv")
    monkeypatch.setattr(job_mod, "current_job", lambda: job, raising=False)
    dyf = ctx.create_dynamic_frame.from_catalog(database="db", table_name="sales",
                                                transformation_ctx="cat")
    assert [(r["id"], str(r["day"])) for r in dyf.to_arrow().to_pylist()] == [(3, "2024-01-02")]
    (name, info), = job.registered
    assert (name, info["database"], info["table"], info["format"]) == ("cat", "db", "sales", "csv")
    assert [f[0].rsplit("/", 1)[1] for f in info["files"]] == ["b.csv"]


def test_catalog_types_of_written_columns():
    from openglue_runtime.sinks import glue_type_string
    assert glue_type_string(gt.LongType()) == "long"
    assert glue_type_string(gt.DecimalType(12, 3)) == "decimal(12,3)"
    assert glue_type_string(gt.NullType()) == "string"
    assert glue_type_string(gt.StructType([gt.Field("a", gt.ArrayType(gt.IntegerType()))])) == "struct<a:array<int>>"
    assert glue_type_string(gt.ChoiceType([gt.LongType(), gt.StringType()])) == "struct<long:long,string:string>"


def test_catalog_source_and_sink_objects(engine, ctx, tmp_path, fake_catalog):
    put(tmp_path, "whs/sales/day=2024-01-01/a.csv", "id|amount\n1|2.5\n")
    # The catalog's second partition exists but is empty (the real engine's list_files refuses a
    # location that does not exist at all).
    (tmp_path / "s3" / "whs" / "sales" / "day=2024-01-02").mkdir(parents=True)
    src = ctx.getCatalogSource(database="db", table_name="sales")
    dyf = src.getFrame()
    assert [(r["id"], r["amount"]) for r in dyf.to_arrow().to_pylist()] == [(1, 2.5)]
    sink = ctx.getCatalogSink(database="db", table_name="out",
                              additional_options={"enableUpdateCatalog": True})
    sink.writeFrame(dyf.apply_mapping([("id", "long", "id", "long"), ("day", "date", "day", "string")]))
    assert [os.path.basename(os.path.dirname(f)) for f in glob.glob(str(tmp_path / "s3/whs/out/*/*.parquet"))] == \
        ["day=2024-01-01"]  # the sink's path, format and partition keys come from the catalog
    upd = [c for c in fake_catalog if c[0] == "update_after_write"][0]
    assert upd[4] == [("day", "string")] and upd[7] is True


def test_empty_prefix_is_an_empty_frame(engine, ctx, tmp_path):
    (tmp_path / "s3" / "raw" / "empty").mkdir(parents=True)
    dyf = ctx.create_dynamic_frame.from_options("s3", {"paths": ["s3://raw/empty/"]}, "json")
    assert dyf.count() == 0
    assert dyf.schema() == gt.StructType([])
