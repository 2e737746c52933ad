"""openglue_runtime.engines.spark.frames without a JVM: the encoding of frame columns inside Spark (choices as
structs, timestamps as TIMESTAMP_NTZ) round-trips every Glue type, sliced batches included, and
the helpers that merge what Spark tasks report."""
import datetime
import decimal

import pyarrow as pa
import pytest

from awsglue import gluetypes as gt
from openglue_runtime import jdbc
from openglue_runtime.engines.spark import frames as sf
from openglue_runtime.engines.embedded.records import empty_batch, records_to_table

RECORDS = [
    {"i": i, "choice": i if i % 3 else str(i), "d": decimal.Decimal("1.25") * i,
     "ts": datetime.datetime(2024, 1, 1, 12, 0, i % 60), "day": datetime.date(2024, 2, 1 + i % 28),
     "nested": {"c": i if i % 2 else "odd", "xs": [i, None, i + 1]},
     "list_of_choice": [i, "s"] if i % 4 else None, "m": {"k": i}, "never": None,
     "b": bytes([i % 256]), "flag": i % 2 == 0}
    for i in range(300)
]


@pytest.fixture(scope="module")
def table():
    schema = gt.StructType([
        gt.Field("i", gt.LongType()), gt.Field("choice", gt.ChoiceType([gt.LongType(), gt.StringType()])),
        gt.Field("d", gt.DecimalType(10, 2)), gt.Field("ts", gt.TimestampType()),
        gt.Field("day", gt.DateType()),
        gt.Field("nested", gt.StructType([
            gt.Field("c", gt.ChoiceType([gt.StringType(), gt.LongType()])),
            gt.Field("xs", gt.ArrayType(gt.LongType()))])),
        gt.Field("list_of_choice", gt.ArrayType(gt.ChoiceType([gt.LongType(), gt.StringType()]))),
        gt.Field("m", gt.MapType(gt.LongType(), keyType=gt.StringType())),
        gt.Field("never", gt.NullType()), gt.Field("b", gt.BinaryType()),
        gt.Field("flag", gt.BooleanType())])
    return records_to_table(RECORDS, schema)


@pytest.mark.parametrize("start,length", [(0, 300), (7, 100), (150, 150), (299, 1), (40, 0)])
def test_every_type_round_trips_through_the_spark_encoding(table, start, length):
    batches = table.slice(start, length).to_batches() or [empty_batch(table.schema)]
    for batch in batches:
        encoded = sf.encode_batch(batch, table.schema)
        assert encoded.schema.field("choice").type == pa.struct(
            [pa.field("long", pa.int64()), pa.field("string", pa.string())])
        assert encoded.schema.field("ts").type == pa.timestamp("us")
        assert encoded.schema.field("never").type == pa.string()
        assert sf.decode_batch(encoded, table.schema).to_pylist() == batch.to_pylist()


def test_a_choice_is_a_struct_with_one_field_set_and_a_null_choice_a_null_struct():
    t = records_to_table([{"v": 1}, {"v": "a"}, {"v": None}])
    col = sf.encode(t.column("v"), t.schema.field("v").type)
    assert col.to_pylist() == [{"int": 1, "string": None}, {"int": None, "string": "a"}, None]


def test_to_df_encoding_gives_spark_timestamps_read_as_utc():
    t = pa.table({"ts": pa.array([datetime.datetime(2024, 5, 6, 7, 8, 9)], pa.timestamp("us"))})
    col = sf.encode(t.column("ts"), pa.timestamp("us"), for_df=True)
    assert col.type == pa.timestamp("us", tz="UTC")
    assert col.to_pylist()[0] == datetime.datetime(2024, 5, 6, 7, 8, 9, tzinfo=datetime.timezone.utc)
    # And a script's TIMESTAMP column (an instant) comes back as its UTC wall clock.
    assert sf.decode(col, pa.timestamp("us")).to_pylist() == [datetime.datetime(2024, 5, 6, 7, 8, 9)]


def test_dropped_paths_drop_a_struct_whose_fields_are_all_dropped():
    schema = pa.schema([("a", pa.int64()), ("s", pa.struct([("x", pa.int64()), ("y", pa.int64())])),
                        ("t", pa.struct([("x", pa.int64()), ("z", pa.null())])), ("n", pa.null())])
    keep = {"a", "t", "t\x00x"}
    assert sf._dropped_paths(schema, keep) == [["s"], ["t", "z"], ["n"]]


def test_jdbc_parts_merge_as_a_whole_read_types_them():
    assert jdbc.merge_part_types([pa.int32(), pa.int32()]) == pa.int32()
    # bytes in one part of a MySQL text column: the whole column is binary
    assert jdbc.merge_part_types([pa.string(), pa.binary()]) == pa.binary()
    # a part whose values did not convert fell back to strings: so does the whole
    assert jdbc.merge_part_types([pa.decimal128(5, 2), pa.string()]) == pa.string()
    assert jdbc.conform_part(pa.array([1, None]), pa.string()).to_pylist() == ["1", None]
