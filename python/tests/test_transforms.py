"""awsglue.transforms: `from awsglue.transforms import *` and each class's `.apply(...)` as Glue
documents it, compared against the values it must produce."""
import pytest

from awsglue import gluetypes as gt
from awsglue.dynamicframe import DynamicFrame, DynamicFrameCollection

from engine_kit import glue_context

NAMES = ["ApplyMapping", "ResolveChoice", "DropNullFields", "Relationalize", "Join", "Filter", "Map",
         "SelectFields", "DropFields", "RenameField", "SplitFields", "SplitRows", "Spigot", "Unbox",
         "UnnestFrame", "Union", "MergeDynamicFrame", "ErrorsAsDynamicFrame", "SelectFromCollection"]


@pytest.fixture(params=["embedded", "spark"])
def ctx(request):
    """Both engines, the same expected values (python/tests/engine_kit.py)."""
    return glue_context(request.param)


@pytest.fixture
def dyf(ctx):
    return DynamicFrame.from_records(
        [{"id": 1, "n": "10", "v": 1, "s": {"a": 1, "b": None}, "j": '{"x": 1}'},
         {"id": 2, "n": "x", "v": "two", "s": {"a": 2, "b": None}, "j": '{"x": 2}'}], ctx, "dyf")


def test_star_import_exports_every_transform():
    ns = {}
    exec("from awsglue.transforms import *", ns)
    for name in NAMES:
        assert name in ns, name
        assert callable(getattr(ns[name], "apply"))


def test_apply_mapping_apply(dyf):
    from awsglue.transforms import ApplyMapping
    out = ApplyMapping.apply(frame=dyf, mappings=[("id", "int", "key", "string"), ("n", "string", "n", "int")],
                             transformation_ctx="am")
    assert out.to_arrow().to_pylist() == [{"key": "1", "n": 10}, {"key": "2", "n": None}]
    assert out.transformation_ctx == "am"


def test_resolve_choice_and_drop_null_fields_apply(dyf):
    from awsglue.transforms import DropNullFields, ResolveChoice
    out = ResolveChoice.apply(frame=dyf, specs=[("v", "cast:string")])
    assert [r["v"] for r in out.to_arrow().to_pylist()] == ["1", "two"]
    dn = DropNullFields.apply(frame=dyf)
    assert dn.schema().getField("s").dataType == gt.StructType([gt.Field("a", gt.IntegerType())])


def test_field_transforms_apply(dyf):
    from awsglue.transforms import DropFields, RenameField, SelectFields, UnnestFrame
    assert SelectFields.apply(frame=dyf, paths=["id"]).schema().names() == ["id"]
    assert DropFields.apply(frame=dyf, paths=["j", "s", "v"]).schema().names() == ["id", "n"]
    assert RenameField.apply(frame=dyf, old_name="n", new_name="num").schema().names()[1] == "num"
    assert "s.a" in UnnestFrame.apply(frame=dyf).schema().names()


def test_filter_map_apply(dyf):
    from awsglue.transforms import Filter, Map
    f = Filter.apply(frame=dyf, f=lambda r: r["id"] == 2)
    assert [r["id"] for r in f.to_arrow().to_pylist()] == [2]
    m = Map.apply(frame=dyf, f=lambda r: {"id": r["id"] * 100})
    assert m.to_arrow().to_pylist() == [{"id": 100}, {"id": 200}]


def test_join_union_merge_apply(ctx, dyf):
    from awsglue.transforms import Join, MergeDynamicFrame, Union
    other = DynamicFrame.from_records([{"pid": 2, "extra": "e"}], ctx)
    j = Join.apply(frame1=dyf, frame2=other, keys1=["id"], keys2=["pid"])
    assert [(r["id"], r["pid"], r["extra"]) for r in j.to_arrow().to_pylist()] == [(2, 2, "e")]
    assert Union.apply(frame1=dyf, frame2=dyf).count() == 4
    stage = DynamicFrame.from_records([{"id": 1, "n": "new"}], ctx)
    merged = MergeDynamicFrame.apply(dyf.select_fields(["id", "n"]), stage, ["id"])
    assert sorted((r["id"], r["n"]) for r in merged.to_arrow().to_pylist()) == [(1, "new"), (2, "x")]


def test_collections_apply(dyf):
    from awsglue.transforms import Relationalize, SelectFromCollection, SplitFields, SplitRows
    sf = SplitFields.apply(frame=dyf, paths=["id"], name1="a", name2="b")
    assert isinstance(sf, DynamicFrameCollection) and list(sf.keys()) == ["a", "b"]
    assert SelectFromCollection.apply(dfc=sf, key="a").schema().names() == ["id"]
    sr = SplitRows.apply(frame=dyf, comparison_dict={"id": {"=": 1}}, name1="one", name2="rest")
    assert sr["one"].count() == 1 and sr["rest"].count() == 1
    rel = Relationalize.apply(frame=dyf.select_fields(["id"]), staging_path="/tmp/s", name="root")
    assert list(rel.keys()) == ["root"]


def test_unbox_and_errors_apply(dyf):
    from awsglue.transforms import ErrorsAsDynamicFrame, Map, Unbox
    ub = Unbox.apply(frame=dyf, path="j", format="json")
    assert [r["j"] for r in ub.to_arrow().to_pylist()] == [{"x": 1}, {"x": 2}]
    bad = Map.apply(frame=dyf, f=lambda r: r["missing"])
    errs = ErrorsAsDynamicFrame.apply(bad)
    assert errs.count() == 2
    assert all("KeyError" in r["error"]["msg"] for r in errs.to_arrow().to_pylist())


def test_describe(dyf):
    from awsglue.transforms import ApplyMapping
    d = ApplyMapping.describe()
    assert d["transform"]["name"] == "ApplyMapping"
