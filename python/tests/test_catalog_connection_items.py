"""The entities of the DataCatalogConnection source and the `catalog` sink
(openglue_runtime/catalog_connection.py) without a server: Glue API entities as items and back,
the times the migration scripts write, and rows whose structs repeat a field name. The job
runs through the server are in tests/test_catalog_connection.py."""
import datetime

import pyarrow as pa
import pytest

from openglue_runtime import catalog_connection as cc

UTC = datetime.timezone.utc


@pytest.mark.parametrize("text,expected", [
    ("1491296323000", datetime.datetime(2017, 4, 4, 8, 58, 43, tzinfo=UTC)),
    # Java's DateFormat, as the scripts' Hive conversion writes it (UTC), hour 00 and 12 too.
    ("Apr 04, 2017 08:58:43 AM", datetime.datetime(2017, 4, 4, 8, 58, 43, tzinfo=UTC)),
    ("Apr 4, 2017 08:58:43 PM", datetime.datetime(2017, 4, 4, 20, 58, 43, tzinfo=UTC)),
    ("Jan 01, 1970 00:00:00 AM", datetime.datetime(1970, 1, 1, tzinfo=UTC)),
    ("Jan 01, 1970 12:00:00 AM", datetime.datetime(1970, 1, 1, tzinfo=UTC)),
    ("2017-04-04T08:58:43Z", datetime.datetime(2017, 4, 4, 8, 58, 43, tzinfo=UTC)),
    (None, None), ("", None), ("{}", None),
])
def test_times(text, expected):
    assert cc.parse_time(text, "t") == expected


def test_a_time_that_is_none_of_those_names_the_field():
    with pytest.raises(ValueError, match=r"table d.t: lastAccessTime: 'soon' is not a time"):
        cc.parse_time("soon", "table d.t: lastAccessTime")


def test_an_entity_becomes_an_item_and_the_item_its_input():
    table = {"Name": "t", "DatabaseName": "d", "Owner": "o", "Retention": 3,
             "CreateTime": datetime.datetime(2024, 1, 2, tzinfo=UTC),
             "LastAccessTime": datetime.datetime(2024, 1, 3, tzinfo=UTC),
             "Parameters": {"k": "v"},
             "PartitionKeys": [{"Name": "day", "Type": "string"}],
             "StorageDescriptor": {"Location": "s3://b/t/", "NumberOfBuckets": 2,
                                   "SortColumns": [{"Column": "a", "SortOrder": 0}],
                                   "SerdeInfo": {"SerializationLibrary": "x.Serde"}}}
    item = cc.to_item(table, cc.TABLE)
    assert item["createTime"] == "1704153600000" and item["lastAccessTime"] == "1704240000000"
    assert item["partitionKeys"] == [{"name": "day", "type": "string", "comment": None}]
    assert item["storageDescriptor"]["sortColumns"] == [{"column": "a", "order": 0}]
    assert item["storageDescriptor"]["compressed"] is None  # absent stays absent
    # Back: nulls left out, CreateTime (the catalog's own) not given; a map read from JSON as a
    # struct has nulls for the keys this entity lacks.
    item["parameters"] = {"k": "v", "other": None}
    back = cc.to_input(item, cc.TABLE, "table d.t", {"CreateTime"})
    assert back == {"Name": "t", "Owner": "o", "Retention": 3,
                    "LastAccessTime": datetime.datetime(2024, 1, 3, tzinfo=UTC),
                    "Parameters": {"k": "v"},
                    "PartitionKeys": [{"Name": "day", "Type": "string"}],
                    "StorageDescriptor": {"Location": "s3://b/t/", "NumberOfBuckets": 2,
                                          "SortColumns": [{"Column": "a", "SortOrder": 0}],
                                          "SerdeInfo": {"SerializationLibrary": "x.Serde"}}}


def test_the_frame_schema_has_every_kinds_fields_once():
    item = cc.FRAME_SCHEMA.getField("items").dataType.elementType
    names = item.names()
    assert len(names) == len(set(names))
    for spec in (cc.DATABASE, cc.TABLE, cc.PARTITION):
        assert {name for _, name, _ in spec} <= set(names)


def test_rows_whose_structs_repeat_a_field_keep_the_first():
    item = pa.struct([("creationTime", pa.string()), ("creationTime", pa.string()),
                      ("values", pa.list_(pa.string()))])
    items = pa.array([[{"creationTime": "1", "values": ["a"]}], None],
                     pa.list_(pa.struct([("creationTime", pa.string()),
                                         ("values", pa.list_(pa.string()))])))
    # The same rows with the field repeated (as AWS's --database-prefix import builds them).
    kids = items.flatten()
    repeated = pa.StructArray.from_arrays([kids.field(0), kids.field(0), kids.field(1)],
                                          fields=list(item))
    column = pa.ListArray.from_arrays(items.offsets, repeated, mask=items.is_null())
    table = pa.table({"type": ["partition", "partition"], "items": column})
    assert cc.table_records(table) == [
        {"type": "partition", "items": [{"creationTime": "1", "values": ["a"]}]},
        {"type": "partition", "items": None}]


def test_connection_types_are_matched_without_case():
    assert cc.is_source("com.amazonaws.services.glue.connections.DataCatalogConnection")
    assert cc.is_source("COM.AMAZONAWS.SERVICES.GLUE.CONNECTIONS.DATACATALOGCONNECTION")
    assert cc.is_sink("catalog") and cc.is_sink("Catalog") and not cc.is_sink("s3")


def test_fromDF_of_a_struct_repeating_a_field_keeps_the_first():
    """AWS's `--database-prefix` import builds `struct(item.creationTime, item.creationTime,
    ...)`; on Spark such a DataFrame becomes a frame with the field once (Arrow, which the
    frame's rows cross, refuses repeated names)."""
    from engine_kit import glue_context
    from pyspark.sql import functions as F
    from awsglue.dynamicframe import DynamicFrame
    glue = glue_context("spark")
    df = glue.spark_session.createDataFrame([("1", "a"), ("2", None)], ["t", "v"])
    df = df.select(F.array(F.struct(F.col("t"), F.col("t"), F.col("v"))).alias("items"),
                   F.struct(F.col("t"), F.col("t")).alias("one"))
    assert df.schema.simpleString() == ("struct<items:array<struct<t:string,t:string,"
                                        "v:string>>,one:struct<t:string,t:string>>")
    frame = DynamicFrame.fromDF(df, glue, "f")
    assert frame.schema().simpleString() == ("struct<items:array<struct<t:string,v:string>>,"
                                             "one:struct<t:string>>")
    assert sorted(frame.to_arrow().to_pylist(), key=lambda r: r["one"]["t"]) == [
        {"items": [{"t": "1", "v": "a"}], "one": {"t": "1"}},
        {"items": [{"t": "2", "v": None}], "one": {"t": "2"}}]
