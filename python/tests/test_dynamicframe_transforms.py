"""DynamicFrame transforms on frames built from pyarrow tables (no engine build needed):
values, schemas, printSchema text and error counts are compared with expected data."""
import datetime
import decimal

import pyarrow as pa
import pytest

from awsglue import gluetypes as gt
from awsglue.context import GlueContext
from awsglue.dynamicframe import (DynamicFrame, DynamicFrameCollection, ErrorThresholdExceeded,
                                  format_schema)
from openglue_runtime.run_state import SparkApiUnavailable

from engine_kit import glue_context


@pytest.fixture(params=["embedded", "spark"])
def ctx(request):
    """Every test runs on both engines with the same expected values: the embedded engine, and
    DynamicFrames over Spark DataFrames (openglue_runtime/engines/spark/frames.py)."""
    return glue_context(request.param)


@pytest.fixture
def embedded_ctx():
    """For tests of the embedded engine itself (its stand-in, its batch streaming)."""
    return glue_context("embedded")


def frame(ctx, records, name="f"):
    return DynamicFrame.from_records(records, ctx, name)


PEOPLE = [
    {"id": 1, "name": "ann", "age": "34", "joined": "2021-03-04", "price": "12.345",
     "address": {"city": "Oslo", "zip": "0150"}, "tags": ["a", "b"]},
    {"id": 2, "name": "bob", "age": "x", "joined": "not a date", "price": "7",
     "address": {"city": "Rome", "zip": "00100"}, "tags": []},
    {"id": 3, "name": "cy", "age": None, "joined": None, "price": None, "address": None, "tags": None},
]


def test_from_arrow_schema_and_count(ctx):
    t = pa.table({"a": pa.array([1, 2, 3], pa.int64()), "b": ["x", None, "z"]})
    f = DynamicFrame.from_arrow(t, ctx, "t")
    assert f.count() == 3
    assert f.schema() == gt.StructType([gt.Field("a", gt.LongType()), gt.Field("b", gt.StringType())])
    assert f.to_arrow().equals(t)


def test_print_schema_layout(ctx, capsys):
    f = frame(ctx, [{"id": 1, "price": 3, "a": {"b": "x", "c": [{"d": 1.5}]}, "m": None},
                    {"id": 2, "price": "n/a", "a": None, "m": None}])
    f.printSchema()
    assert capsys.readouterr().out == (
        "root\n"
        "|-- id: int\n"
        "|-- price: choice\n"
        "|    |-- int\n"
        "|    |-- string\n"
        "|-- a: struct\n"
        "|    |-- b: string\n"
        "|    |-- c: array\n"
        "|    |    |-- element: struct\n"
        "|    |    |    |-- d: double\n"
        "|-- m: null\n"
        "\n")


def test_show_prints_json_records(ctx, capsys):
    f = frame(ctx, [{"id": 1, "s": "x", "n": {"k": True}}, {"id": 2, "s": None, "n": None},
                    {"id": 3, "s": "z", "n": None}])
    f.show(2)
    assert capsys.readouterr().out == ('{"id": 1, "s": "x", "n": {"k": true}}\n'
                                       '{"id": 2, "s": null, "n": null}\n')


def test_apply_mapping_casts_renames_nests_and_drops_unmapped(ctx):
    f = frame(ctx, PEOPLE)
    out = f.apply_mapping([
        ("id", "int", "person.id", "long"),
        ("name", "string", "person.name", "string"),
        ("age", "string", "age", "int"),
        ("joined", "string", "joined", "date"),
        ("price", "string", "price", "decimal(10,2)"),
        ("address.city", "string", "city", "string"),
    ])
    assert out.schema() == gt.StructType([
        gt.Field("person", gt.StructType([gt.Field("id", gt.LongType()), gt.Field("name", gt.StringType())])),
        gt.Field("age", gt.IntegerType()), gt.Field("joined", gt.DateType()),
        gt.Field("price", gt.DecimalType(10, 2)), gt.Field("city", gt.StringType())])
    rows = out.to_arrow().to_pylist()
    assert rows == [
        {"person": {"id": 1, "name": "ann"}, "age": 34, "joined": datetime.date(2021, 3, 4),
         "price": decimal.Decimal("12.35"), "city": "Oslo"},
        {"person": {"id": 2, "name": "bob"}, "age": None, "joined": None,
         "price": decimal.Decimal("7.00"), "city": "Rome"},
        {"person": {"id": 3, "name": "cy"}, "age": None, "joined": None, "price": None, "city": None},
    ]


def test_apply_mapping_missing_source_is_null_and_case_insensitive(ctx):
    f = frame(ctx, [{"ID": 5}])
    out = f.apply_mapping([("id", "int", "id", "string"), ("nope", "string", "nope", "long")])
    assert out.to_arrow().to_pylist() == [{"id": "5", "nope": None}]
    strict = f.apply_mapping([("id", "int", "id", "string")], case_sensitive=True)
    assert strict.to_arrow().to_pylist() == [{"id": None}]


def test_apply_mapping_numbers_to_string_and_timestamp(ctx):
    f = frame(ctx, [{"x": 1.5, "b": True, "t": "2024-05-06 07:08:09"}])
    out = f.apply_mapping([("x", "double", "x", "string"), ("b", "boolean", "b", "string"),
                           ("t", "string", "t", "timestamp")])
    assert out.to_arrow().to_pylist() == [
        {"x": "1.5", "b": "true", "t": datetime.datetime(2024, 5, 6, 7, 8, 9)}]


def test_select_drop_rename_nested(ctx):
    f = frame(ctx, PEOPLE)
    sel = f.select_fields(["id", "address.city"])
    assert sel.to_arrow().to_pylist()[0] == {"id": 1, "address": {"city": "Oslo"}}
    dropped = f.drop_fields(["tags", "address.zip", "age", "joined", "price"])
    assert dropped.schema().names() == ["id", "name", "address"]
    assert dropped.to_arrow().to_pylist()[1] == {"id": 2, "name": "bob", "address": {"city": "Rome"}}
    ren = f.rename_field("address.city", "address.town").rename_field("name", "full_name")
    rows = ren.select_fields(["full_name", "address"]).to_arrow().to_pylist()
    assert rows[0] == {"full_name": "ann", "address": {"town": "Oslo", "zip": "0150"}}
    assert ren.schema().names()[:2] == ["id", "full_name"]  # renamed in place


MIXED = [{"id": 1, "v": 10}, {"id": 2, "v": "eleven"}, {"id": 3, "v": "12"}, {"id": 4, "v": None}]


def test_choice_inferred_in_order_of_appearance(ctx):
    f = frame(ctx, MIXED)
    assert f.schema().getField("v").dataType == gt.ChoiceType([gt.IntegerType(), gt.StringType()])


def test_resolve_choice_cast_and_project(ctx):
    f = frame(ctx, MIXED)
    cast = f.resolveChoice(specs=[("v", "cast:long")])
    assert cast.schema().getField("v").dataType == gt.LongType()
    assert [r["v"] for r in cast.to_arrow().to_pylist()] == [10, None, 12, None]
    proj = f.resolveChoice(specs=[("v", "project:string")])
    assert [r["v"] for r in proj.to_arrow().to_pylist()] == [None, "eleven", "12", None]
    proj_int = f.resolveChoice(specs=[("v", "project:int")])
    assert [r["v"] for r in proj_int.to_arrow().to_pylist()] == [10, None, None, None]


def test_resolve_choice_make_cols_and_make_struct(ctx):
    f = frame(ctx, MIXED)
    cols = f.resolveChoice(specs=[("v", "make_cols")])
    assert cols.schema().names() == ["id", "v_int", "v_string"]
    assert cols.to_arrow().to_pylist()[:2] == [{"id": 1, "v_int": 10, "v_string": None},
                                               {"id": 2, "v_int": None, "v_string": "eleven"}]
    st = f.resolveChoice(choice="make_struct")
    assert st.schema().getField("v").dataType == gt.StructType(
        [gt.Field("int", gt.IntegerType()), gt.Field("string", gt.StringType())])
    assert st.to_arrow().to_pylist()[2]["v"] == {"int": None, "string": "12"}


def test_resolve_choice_nested_choice_for_all(ctx):
    f = frame(ctx, [{"a": {"v": 1}}, {"a": {"v": "x"}}])
    out = f.resolveChoice(choice="cast:string")
    assert out.schema() == gt.StructType([gt.Field("a", gt.StructType([gt.Field("v", gt.StringType())]))])
    assert out.to_arrow().to_pylist() == [{"a": {"v": "1"}}, {"a": {"v": "x"}}]


def test_resolve_choice_match_catalog(ctx, monkeypatch):
    import sys
    import types

    class Src:
        schema_columns = [("id", "bigint"), ("v", "double")]
        partition_keys = []
        paths = []
    fake = types.ModuleType("openglue_runtime.catalog")
    calls = []
    fake.resolve_source = lambda db, table, **kw: calls.append((db, table)) or Src()
    monkeypatch.setitem(sys.modules, "openglue_runtime.catalog", fake)
    import openglue_runtime
    monkeypatch.setattr(openglue_runtime, "catalog", fake, raising=False)
    out = frame(ctx, MIXED).resolveChoice(choice="match_catalog", database="db", table_name="t")
    assert calls == [("db", "t")]
    assert out.schema().getField("v").dataType == gt.DoubleType()
    assert [r["v"] for r in out.to_arrow().to_pylist()] == [10.0, None, 12.0, None]


def test_resolve_choice_rejects_bad_action(ctx):
    with pytest.raises(ValueError, match="unknown resolveChoice action"):
        frame(ctx, MIXED).resolveChoice(specs=[("v", "explode")]).count()


def test_filter_and_map_error_records(ctx):
    f = frame(ctx, [{"n": 1}, {"n": 0}, {"n": 4}, {"n": None}])
    inv = f.map(lambda r: {"n": r["n"], "inv": 1 / r["n"]}, transformation_ctx="inv")
    assert inv.to_arrow().to_pylist() == [{"n": 1, "inv": 1.0}, {"n": 4, "inv": 0.25}]
    assert inv.errorsCount() == 2 and inv.stageErrorsCount() == 2
    errs = inv.errorsAsDynamicFrame().to_arrow().to_pylist()
    # Glue's error fields: where it happened (the transform and its ctx), what, and the record.
    assert [e["error"]["callsite"] for e in errs] == ["Map inv", "Map inv"]
    assert "ZeroDivisionError" in errs[0]["error"]["msg"]
    assert errs[0]["error"]["input"] == '{"n": 0}'
    assert errs[0]["error"]["dynamicRecord"] == {"n": 0}
    # errors of earlier stages count in errorsCount, not in stageErrorsCount
    big = inv.filter(lambda r: r["inv"] > 0.5 if r["n"] != 4 else r["missing"])
    assert big.to_arrow().to_pylist() == [{"n": 1, "inv": 1.0}]
    assert big.stageErrorsCount() == 1
    assert big.errorsCount() == 3


def test_error_thresholds_raise(ctx):
    f = frame(ctx, [{"n": i} for i in range(10)])
    bad = f.map(lambda r: r if r["n"] < 7 else 1 / 0, stageThreshold=2)
    with pytest.raises(ErrorThresholdExceeded, match="stageThreshold 2"):
        bad.count()
    ok = f.map(lambda r: r if r["n"] < 7 else 1 / 0, stageThreshold=3)
    assert ok.count() == 7
    total = ok.filter(lambda r: r["n"] < 6 or r["x"], totalThreshold=3)
    with pytest.raises(ErrorThresholdExceeded, match="totalThreshold 3"):
        total.count()


def test_filter_keeps_schema_and_streams(ctx):
    t = pa.table({"n": pa.array(range(200000), pa.int64())})
    f = DynamicFrame.from_arrow(t, ctx)
    even = f.filter(lambda r: r["n"] % 2 == 0)
    assert even.schema() == f.schema()
    assert even.count() == 100000


def test_join_keeps_both_keys(ctx):
    people = frame(ctx, [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}, {"id": 3, "name": "cy"}])
    orders = frame(ctx, [{"person_id": 1, "total": 5}, {"person_id": 1, "total": 7},
                         {"person_id": 3, "total": 9}, {"person_id": 4, "total": 1}])
    j = orders.join(["person_id"], ["id"], people)
    assert j.schema().names() == ["person_id", "total", "id", "name"]
    assert sorted((r["person_id"], r["total"], r["id"], r["name"]) for r in j.to_arrow().to_pylist()) == \
        [(1, 5, 1, "ann"), (1, 7, 1, "ann"), (3, 9, 3, "cy")]


def test_steps_after_a_join_with_colliding_and_dotted_fields(ctx):
    # join_and_relationalize.py's shape: both frames have `links`, so the second one's becomes
    # `.links`; a field name with dots (a relationalized column) rides along. The steps after
    # the join run over those names on both engines.
    people = frame(ctx, [{"id": 1, "links": ["p1"], "a.b": "x"}, {"id": 2, "links": ["p2"], "a.b": "y"}])
    orgs = frame(ctx, [{"org": 1, "links": ["o1"]}, {"org": 2, "links": None}])
    j = people.join(["id"], ["org"], orgs).drop_fields(["org"]).map(
        lambda r: dict(r, n=len(r["links"])))
    assert j.schema().names() == ["id", "links", "a.b", ".links", "n"]
    assert sorted(j.to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "links": ["p1"], "a.b": "x", ".links": ["o1"], "n": 1},
        {"id": 2, "links": ["p2"], "a.b": "y", ".links": None, "n": 1}]


def test_union_merges_types(ctx):
    a = frame(ctx, [{"id": 1, "v": 1}])
    b = frame(ctx, [{"id": 2, "v": "two", "extra": True}])
    u = a.union(b)
    assert u.count() == 2
    assert u.schema().getField("v").dataType == gt.ChoiceType([gt.IntegerType(), gt.StringType()])
    assert u.to_arrow().to_pylist() == [{"id": 1, "v": 1, "extra": None},
                                        {"id": 2, "v": "two", "extra": True}]


def test_relationalize_root_and_array_tables(ctx):
    f = frame(ctx, [
        {"id": 1, "name": {"first": "a", "last": "b"}, "links": [{"url": "u1", "kind": "x"}], "tags": ["p", "q"]},
        {"id": 2, "name": {"first": "c", "last": "d"}, "links": [], "tags": ["r"]},
    ])
    dfc = f.relationalize("root", "s3://tmp/staging/")
    assert isinstance(dfc, DynamicFrameCollection)
    assert sorted(dfc.keys()) == ["root", "root_links", "root_tags"]
    root = dfc.select("root").to_arrow().to_pylist()
    assert root == [{"id": 1, "name.first": "a", "name.last": "b", "links": 1, "tags": 1},
                    {"id": 2, "name.first": "c", "name.last": "d", "links": 2, "tags": 2}]
    assert dfc["root_tags"].to_arrow().to_pylist() == [
        {"id": 1, "index": 0, "tags.val": "p"}, {"id": 1, "index": 1, "tags.val": "q"},
        {"id": 2, "index": 0, "tags.val": "r"}]
    assert dfc["root_links"].to_arrow().to_pylist() == [
        {"id": 1, "index": 0, "links.val.url": "u1", "links.val.kind": "x"}]


def test_relationalize_array_of_arrays(ctx):
    f = frame(ctx, [{"m": [[1, 2], [3]]}])
    dfc = f.relationalize("r", "")
    assert sorted(dfc.keys()) == ["r", "r_m", "r_m.val"]
    assert dfc["r_m"].to_arrow().to_pylist() == [{"id": 1, "index": 0, "m.val": 1},
                                                 {"id": 1, "index": 1, "m.val": 2}]
    assert dfc["r_m.val"].to_arrow().to_pylist() == [
        {"id": 1, "index": 0, "m.val.val": 1}, {"id": 1, "index": 1, "m.val.val": 2},
        {"id": 2, "index": 0, "m.val.val": 3}]


def test_unnest_and_unbox(ctx):
    f = frame(ctx, [{"id": 1, "a": {"b": {"c": 1}, "d": "x"}, "js": '{"k": 1, "l": [1, 2]}'},
                    {"id": 2, "a": None, "js": "not json"}])
    u = f.unnest()
    assert u.schema().names() == ["id", "a.b.c", "a.d", "js"]
    assert u.to_arrow().to_pylist()[0] == {"id": 1, "a.b.c": 1, "a.d": "x", "js": '{"k": 1, "l": [1, 2]}'}
    ub = f.unbox("js", "json")
    assert ub.schema().getField("js").dataType == gt.StructType(
        [gt.Field("k", gt.IntegerType()), gt.Field("l", gt.ArrayType(gt.IntegerType()))])
    assert [r["js"] for r in ub.to_arrow().to_pylist()] == [{"k": 1, "l": [1, 2]}, None]


def test_split_fields_and_split_rows(ctx):
    f = frame(ctx, [{"id": i, "age": a, "name": n} for i, a, n in [(1, 10, "a"), (2, 25, "b"), (3, 40, "c")]])
    sf = f.split_fields(["id", "name"], "left", "right")
    assert list(sf.keys()) == ["left", "right"]
    assert sf["left"].schema().names() == ["id", "name"]
    assert sf["right"].schema().names() == ["age"]
    sr = f.split_rows({"age": {">": 12, "<": 40}}, "mid", "rest")
    assert [r["id"] for r in sr["mid"].to_arrow().to_pylist()] == [2]
    assert [r["id"] for r in sr["rest"].to_arrow().to_pylist()] == [1, 3]


def test_drop_null_fields(ctx):
    f = frame(ctx, [{"id": 1, "none": None, "s": {"x": None, "y": 1}}, {"id": 2, "none": None, "s": None}])
    out = f.drop_null_fields()
    assert out.schema() == gt.StructType([gt.Field("id", gt.IntegerType()),
                                          gt.Field("s", gt.StructType([gt.Field("y", gt.IntegerType())]))])


def test_merge_dynamic_frame_staging_wins(ctx):
    src = frame(ctx, [{"id": 1, "v": "old1"}, {"id": 2, "v": "old2"}, {"id": 2, "v": "old2b"}])
    stage = frame(ctx, [{"id": 2, "v": "new2"}, {"id": 3, "v": "new3"}])
    out = src.mergeDynamicFrame(stage, ["id"])
    assert sorted((r["id"], r["v"]) for r in out.to_arrow().to_pylist()) == \
        [(1, "old1"), (2, "new2"), (3, "new3")]


def test_partitions_and_collection_helpers(ctx):
    f = frame(ctx, [{"a": 1}])
    assert f.getNumPartitions() == 1
    assert f.repartition(8).getNumPartitions() == 8
    assert f.repartition(8).coalesce(2).getNumPartitions() == 2
    dfc = DynamicFrameCollection({"x": f, "y": f.rename_field("a", "b")}, ctx)
    mapped = dfc.map(lambda fr, c: fr.select_fields(fr.schema().names()[:1]))
    assert [mapped[k].schema().names() for k in mapped.keys()] == [["a"], ["b"]]
    flat = dfc.flatMap(lambda fr, c: fr.split_fields(fr.schema().names(), "p", "q"))
    assert sorted(flat.keys()) == ["x_p", "x_q", "y_p", "y_q"]
    with pytest.raises(KeyError):
        dfc.select("z")


def test_to_pandas(ctx):
    pdf = frame(ctx, [{"a": 1, "b": "x"}, {"a": 2, "b": None}]).to_pandas()
    assert list(pdf.columns) == ["a", "b"]
    assert pdf["a"].tolist() == [1, 2]


def test_spark_apis_raise_clear_error(embedded_ctx):
    ctx = embedded_ctx
    f = frame(ctx, [{"a": 1}])
    with pytest.raises(SparkApiUnavailable, match="--engine spark"):
        f.toDF()
    with pytest.raises(SparkApiUnavailable, match="--engine spark"):
        DynamicFrame.fromDF(None, ctx, "x")
    with pytest.raises(SparkApiUnavailable, match="--engine spark"):
        ctx.spark_session.sql("select 1")
    # The common preamble of Glue scripts is harmless on the embedded engine.
    ctx.spark_session.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    with pytest.raises(SparkApiUnavailable, match="--engine spark"):
        f.withColumn("x", None)
    with pytest.raises(AttributeError):
        f.no_such_method()


def test_format_schema_map_and_choice_members(ctx):
    st = gt.StructType([gt.Field("m", gt.MapType(gt.LongType())),
                        gt.Field("c", gt.ChoiceType([gt.StringType(), gt.StructType([gt.Field("z", gt.IntegerType())])]))])
    assert format_schema(st) == ("root\n|-- m: map\n|    |-- keyType: string\n|    |-- valueType: long\n"
                                 "|-- c: choice\n|    |-- string\n|    |-- struct\n|    |    |-- z: int\n")


def test_logger_writes_glue_style_lines(ctx, capsys):
    log = ctx.get_logger()
    log.info("hello")
    log.warn("careful")
    log.error("bad")
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" ")[2] for line in err] == ["INFO", "WARN", "ERROR"]
    assert err[0].endswith("glue: hello")


def test_streamable_steps_run_batch_by_batch(embedded_ctx):
    """read -> apply_mapping -> select -> filter pulls one source batch per output batch: the
    pipeline never holds more than a batch or two, whatever the input size."""
    from openglue_runtime.engines.embedded.plan import Plan, Source

    produced = []

    class Counting(Source):
        listing = []

        def schema(self):
            return pa.schema([("a", pa.string()), ("b", pa.int64())])

        def open(self, read_schema=None):
            def gen():
                for i in range(50):
                    produced.append(i)
                    yield pa.record_batch({"a": [str(i)] * 1000, "b": list(range(1000))},
                                          schema=self.schema())
            return self.schema(), gen()

    f = DynamicFrame(Plan(Counting()), embedded_ctx, "big")
    out = (f.apply_mapping([("a", "string", "a", "long"), ("b", "long", "b", "string")])
           .select_fields(["a", "b"]).filter(lambda r: r["b"] != "0"))
    schema, it = out._plan.stream()
    assert produced == []  # nothing read before the first batch is asked for
    for k, batch in enumerate(it, start=1):
        assert len(produced) == k
        assert batch.num_rows == 999
    assert len(produced) == 50
    assert schema == pa.schema([("a", pa.int64()), ("b", pa.string())])


def test_numeric_casts_truncate_and_null_out_of_range(ctx):
    t = pa.table({"d": pa.array([1.9, -2.7, float("nan"), 3e10, None]),
                  "l": pa.array([1, 2 ** 40, -5, None, 7], pa.int64()),
                  "s": pa.array(["12", " 13 ", "1.5", "abc", "99999999999"])})
    out = DynamicFrame.from_arrow(t, ctx).apply_mapping(
        [("d", "double", "d", "int"), ("l", "long", "l", "int"), ("l", "long", "b", "byte"),
         ("s", "string", "s", "int"), ("s", "string", "sd", "double")])
    cols = out.to_arrow().to_pydict()
    assert cols["d"] == [1, -2, None, None, None]
    assert cols["l"] == [1, None, -5, None, 7]
    assert cols["b"] == [1, None, -5, None, 7]
    assert cols["s"] == [12, 13, 1, None, None]
    assert cols["sd"] == [12.0, 13.0, 1.5, None, 99999999999.0]


def test_whole_frame_steps_agree_across_partitions(ctx):
    """Steps whose types depend on every row (map, unbox, drop_null_fields) and error records
    over a frame spread across several partitions give the embedded engine's result: on Spark
    each partition's types are merged on the driver, errors counted once per partition."""
    def pipeline(c):
        # 10,000 rows: on Spark more than one partition, in row order (a literal frame is
        # cut in 4,096-row chunks), so "first seen" orders choice members as on one machine.
        recs = [{"id": i, "v": i if i % 3 else str(i), "late": None if i < 9000 else i,
                 "never": None, "j": '{"x": %d, "y": "s%d"}' % (i, i) if i % 2 else None}
                for i in range(10000)]
        f = DynamicFrame.from_records(recs, c, "f")
        if c._engine.name == "spark":
            assert f.getNumPartitions() > 1
        mapped = f.map(lambda r: dict(r, w=r["id"] * 2 if r["id"] % 5 else "five",
                                      bad=1 // (r["id"] % 7)))
        unboxed = f.unbox("j", "json")
        kept = f.drop_null_fields()
        return {
            "mapped": (mapped.schema(), sorted(mapped.to_arrow().to_pylist(), key=str),
                       mapped.errorsCount()),
            "unboxed": (unboxed.schema(), sorted(unboxed.to_arrow().to_pylist(), key=str)),
            "kept": (kept.schema(), sorted(kept.to_arrow().to_pylist(), key=str)),
        }
    expected = pipeline(glue_context("embedded"))
    assert expected["mapped"][2] == 1429  # the ids divisible by 7 divide by zero
    assert [f.name for f in expected["kept"][0].fields] == ["id", "v", "late", "j"]
    assert pipeline(ctx) == expected
