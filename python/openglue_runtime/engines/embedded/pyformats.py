"""The file formats the embedded engine reads and writes in Python, over the engine's storage
(native.read_bytes / write_bytes, so `s3://` paths reach the embedded store or an S3 endpoint as
the C++ scans do): XML (read only: AWS Glue does not write XML either) and Avro (read and write,
with PyPI's fastavro). A reader has the interface of native.Scan (schema, raw_schema, stream,
text_losses, bad_records), so plan.ScanSource and the Spark engine's tasks use it as they use the
C++ scans; each file is read whole (these formats have no streaming reader here).

XML follows the options of AWS Glue's XML reference (a fork of the spark-xml data source): the
elements named `rowTag` are the rows; a child element is a field (repeated children an array), an
attribute a field named `attributePrefix` + name (default "_", none with `excludeAttribute`),
the text of an element that also has attributes or children the field `valueTag` (default
"_VALUE"); an empty element is null (`treatEmptyValuesAsNulls` makes white space null too,
`ignoreSurroundingSpaces` trims values). Text is typed as Glue's CSV text is (int, long, double),
plus `true`/`false` as boolean; values that disagree across rows make a choice, as for JSON.
`withSchema` (json.dumps(schema.jsonValue())) gives the schema instead: the rows are cast to it.

Avro: Glue's `version` option picks the logical types read and written (AWS Glue developer guide,
format="avro"): with the default "1.7" a decimal reads as binary, a date as int and a
timestamp-millis as long, and the writer writes decimals, dates and timestamps as strings; with
"1.8" they are decimal, date and timestamp (written as decimal, date and timestamp-micros).
Other logical types (time-millis, time-micros, timestamp-micros) read as their int/long. A union
of null and one type is that type; a union of several types is a choice.
"""
import bz2
import datetime
import decimal
import gzip
import io
import re
import uuid
import xml.etree.ElementTree as ET
from typing import Dict, List, Optional, Sequence

import pyarrow as pa

from openglue_runtime import types as gt
from openglue_runtime.engines.embedded import native
from openglue_runtime.engines.embedded.cast import glue_cast
from openglue_runtime.engines.embedded.records import _member_for, merge_types, records_to_table

FORMATS = {"xml", "avro"}
BATCH_ROWS = 65536


def open_scan(files: Sequence[str], fmt: str, options: dict):
    """A scan over `files`: these formats' Python readers, the C++ engine's for the others."""
    if fmt == "xml":
        return XmlScan(files, options)
    if fmt == "avro":
        return AvroScan(files, options)
    return native.Scan(files, fmt, options)


def write(reader: pa.RecordBatchReader, path: str, fmt: str, options: dict,
          partition_keys: Sequence[str]) -> List[str]:
    """The rows written under `path` as `fmt`: Avro here, XML refused (as AWS Glue refuses it),
    every other format by the C++ writer."""
    if fmt == "xml":
        raise ValueError("format \"xml\" can be read but not written (AWS Glue does not support "
                         "\"xml\" for output either)")
    if fmt == "avro":
        return write_avro(reader, path, options, partition_keys)
    return native.write(reader, path, fmt, options, partition_keys)


def _option(options: dict, name: str, default=None):
    """A format option by name in any case (Glue Studio writes some in lower case)."""
    for k, v in (options or {}).items():
        if k.lower() == name.lower():
            return v
    return default


def _flag(options: dict, name: str) -> bool:
    return str(_option(options, name, "false")).lower() == "true"


def _file_bytes(uri: str, options: dict) -> bytes:
    """The file's bytes, decompressed by `compressionType` or by the .gz/.bz2 suffix."""
    data = native.read_bytes(uri)
    codec = str(_option(options, "compressionType", "") or "").lower()
    if codec == "gzip" or (not codec and uri.endswith(".gz")):
        return gzip.decompress(data)
    if codec in ("bzip2", "bzip") or (not codec and uri.endswith(".bz2")):
        return bz2.decompress(data)
    return data


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` shaped as `schema`: its fields by name (exact, then case-insensitive), each cast
    as Glue casts; a field the table lacks is null."""
    lower = {n.lower(): n for n in table.column_names}
    cols = []
    for f in schema:
        name = f.name if f.name in table.column_names else lower.get(f.name.lower())
        if name is None:
            cols.append(pa.nulls(table.num_rows, f.type))
            continue
        col = table.column(name).combine_chunks()
        cols.append(col if col.type == f.type else glue_cast(col, gt.from_arrow_type(f.type)))
    return pa.Table.from_arrays(cols, schema=schema)


class _RecordsScan:
    """A scan whose files become one in-memory table (inferred once, kept)."""

    def __init__(self, files: Sequence[str], options: dict):
        self.files = list(files)
        self.options = dict(options or {})
        self._table: Optional[pa.Table] = None

    def _read(self) -> pa.Table:
        raise NotImplementedError

    def table(self) -> pa.Table:
        if self._table is None:
            self._table = self._read()
        return self._table

    def schema(self) -> pa.Schema:
        return self.table().schema

    def raw_schema(self) -> pa.Schema:
        return self.schema()

    def stream(self, schema: Optional[pa.Schema] = None) -> pa.RecordBatchReader:
        table = self.table() if schema is None else conform(self.table(), schema)
        return pa.RecordBatchReader.from_batches(table.schema,
                                                 table.to_batches(max_chunksize=BATCH_ROWS))

    def text_losses(self, schema: pa.Schema) -> List[str]:
        return []  # typed per cell only for CSV text

    def bad_records(self) -> List[dict]:
        return []


# ---------------------------------------------------------------- XML

_INT = re.compile(r"-?[0-9]+\Z")
_DOUBLE = re.compile(r"-?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][-+]?[0-9]+)?\Z")


class XmlScan(_RecordsScan):
    def __init__(self, files, options):
        super().__init__(files, options)
        self.row_tag = _option(self.options, "rowTag")
        if not self.row_tag:
            raise ValueError("format \"xml\" needs the format option rowTag (the element that "
                             "is a row)")
        self.prefix = str(_option(self.options, "attributePrefix", "_"))
        self.value_tag = str(_option(self.options, "valueTag", "_VALUE"))
        self.exclude_attributes = _flag(self.options, "excludeAttribute")
        self.empty_null = _flag(self.options, "treatEmptyValuesAsNulls")
        self.trim = _flag(self.options, "ignoreSurroundingSpaces")
        with_schema = _option(self.options, "withSchema")
        self.declared = None
        if with_schema:
            dt = gt.from_json_value(with_schema)
            if not isinstance(dt, gt.StructType):
                raise ValueError("withSchema must describe a struct, not {}".format(
                    dt.simpleString()))
            self.declared = gt.to_arrow_schema(dt)
        self.encoding = str(_option(self.options, "encoding", "UTF-8"))

    def _read(self) -> pa.Table:
        records: List[dict] = []
        for uri in self.files:
            records.extend(self._rows(uri))
        table = records_to_table(records)
        return conform(table, self.declared) if self.declared is not None else table

    def _rows(self, uri: str) -> List[dict]:
        data = _file_bytes(uri, self.options)
        if self.encoding.lower().replace("-", "") not in ("utf8", ""):
            data = data.decode(self.encoding).encode("utf-8")
        rows = []
        depth = 0  # how many row elements are open (a row inside a row is part of the outer one)
        try:
            for event, elem in ET.iterparse(io.BytesIO(data), events=("start", "end")):
                if _local(elem.tag) != self.row_tag:
                    continue
                if event == "start":
                    depth += 1
                    continue
                depth -= 1
                if depth == 0:
                    value = self._value(elem)
                    rows.append(value if isinstance(value, dict) else {self.value_tag: value})
                    elem.clear()
        except ET.ParseError as e:
            raise ValueError("{}: not well-formed XML: {}".format(uri, e)) from None
        return rows

    def _text(self, text: Optional[str]):
        if text is None:
            return None
        if self.trim:
            text = text.strip()
        if text == "" or (self.empty_null and not text.strip()):
            return None
        if _INT.match(text):
            return int(text)
        if _DOUBLE.match(text):
            return float(text)
        if text in ("true", "false"):
            return text == "true"
        return text

    def _value(self, elem):
        attrs = {} if self.exclude_attributes else {
            self.prefix + _local(k): self._text(v) for k, v in elem.attrib.items()}
        children = list(elem)
        if not children and not attrs:
            return self._text(elem.text)
        rec: Dict[str, object] = dict(attrs)
        repeated = set()
        for child in children:
            name = _local(child.tag)
            value = self._value(child)
            if name in rec:
                if name not in repeated:
                    rec[name] = [rec[name]]
                    repeated.add(name)
                rec[name].append(value)
            else:
                rec[name] = value
        text = elem.text if not children else "".join(
            [elem.text or ""] + [c.tail or "" for c in children])
        value = self._text(text) if text is not None and text.strip() else None
        if value is not None:
            rec[self.value_tag] = value
        return rec


def _local(tag) -> str:
    """An element or attribute name without its namespace."""
    tag = str(tag)
    return tag.rsplit("}", 1)[-1]


# ---------------------------------------------------------------- Avro

def _fastavro():
    try:
        import fastavro
    except ImportError:
        raise ValueError("format \"avro\" needs the Python package fastavro (in requirements.txt; "
                         "pip install fastavro)") from None
    return fastavro


_LOGICAL_18 = {"decimal", "date", "timestamp-millis"}


def _reader_schema(schema, keep: set):
    """The writer's schema with the logical types not in `keep` removed (so their values come
    back as the primitive they are stored as)."""
    if isinstance(schema, list):
        return [_reader_schema(s, keep) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if out.get("logicalType") and out["logicalType"] not in keep:
        out.pop("logicalType")
        if out.get("type") in ("int", "long", "bytes", "string") and set(out) <= {"type"}:
            return out["type"]
    t = out.get("type")
    if t == "record":
        out["fields"] = [dict(f, type=_reader_schema(f["type"], keep)) for f in out["fields"]]
    elif t == "array":
        out["items"] = _reader_schema(out["items"], keep)
    elif t == "map":
        out["values"] = _reader_schema(out["values"], keep)
    elif isinstance(t, (dict, list)):
        out["type"] = _reader_schema(t, keep)
    return out


def _glue_type(schema, named: Dict[str, gt.DataType]) -> gt.DataType:
    if isinstance(schema, str):
        if schema in named:
            return named[schema]
        prim = {"null": gt.NullType, "boolean": gt.BooleanType, "int": gt.IntegerType,
                "long": gt.LongType, "float": gt.FloatType, "double": gt.DoubleType,
                "bytes": gt.BinaryType, "string": gt.StringType}.get(schema)
        if prim is None:
            raise ValueError("Avro type {!r} is not known".format(schema))
        return prim()
    if isinstance(schema, list):
        members = [m for m in schema if m != "null"]
        types = [_glue_type(m, named) for m in members]
        if not types:
            return gt.NullType()
        return types[0] if len(types) == 1 else gt.ChoiceType(types)
    logical = schema.get("logicalType")
    t = schema.get("type")
    if logical == "decimal":
        return gt.DecimalType(int(schema.get("precision", 10)), int(schema.get("scale", 0)))
    if logical == "date":
        return gt.DateType()
    if logical == "timestamp-millis":
        return gt.TimestampType()
    if t == "record":
        st = gt.StructType([gt.Field(f["name"], _glue_type(f["type"], named))
                            for f in schema["fields"]])
        named[schema.get("name", "")] = st
        return st
    if t == "array":
        return gt.ArrayType(_glue_type(schema["items"], named))
    if t == "map":
        return gt.MapType(_glue_type(schema["values"], named))
    if t == "enum":
        return gt.StringType()
    if t == "fixed":
        return gt.BinaryType()
    return _glue_type(t, named)


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_KIND = (  # the Python type of a value -> the Avro schema kinds a union branch may be for it
    (bool, {"boolean"}), (int, {"int", "long"}), (float, {"float", "double"}),
    (str, {"string", "enum"}), (bytes, {"bytes", "fixed"}), (dict, {"record", "map"}),
    (list, {"array"}), (decimal.Decimal, {"decimal"}), (datetime.datetime, {"timestamp"}),
    (datetime.date, {"date"}), (datetime.time, {"time"}))


def _kind(schema, named) -> str:
    if isinstance(schema, str):
        return _kind(named[schema], named) if schema in named else schema
    logical = schema.get("logicalType", "")
    for prefix in ("decimal", "date", "timestamp", "local-timestamp", "time"):
        if logical.startswith(prefix):
            return "timestamp" if prefix == "local-timestamp" else prefix
    t = schema.get("type")
    return t if isinstance(t, str) and t in ("record", "array", "map", "enum", "fixed") else \
        _kind(t, named)


def _frame_value(value, schema, keep: set, named: dict):
    """A value fastavro read with the file's schema as the frame holds it: the logical types
    not in `keep` back to the int/long/bytes they are stored as (fastavro always converts them),
    aware timestamps as naive UTC."""
    if value is None:
        return None
    if isinstance(schema, list):
        for branch in schema:
            if branch == "null":
                continue
            kinds = next((k for t, k in _KIND if isinstance(value, t)), set())
            if _kind(branch, named) in kinds:
                return _frame_value(value, branch, keep, named)
        return value
    if isinstance(schema, str):
        return _frame_value(value, named[schema], keep, named) if schema in named else value
    logical = schema.get("logicalType")
    if logical and logical not in keep:
        if isinstance(value, decimal.Decimal):
            unscaled = int(value.scaleb(int(schema.get("scale", 0))))
            size = schema.get("size") or max(1, (unscaled.bit_length() + 8) // 8)
            return unscaled.to_bytes(size, "big", signed=True)
        if isinstance(value, datetime.datetime):
            aware = value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)
            micros = (aware - _EPOCH) // datetime.timedelta(microseconds=1)
            return micros // 1000 if logical.endswith("millis") else micros
        if isinstance(value, datetime.date):
            return (value - datetime.date(1970, 1, 1)).days
        if isinstance(value, datetime.time):
            micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 10 ** 6 + value.microsecond
            return micros // 1000 if logical.endswith("millis") else micros
        return str(value) if logical == "uuid" else value
    t = schema.get("type")
    if t == "record":
        named[schema.get("name", "")] = schema
        return {f["name"]: _frame_value(value.get(f["name"]), f["type"], keep, named)
                for f in schema["fields"]}
    if t == "array":
        return [_frame_value(v, schema["items"], keep, named) for v in value]
    if t == "map":
        return {k: _frame_value(v, schema["values"], keep, named) for k, v in value.items()}
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    if isinstance(t, (dict, list)) or (isinstance(t, str) and t in named):
        return _frame_value(value, t, keep, named)
    return value


class AvroScan(_RecordsScan):
    def __init__(self, files, options):
        super().__init__(files, options)
        self.version = str(_option(self.options, "version", "1.7"))

    def _read(self) -> pa.Table:
        fastavro = _fastavro()
        keep = _LOGICAL_18 if self.version >= "1.8" else set()
        schema: gt.DataType = gt.StructType([])
        tables = []
        for uri in self.files:
            data = _file_bytes(uri, self.options)
            try:
                reader = fastavro.reader(io.BytesIO(data))
                writer_schema = reader.writer_schema
                dt = _glue_type(_reader_schema(writer_schema, keep), {})
                values = [_frame_value(r, writer_schema, keep, {}) for r in reader]
                if not isinstance(dt, gt.StructType):
                    dt = gt.StructType([gt.Field("value", dt)])
                    records = [{"value": v} for v in values]
                else:
                    records = values
            except (ValueError, EOFError, TypeError) as e:
                raise ValueError("{}: not a readable Avro file: {}".format(uri, e)) from None
            tables.append(records_to_table(records, dt))
            schema = merge_types(schema, dt)
        if not tables:
            return pa.table({})
        merged = gt.to_arrow_schema(schema)
        return pa.concat_tables([conform(t, merged) for t in tables])


_AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _avro_type(dt: gt.DataType, name: str, namespace: str, version: str):
    """The Avro schema of a nullable field of Glue type `dt` (the writer's mapping)."""
    if isinstance(dt, gt.StructType):
        for f in dt.fields:
            if not _AVRO_NAME.match(f.name):
                raise ValueError("field {!r} is not an Avro name".format(f.name))
        inner = {"type": "record", "name": name, "namespace": namespace,
                 "fields": [{"name": f.name, "type": _avro_type(f.dataType, f.name,
                                                                namespace + "." + name, version),
                             "default": None} for f in dt.fields]}
    elif isinstance(dt, gt.ChoiceType):
        # An unresolved choice is written as a struct with one field per member, as every sink
        # writes it (Glue's make_struct).
        return _avro_type(_choice_struct(dt), name, namespace, version)
    elif isinstance(dt, gt.ArrayType):
        inner = {"type": "array", "items": _avro_type(dt.elementType, name, namespace, version)}
    elif isinstance(dt, gt.MapType):
        inner = {"type": "map", "values": _avro_type(dt.valueType, name, namespace, version)}
    elif isinstance(dt, gt.DecimalType):
        inner = ({"type": "bytes", "logicalType": "decimal", "precision": dt.precision,
                  "scale": dt.scale} if version >= "1.8" else "string")
    elif isinstance(dt, gt.DateType):
        inner = {"type": "int", "logicalType": "date"} if version >= "1.8" else "string"
    elif isinstance(dt, gt.TimestampType):
        inner = ({"type": "long", "logicalType": "timestamp-micros"} if version >= "1.8"
                 else "string")
    elif isinstance(dt, gt.NullType):
        return "null"
    else:
        inner = {gt.BooleanType: "boolean", gt.ByteType: "int", gt.ShortType: "int",
                 gt.IntegerType: "int", gt.LongType: "long", gt.FloatType: "float",
                 gt.DoubleType: "double", gt.StringType: "string",
                 gt.BinaryType: "bytes"}.get(type(dt), "string")
    return ["null", inner]


def _choice_struct(dt: gt.ChoiceType) -> gt.StructType:
    return gt.StructType([gt.Field(n, m) for n, m in dt.choices.items()])


def _avro_value(v, dt: gt.DataType, version: str):
    if v is None:
        return None
    if isinstance(dt, gt.ChoiceType):
        member = _member_for(dt, v)
        return {n: (_avro_value(v, m, version) if n == member else None)
                for n, m in dt.choices.items()}
    if isinstance(dt, gt.StructType):
        return {f.name: _avro_value(v.get(f.name), f.dataType, version) for f in dt.fields}
    if isinstance(dt, gt.ArrayType):
        return [_avro_value(x, dt.elementType, version) for x in v]
    if isinstance(dt, gt.MapType):
        pairs = v.items() if isinstance(v, dict) else v
        return {str(k): _avro_value(x, dt.valueType, version) for k, x in pairs}
    if isinstance(dt, gt.TimestampType):
        if version >= "1.8":
            return v.replace(tzinfo=datetime.timezone.utc)
        text = v.strftime("%Y-%m-%d %H:%M:%S")
        return text + (".{:06d}".format(v.microsecond).rstrip("0") if v.microsecond else "")
    if isinstance(dt, gt.DateType):
        return v if version >= "1.8" else v.isoformat()
    if isinstance(dt, gt.DecimalType):
        return v if version >= "1.8" else str(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    return v


def _hive_escape(text: str) -> str:
    special = set('"#%\'*/:=?\\{[]^')
    return "".join("%{:02X}".format(ord(c)) if ord(c) < 0x20 or c == "\x7f" or c in special
                   else c for c in text)


def write_avro(reader: pa.RecordBatchReader, path: str, options: dict,
               partition_keys: Sequence[str]) -> List[str]:
    """The rows as Avro files under `path` (one per partition folder, `key=value/` as the C++
    writer names them), each published when complete; returns their URIs. Options: `version`
    (see the module doc) and `compression` (deflate, the default here; snappy when PyPI's cramjam
    is installed; uncompressed/null)."""
    fastavro = _fastavro()
    table = reader.read_all()
    version = str(_option(options, "version", "1.7"))
    codec = str(_option(options, "compression", "deflate")).lower()
    codec = {"uncompressed": "null", "none": "null"}.get(codec, codec)
    keys = list(partition_keys or [])
    for k in keys:
        if k not in table.column_names:
            raise ValueError("partition key {!r} is not a field of the frame".format(k))
    data = table.drop_columns(keys) if keys else table
    frame_type = gt.from_arrow_schema(data.schema)
    try:
        schema = _avro_type(frame_type, "topLevelRecord", "", version)[1]
        parsed = fastavro.parse_schema(schema)
    except Exception as e:  # fastavro's SchemaParseException and ValueError
        raise ValueError("the frame cannot be written as Avro: {} (Avro names are letters, "
                         "digits and _; rename such fields first)".format(e)) from None
    groups: Dict[tuple, List[int]] = {}
    if keys and table.num_rows:
        texts = [glue_cast(table.column(k).combine_chunks(), gt.StringType()).to_pylist()
                 for k in keys]
        for i, key in enumerate(zip(*texts)):
            groups.setdefault(key, []).append(i)
    elif table.num_rows:
        groups[()] = list(range(table.num_rows))
    run = uuid.uuid4().hex
    written = []
    for n, (key, rows) in enumerate(groups.items()):
        folder = "/".join("{}={}".format(k, "__HIVE_DEFAULT_PARTITION__" if v is None
                                         else _hive_escape(v)) for k, v in zip(keys, key))
        part = data.take(pa.array(rows, pa.int64())).to_pylist()
        records = [_avro_value(r, frame_type, version) for r in part]
        buf = io.BytesIO()
        fastavro.writer(buf, parsed, records, codec=codec)
        uri = path.rstrip("/") + "/" + (folder + "/" if folder else "") + \
            "part-{:05d}-{}.avro".format(n, run)
        native.write_bytes(uri, buf.getvalue())
        written.append(uri)
    return written
