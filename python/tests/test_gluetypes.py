"""awsglue.gluetypes: names, equality, repr, parsing and the Arrow mapping of the CONTRACT."""
import pyarrow as pa
import pytest

from openglue_runtime import types as gt


def test_type_names_are_glues():
    names = {gt.BooleanType: "boolean", gt.ByteType: "byte", gt.ShortType: "short",
             gt.IntegerType: "int", gt.LongType: "long", gt.FloatType: "float",
             gt.DoubleType: "double", gt.DecimalType: "decimal", gt.StringType: "string",
             gt.BinaryType: "binary", gt.DateType: "date", gt.TimestampType: "timestamp",
             gt.NullType: "null", gt.ArrayType: "array", gt.MapType: "map",
             gt.StructType: "struct", gt.ChoiceType: "choice", gt.EnumType: "enum"}
    for cls, name in names.items():
        assert cls.typeName() == name
        assert cls().typeName() == name


def test_equality_and_repr():
    a = gt.StructType([gt.Field("id", gt.IntegerType()), gt.Field("tags", gt.ArrayType(gt.StringType()))])
    b = gt.StructType([gt.Field("id", gt.IntegerType()), gt.Field("tags", gt.ArrayType(gt.StringType()))])
    c = gt.StructType([gt.Field("id", gt.LongType()), gt.Field("tags", gt.ArrayType(gt.StringType()))])
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert gt.DecimalType(10, 2) != gt.DecimalType(12, 2)
    assert repr(gt.IntegerType()) == "IntegerType({})"
    assert repr(gt.Field("x", gt.LongType())) == "Field(x, LongType({}), {})"
    assert repr(gt.ChoiceType([gt.LongType(), gt.StringType()])) == \
        "ChoiceType([LongType({}), StringType({})], {})"
    assert a.hasField("id") and a.getField("tags").dataType == gt.ArrayType(gt.StringType())
    assert not a.hasField("nope")


def test_arrow_mapping_table():
    expect = [(gt.BooleanType(), pa.bool_()), (gt.ByteType(), pa.int8()), (gt.ShortType(), pa.int16()),
              (gt.IntegerType(), pa.int32()), (gt.LongType(), pa.int64()), (gt.FloatType(), pa.float32()),
              (gt.DoubleType(), pa.float64()), (gt.DecimalType(), pa.decimal128(10, 2)),
              (gt.DecimalType(20, 4), pa.decimal128(20, 4)), (gt.StringType(), pa.string()),
              (gt.BinaryType(), pa.binary()), (gt.DateType(), pa.date32()),
              (gt.TimestampType(), pa.timestamp("us")), (gt.NullType(), pa.null()),
              (gt.ArrayType(gt.LongType()), pa.list_(pa.int64())),
              (gt.MapType(gt.IntegerType()), pa.map_(pa.string(), pa.int32())),
              (gt.StructType([gt.Field("a", gt.StringType())]), pa.struct([pa.field("a", pa.string())]))]
    for glue, arrow in expect:
        assert gt.to_arrow_type(glue) == arrow
        assert gt.from_arrow_type(arrow) == glue


def test_choice_is_dense_union_named_by_type_name():
    choice = gt.ChoiceType([gt.LongType(), gt.StringType()])
    at = gt.to_arrow_type(choice)
    assert pa.types.is_union(at) and at.mode == "dense"
    assert [at.field(i).name for i in range(at.num_fields)] == ["long", "string"]
    assert [at.field(i).type for i in range(at.num_fields)] == [pa.int64(), pa.string()]
    back = gt.from_arrow_type(at)
    assert back == choice
    assert list(back.choices) == ["long", "string"]


def test_schema_round_trip():
    st = gt.StructType([gt.Field("id", gt.LongType()),
                        gt.Field("a", gt.StructType([gt.Field("b", gt.ChoiceType([gt.IntegerType(), gt.StringType()]))])),
                        gt.Field("d", gt.DecimalType(12, 3))])
    schema = gt.to_arrow_schema(st)
    assert schema.names == ["id", "a", "d"]
    assert gt.from_arrow_schema(schema) == st


@pytest.mark.parametrize("text,expected", [
    ("int", gt.IntegerType()), ("bigint", gt.LongType()), ("long", gt.LongType()),
    ("decimal", gt.DecimalType(10, 2)), ("decimal(12,3)", gt.DecimalType(12, 3)),
    ("varchar(20)", gt.StringType()), ("array<string>", gt.ArrayType(gt.StringType())),
    ("map<string,int>", gt.MapType(gt.IntegerType())),
    ("struct<a:int,b:array<struct<c:string>>>",
     gt.StructType([gt.Field("a", gt.IntegerType()),
                    gt.Field("b", gt.ArrayType(gt.StructType([gt.Field("c", gt.StringType())])))])),
])
def test_type_from_name(text, expected):
    assert gt.type_from_name(text) == expected


def test_type_from_name_rejects_unknown():
    with pytest.raises(ValueError):
        gt.type_from_name("wibble")
    with pytest.raises(ValueError):
        gt.type_from_name("decimal(a,b)")
