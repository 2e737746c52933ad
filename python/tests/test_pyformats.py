"""XML (read) and Avro (read and write) through GlueContext, on both engines, over the embedded
store (`s3://` paths under OPENGLUE_S3_ROOT): the options of the AWS Glue developer guide's
format="xml" and format="avro" references (openglue_runtime/engines/embedded/pyformats.py).

Expected values are written here from those references' rules (rowTag rows, `_` attribute
prefix, `_VALUE` text, repeated elements as arrays; Avro 1.7 vs 1.8 logical types); the Avro
files the readers get are written by fastavro itself, independently of OpenGlue's writer."""
import datetime
import decimal
import glob
import io
import json
import os

import pytest

from awsglue import gluetypes as gt
from engine_kit import glue_context
from job_isolation import no_current_job  # noqa: F401  (autouse: no Job leaks between tests)

fastavro = pytest.importorskip("fastavro")


@pytest.fixture(params=["embedded", "spark"])
def ctx(request, monkeypatch, tmp_path):
    import openglue_runtime.engines.embedded._engine  # noqa: F401  (built by `make build`)
    root = tmp_path / "s3"
    root.mkdir()
    monkeypatch.setenv("OPENGLUE_S3_ROOT", str(root))
    return glue_context(request.param)


def put(tmp_path, key, data):
    p = tmp_path / "s3" / key
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return p


BOOKS = """<?xml version="1.0"?>
<catalog>
  <book id="bk101" lang="en">
    <author>Gambardella, Matthew</author>
    <title>XML Developer's Guide</title>
    <price currency="USD">44.95</price>
    <tag>xml</tag><tag>guide</tag>
    <pages>704</pages>
    <available>true</available>
    <note></note>
  </book>
  <book id="bk102">
    <author>Ralls, Kim</author>
    <title>Midnight Rain</title>
    <price currency="EUR">5.95</price>
    <tag>fantasy</tag>
    <pages>unknown</pages>
  </book>
</catalog>
"""


def xml_frame(ctx, tmp_path, options=None, text=BOOKS):
    put(tmp_path, "raw/books/books.xml", text)
    return ctx.create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": ["s3://raw/books/"]}, format="xml",
        format_options=dict({"rowTag": "book"}, **(options or {})))


def test_xml_rows_attributes_values_and_arrays(ctx, tmp_path):
    dyf = xml_frame(ctx, tmp_path)
    schema = dyf.schema()
    assert schema.names() == ["_id", "_lang", "author", "title", "price", "tag", "pages",
                              "available", "note"]
    assert schema.getField("price").dataType == gt.StructType(
        [gt.Field("_currency", gt.StringType()), gt.Field("_VALUE", gt.DoubleType())])
    # One book has two <tag>s (an array), the other one: Glue's reader makes the field an array
    # in one row and a string in the other, a choice.
    assert isinstance(schema.getField("tag").dataType, gt.ChoiceType)
    assert schema.getField("pages").dataType == gt.ChoiceType([gt.IntegerType(), gt.StringType()])
    assert schema.getField("available").dataType == gt.BooleanType()
    rows = dyf.to_arrow().to_pylist()
    assert rows[0]["_id"] == "bk101" and rows[0]["_lang"] == "en"
    assert rows[0]["price"] == {"_currency": "USD", "_VALUE": 44.95}
    assert rows[0]["tag"] == ["xml", "guide"] and rows[1]["tag"] == "fantasy"
    assert rows[0]["note"] is None and rows[1]["_lang"] is None
    assert [r["pages"] for r in rows] == [704, "unknown"]


def test_xml_options_prefix_value_tag_exclude_and_schema(ctx, tmp_path):
    dyf = xml_frame(ctx, tmp_path, {"attributePrefix": "@", "valueTag": "text"})
    assert dyf.schema().getField("price").dataType.names() == ["@currency", "text"]
    dyf = xml_frame(ctx, tmp_path, {"excludeAttribute": "true"})
    assert "_id" not in dyf.schema().names() and dyf.schema().getField("price").dataType == gt.DoubleType()
    schema = gt.StructType([gt.Field("_id", gt.StringType()), gt.Field("pages", gt.LongType()),
                            gt.Field("title", gt.StringType())])
    dyf = xml_frame(ctx, tmp_path, {"withSchema": json.dumps(schema.jsonValue())})
    assert dyf.schema() == schema
    assert dyf.to_arrow().to_pylist() == [
        {"_id": "bk101", "pages": 704, "title": "XML Developer's Guide"},
        {"_id": "bk102", "pages": None, "title": "Midnight Rain"}]


def test_xml_bad_input_fails_clearly_and_xml_is_not_written(ctx, tmp_path):
    put(tmp_path, "raw/books/books.xml", BOOKS)
    with pytest.raises(Exception, match="rowTag"):
        ctx.create_dynamic_frame.from_options(
            connection_type="s3", connection_options={"paths": ["s3://raw/books/"]},
            format="xml").count()
    with pytest.raises(Exception, match="not well-formed XML"):
        xml_frame(ctx, tmp_path, text="<catalog><book><title>x</book>").count()
    dyf = xml_frame(ctx, tmp_path)
    with pytest.raises(Exception, match="not written|not support"):
        ctx.write_dynamic_frame.from_options(frame=dyf, connection_type="s3",
                                             connection_options={"path": "s3://out/x/"},
                                             format="xml")
    assert not [p for p in glob.glob(str(tmp_path / "s3/out/**"), recursive=True) if os.path.isfile(p)]


AVRO_SCHEMA = {
    "type": "record", "name": "Order", "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": ["null", "string"]},
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal",
                                    "precision": 9, "scale": 2}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "items", "type": {"type": "array", "items": {
            "type": "record", "name": "Item",
            "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}},
        {"name": "status", "type": {"type": "enum", "name": "Status",
                                    "symbols": ["NEW", "SHIPPED"]}},
        {"name": "code", "type": ["int", "string"]},
    ]}
AT = datetime.datetime(2024, 3, 1, 12, 30, 15, tzinfo=datetime.timezone.utc)
ORDERS = [
    {"id": 1, "customer": "ann", "amount": decimal.Decimal("12.50"),
     "day": datetime.date(2024, 3, 1), "at": AT, "items": [{"sku": "a", "qty": 2}],
     "status": "NEW", "code": 7},
    {"id": 2, "customer": None, "amount": decimal.Decimal("3.05"),
     "day": datetime.date(2024, 3, 2), "at": AT, "items": [], "status": "SHIPPED", "code": "x"},
]


def avro_file(tmp_path):
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(AVRO_SCHEMA), ORDERS)
    put(tmp_path, "raw/orders/orders.avro", buf.getvalue())


def test_avro_read_versions_map_logical_types_as_glue_documents(ctx, tmp_path):
    avro_file(tmp_path)
    read = ctx.create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": ["s3://raw/orders/"]}, format="avro")
    s17 = read.schema()
    assert [s17.getField(n).dataType for n in ("amount", "day", "at")] == [
        gt.BinaryType(), gt.IntegerType(), gt.LongType()]
    assert s17.getField("status").dataType == gt.StringType()
    assert s17.getField("code").dataType == gt.ChoiceType([gt.IntegerType(), gt.StringType()])
    rows = read.to_arrow().to_pylist()
    assert rows[0]["day"] == (datetime.date(2024, 3, 1) - datetime.date(1970, 1, 1)).days
    assert rows[0]["at"] == int(AT.timestamp() * 1000)
    assert [r["customer"] for r in rows] == ["ann", None] and [r["code"] for r in rows] == [7, "x"]
    assert rows[0]["items"] == [{"sku": "a", "qty": 2}]
    v18 = ctx.create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": ["s3://raw/orders/"]}, format="avro",
        format_options={"version": "1.8"})
    s18 = v18.schema()
    assert [s18.getField(n).dataType for n in ("amount", "day", "at")] == [
        gt.DecimalType(9, 2), gt.DateType(), gt.TimestampType()]
    rows = v18.to_arrow().to_pylist()
    assert rows[1]["amount"] == decimal.Decimal("3.05") and rows[0]["day"] == datetime.date(2024, 3, 1)
    assert rows[0]["at"] == datetime.datetime(2024, 3, 1, 12, 30, 15)


def test_avro_write_partitioned_read_back_by_fastavro(ctx, tmp_path):
    avro_file(tmp_path)
    src = ctx.create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": ["s3://raw/orders/"]}, format="avro",
        format_options={"version": "1.8"})
    frame = src.resolveChoice(specs=[("code", "cast:string")])
    ctx.write_dynamic_frame.from_options(
        frame=frame, connection_type="s3",
        connection_options={"path": "s3://out/orders/", "partitionKeys": ["status"]},
        format="avro", format_options={"version": "1.8"})
    files = sorted(glob.glob(str(tmp_path / "s3/out/orders/status=*/part-*.avro")))
    assert [f.split("/")[-2] for f in files] == ["status=NEW", "status=SHIPPED"]
    assert not glob.glob(str(tmp_path / "s3/out/orders/**/.og-tmp.*"), recursive=True)
    with open(files[0], "rb") as f:
        back = list(fastavro.reader(f))
    assert back == [{"id": 1, "customer": "ann", "amount": decimal.Decimal("12.50"),
                     "day": datetime.date(2024, 3, 1), "at": AT,
                     "items": [{"sku": "a", "qty": 2}], "code": "7"}]
    # Version 1.7 (the default) writes decimals, dates and timestamps as strings.
    ctx.write_dynamic_frame.from_options(frame=frame, connection_type="s3",
                                         connection_options={"path": "s3://out/v17/"},
                                         format="avro")
    (only,) = glob.glob(str(tmp_path / "s3/out/v17/part-*.avro"))
    with open(only, "rb") as f:
        first = next(iter(fastavro.reader(f)))
    assert (first["amount"], first["day"], first["at"]) == ("12.50", "2024-03-01",
                                                            "2024-03-01 12:30:15")
    # And the frame reads back what it wrote.
    again = ctx.create_dynamic_frame.from_options(
        connection_type="s3", connection_options={"paths": ["s3://out/orders/"], "recurse": True},
        format="avro", format_options={"version": "1.8"})
    assert sorted(r["id"] for r in again.to_arrow().to_pylist()) == [1, 2]


def test_avro_bad_names_and_bad_files_fail_clearly(ctx, tmp_path):
    from awsglue.dynamicframe import DynamicFrame
    frame = DynamicFrame.from_records([{"provider id": 1}], ctx)
    with pytest.raises(Exception, match="cannot be written as Avro"):
        ctx.write_dynamic_frame.from_options(frame=frame, connection_type="s3",
                                             connection_options={"path": "s3://out/bad/"},
                                             format="avro")
    assert not glob.glob(str(tmp_path / "s3/out/bad/**/*.avro"), recursive=True)
    put(tmp_path, "raw/broken/x.avro", b"not avro at all")
    with pytest.raises(Exception, match="not a readable Avro file"):
        ctx.create_dynamic_frame.from_options(
            connection_type="s3", connection_options={"paths": ["s3://raw/broken/"]},
            format="avro").count()
