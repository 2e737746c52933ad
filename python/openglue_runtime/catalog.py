"""The Data Catalog as the ETL runtime uses it: tables as sources and sinks.

GlueContext's `from_catalog` reads and writes go through here; everything is a call to the Glue
API of the server named by the environment (`glue_client()`), exactly what boto3 code does:
- `resolve_source(db, table, push_down_predicate, catalog_partition_predicate, ...)`: GetTable,
  then GetPartitions filtered by the predicates, giving the folders to read with their partition
  values, the format and its options (from the table's SerDe and parameters), and the columns.
- `resolve_sink(db, table)`: where and how to write into a table.
- `update_after_write(...)`: after a write with `enableUpdateCatalog`, registers the partitions
  that appeared (BatchCreatePartition) and, with `updateBehavior` UPDATE_IN_DATABASE, adds new
  columns to the table (UpdateTable).

Types: catalog columns carry Hive type names (`bigint`, `int`, `varchar(10)`,
`array<struct<a:int>>`); this module hands the runtime Glue type names (`long`, `int`,
`string`, `array<struct<a:int>>`, see `hive_to_glue`) and converts back when it writes columns
(`glue_to_hive`).
"""
import os
import threading
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from openglue_runtime.partition_predicate import Predicate, PredicateError

Column = Tuple[str, str]  # (name, Glue type name)


class CatalogError(RuntimeError):
    """A catalog table cannot be used as asked (missing, unsupported format, bad predicate)."""


class JdbcCatalogTable(CatalogError):
    """The table is a JDBC table (a connectionName parameter): read or written through
    openglue_runtime.jdbc, not as files. `table` is GetTable's Table."""

    def __init__(self, message: str, table: Dict[str, Any]):
        super().__init__(message)
        self.table = table


@dataclass
class CatalogSource:
    """What to read for a catalog table (see resolve_source)."""
    database: str
    table_name: str
    location: str
    paths: List[Tuple[str, Dict[str, str]]]  # (folder or file, {partition key: value text})
    format: str  # csv | json | parquet | orc | avro | ...
    format_options: Dict[str, str]
    schema_columns: List[Column]
    partition_keys: List[Column]
    table: Dict[str, Any] = field(default_factory=dict, repr=False)  # GetTable's Table


@dataclass
class CatalogSink:
    """Where and how to write into a catalog table (see resolve_sink)."""
    database: str
    table_name: str
    path: str
    format: str
    format_options: Dict[str, str]
    partition_keys: List[Column]
    columns: List[Column]
    table: Dict[str, Any] = field(default_factory=dict, repr=False)


# ---------------------------------------------------------------------------------------------
# The client

_client_lock = threading.Lock()
_clients: Dict[Tuple[str, str, str, str], Any] = {}


def glue_client(region: Optional[str] = None):
    """A boto3 Glue client for the environment: endpoint `AWS_ENDPOINT_URL_GLUE` (else
    `AWS_ENDPOINT_URL`, else boto3's own default), region `region` when given, else
    `AWS_REGION` / `AWS_DEFAULT_REGION` (default us-east-1), credentials from the environment
    as boto3 finds them (a job run gets run-scoped ones). One client per endpoint, region and
    key is kept for the process."""
    import boto3  # imported here: in-process use without the catalog needs no boto3
    import botocore.config

    endpoint = os.environ.get("AWS_ENDPOINT_URL_GLUE") or os.environ.get("AWS_ENDPOINT_URL") or ""
    region = (region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
              or "us-east-1")
    key = (endpoint, region, os.environ.get("AWS_ACCESS_KEY_ID", ""),
           os.environ.get("AWS_SECRET_ACCESS_KEY", ""))
    with _client_lock:
        client = _clients.get(key)
        if client is None:
            config = botocore.config.Config(retries={"max_attempts": 3, "mode": "standard"})
            client = boto3.client("glue", endpoint_url=endpoint or None, region_name=region,
                                  config=config)
            _clients[key] = client
        return client


def _call(what: str, fn, **kwargs):
    """Calls a Glue operation; turns its errors into CatalogError naming `what`."""
    import botocore.exceptions
    try:
        return fn(**kwargs)
    except botocore.exceptions.ClientError as e:
        error = e.response.get("Error", {})
        code = error.get("Code", "")
        message = error.get("Message", str(e))
        if code == "EntityNotFoundException":
            raise CatalogError(f"{what}: not found in the Data Catalog ({message})") from None
        raise CatalogError(f"{what}: {code}: {message}") from None
    except botocore.exceptions.BotoCoreError as e:
        raise CatalogError(f"{what}: cannot reach the Data Catalog: {e}") from None


def _catalog_kwargs(catalog_id: Optional[str]) -> Dict[str, str]:
    return {"CatalogId": catalog_id} if catalog_id else {}


def get_table(database: str, table_name: str, catalog_id: Optional[str] = None) -> Dict[str, Any]:
    """GetTable's Table for database.table_name (CatalogError when it does not exist)."""
    client = glue_client()
    response = _call(f"table {database}.{table_name}", client.get_table,
                     DatabaseName=database, Name=table_name, **_catalog_kwargs(catalog_id))
    return response["Table"]


# ---------------------------------------------------------------------------------------------
# Types

_HIVE_TO_GLUE = {
    "tinyint": "byte", "smallint": "short", "int": "int", "integer": "int", "bigint": "long",
    "float": "float", "double": "double", "boolean": "boolean", "string": "string",
    "binary": "binary", "date": "date", "timestamp": "timestamp", "void": "null", "null": "null",
    # Glue names given as catalog types (tables created by tools that write them) map to
    # themselves.
    "byte": "byte", "short": "short", "long": "long",
}
_GLUE_TO_HIVE = {"byte": "tinyint", "short": "smallint", "int": "int", "long": "bigint",
                 "float": "float", "double": "double", "boolean": "boolean", "string": "string",
                 "binary": "binary", "date": "date", "timestamp": "timestamp", "null": "void"}


def _split_top(text: str, sep: str) -> List[str]:
    """Splits `text` on `sep` outside <> and () brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _convert_type(text: str, scalars: Dict[str, str], to_glue: bool) -> str:
    t = text.strip()
    low = t.lower()
    if low.endswith(">") and "<" in low:
        head, inner = low.split("<", 1)[0].strip(), t[t.index("<") + 1:-1]
        if head == "array":
            return f"array<{_convert_type(inner, scalars, to_glue)}>"
        if head == "map":
            parts = _split_top(inner, ",")
            if len(parts) == 2:
                return (f"map<{_convert_type(parts[0], scalars, to_glue)},"
                        f"{_convert_type(parts[1], scalars, to_glue)}>")
        if head == "struct":
            fields = []
            for part in _split_top(inner, ","):
                if not part.strip():
                    continue
                name, _, ftype = part.partition(":")
                fields.append(f"{name.strip()}:{_convert_type(ftype, scalars, to_glue)}")
            return "struct<" + ",".join(fields) + ">"
        return t
    if low.startswith("decimal"):
        return low.replace(" ", "")
    if to_glue and (low.startswith("varchar") or low.startswith("char")):
        return "string"
    return scalars.get(low, low)


def hive_to_glue(catalog_type: str) -> str:
    """A catalog (Hive) column type as a Glue type name: bigint -> long, varchar(n) -> string,
    decimal(p,s) kept, nested types converted inside (`array<bigint>` -> `array<long>`). An
    unknown name is returned lower-cased as it is."""
    return _convert_type(catalog_type or "string", _HIVE_TO_GLUE, True)


def glue_to_hive(glue_type: str) -> str:
    """A Glue type name as a catalog (Hive) column type: long -> bigint, byte -> tinyint, ...;
    a bare `decimal` is decimal(10,2) (Glue's default)."""
    t = (glue_type or "string").strip()
    if t.lower() == "decimal":
        return "decimal(10,2)"
    return _convert_type(t, _GLUE_TO_HIVE, False)


def _columns(columns: Iterable[Dict[str, Any]]) -> List[Column]:
    return [(c["Name"], hive_to_glue(c.get("Type", "string"))) for c in columns or []]


# ---------------------------------------------------------------------------------------------
# Formats

_SERDE_FORMATS = [
    ("opencsvserde", "csv"),
    ("lazysimpleserde", "csv"),
    ("jsonserde", "json"),
    ("parquet", "parquet"),
    ("orc", "orc"),
    ("avro", "avro"),
    ("xmlserde", "xml"),
]
_INPUT_FORMATS = [
    ("parquet", "parquet"),
    ("orc", "orc"),
    ("avro", "avro"),
]


def table_format(table: Dict[str, Any]) -> str:
    """The data format of a catalog table: its `classification` parameter when set (as Glue
    crawlers write it), else from the StorageDescriptor's InputFormat and SerDe. Raises
    CatalogError when neither says."""
    params = {k.lower(): v for k, v in (table.get("Parameters") or {}).items()}
    sd = table.get("StorageDescriptor") or {}
    sd_params = {k.lower(): v for k, v in (sd.get("Parameters") or {}).items()}
    classification = (params.get("classification") or sd_params.get("classification") or "")
    classification = classification.strip().lower()
    if classification:
        return "parquet" if classification == "glueparquet" else classification
    serde = ((sd.get("SerdeInfo") or {}).get("SerializationLibrary") or "").lower()
    input_format = (sd.get("InputFormat") or "").lower()
    for needle, fmt in _INPUT_FORMATS:
        if needle in input_format:
            return fmt
    for needle, fmt in _SERDE_FORMATS:
        if needle in serde:
            return fmt
    if "textinputformat" in input_format:
        return "csv"
    raise CatalogError(
        f"table {table.get('DatabaseName', '?')}.{table.get('Name', '?')}: its format is unknown "
        "(no 'classification' parameter, InputFormat or SerDe that names one)")


def _format_options(table: Dict[str, Any], fmt: str, for_write: bool) -> Dict[str, str]:
    """Glue format options from the SerDe parameters and the table's parameters."""
    options: Dict[str, str] = {}
    params = dict(table.get("Parameters") or {})
    sd = table.get("StorageDescriptor") or {}
    params.update({k: v for k, v in (sd.get("Parameters") or {}).items() if k not in params})
    serde_params = dict((sd.get("SerdeInfo") or {}).get("Parameters") or {})
    if fmt == "csv":
        separator = (serde_params.get("separatorChar") or serde_params.get("field.delim")
                     or serde_params.get("serialization.format") or params.get("delimiter"))
        # serialization.format is a number in some tables ("1": Hive's default ^A); only a
        # one-character value is a delimiter.
        if separator and len(separator) == 1 and not separator.isdigit():
            options["separator"] = separator
        elif separator and separator == "\\t":
            options["separator"] = "\t"
        if "quoteChar" in serde_params:
            options["quoteChar"] = serde_params["quoteChar"]
        escape = serde_params.get("escapeChar") or serde_params.get("escape.delim")
        if escape:
            options["escaper"] = escape
        try:
            header_lines = int(params.get("skip.header.line.count", "0") or 0)
        except ValueError:
            header_lines = 0
        if for_write:
            options["writeHeader"] = "true" if header_lines >= 1 else "false"
        else:
            options["withHeader"] = "true" if header_lines >= 1 else "false"
    if fmt == "xml" and params.get("rowTag"):
        options["rowTag"] = params["rowTag"]  # as Glue's crawler records an XML table's row
    compression = (params.get("compressionType") or "").lower()
    if not for_write and compression and compression != "none":
        options["compressionType"] = compression
    if for_write and fmt in ("parquet", "orc"):
        codec = (params.get("parquet.compression") or params.get("orc.compress") or "").lower()
        if codec:
            options["compression"] = codec
    return options


def _check_readable(table: Dict[str, Any], what: str) -> None:
    kind = (table.get("TableType") or "").upper()
    if kind == "VIRTUAL_VIEW":
        raise CatalogError(f"table {what} is a view: OpenGlue's catalog sources do not read views")
    params = {k.lower(): (v or "").lower() for k, v in (table.get("Parameters") or {}).items()}
    if params.get("table_type") in ("iceberg", "delta", "hudi"):
        raise CatalogError(f"table {what} is an {params['table_type']} table: not supported yet")
    if params.get("connectionname") and params.get("classification", "") in (
            "postgresql", "mysql", "mariadb", "jdbc", ""):
        raise JdbcCatalogTable(f"table {what} is a JDBC table", table)
    if params.get("connectionname") or params.get("classification") in (
            "postgresql", "mysql", "sqlserver", "oracle", "redshift", "jdbc"):
        raise CatalogError(f"table {what} is a JDBC table of a database OpenGlue does "
                           "not read (supported: postgresql, mysql)")
    location = ((table.get("StorageDescriptor") or {}).get("Location") or "").strip()
    if not location:
        raise CatalogError(f"table {what} has no StorageDescriptor.Location to read or write")


# ---------------------------------------------------------------------------------------------
# Sources

def _predicate(*parts: str) -> str:
    parts = [p.strip() for p in parts if p and p.strip()]
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    return " AND ".join(f"({p})" for p in parts)


def _join(location: str, *segments: str) -> str:
    return location.rstrip("/") + "/" + "/".join(segments)


def _hive_escape(value: str) -> str:
    """A partition value as Hive writes it in a folder name (%XX for the characters Hive
    escapes)."""
    out = []
    for ch in value:
        if ch in '"#%\'*/:=?\\\x7f{[]^' or ord(ch) < 0x20:
            out.append("%{:02X}".format(ord(ch)))
        else:
            out.append(ch)
    return "".join(out)


def get_partitions(database: str, table_name: str, expression: str = "",
                   catalog_id: Optional[str] = None) -> List[Dict[str, Any]]:
    """Every partition of the table matching `expression` (GetPartitions, all pages)."""
    client = glue_client()
    kwargs: Dict[str, Any] = {"DatabaseName": database, "TableName": table_name,
                              **_catalog_kwargs(catalog_id)}
    if expression:
        kwargs["Expression"] = expression
    partitions: List[Dict[str, Any]] = []
    what = f"partitions of {database}.{table_name}" + (
        f" matching [{expression}]" if expression else "")
    while True:
        page = _call(what, client.get_partitions, **kwargs)
        partitions.extend(page.get("Partitions", []))
        token = page.get("NextToken")
        if not token:
            return partitions
        kwargs["NextToken"] = token


def resolve_source(database: str, table_name: str, push_down_predicate: str = "",
                   catalog_partition_predicate: str = "",
                   additional_options: Optional[Dict[str, Any]] = None,
                   catalog_id: Optional[str] = None) -> CatalogSource:
    """What a `from_catalog` read of database.table_name reads.

    An unpartitioned table is its Location. A partitioned one is the folders of its partitions
    (each partition's own Location, else `<table location>/k=v/...`) that match both predicates:
    `catalogPartitionPredicate`, GetPartitions' Expression, evaluated by the catalog, and
    `push_down_predicate`, a Spark SQL predicate over the partition columns, evaluated here on
    the partitions the catalog returned (openglue_runtime.partition_predicate), as Glue does. A
    table whose partitions are not registered reads nothing, as in Glue.
    `additional_options["catalogPartitionPredicate"]` is used when the argument is empty.
    """
    additional_options = dict(additional_options or {})
    if not catalog_partition_predicate:
        catalog_partition_predicate = str(additional_options.get("catalogPartitionPredicate", ""))
    what = f"{database}.{table_name}"
    table = get_table(database, table_name, catalog_id)
    _check_readable(table, what)
    sd = table.get("StorageDescriptor") or {}
    location = sd["Location"].strip()
    fmt = table_format(table)
    partition_keys = _columns(table.get("PartitionKeys"))
    schema_columns = _columns(sd.get("Columns"))
    if not partition_keys:
        if push_down_predicate or catalog_partition_predicate:
            raise CatalogError(f"table {what} is not partitioned: a partition predicate cannot "
                               "apply to it")
        paths = [(location, {})]
    else:
        predicate = None
        if push_down_predicate and str(push_down_predicate).strip():
            try:
                predicate = Predicate(push_down_predicate, partition_keys)
            except PredicateError as e:
                raise CatalogError(f"table {what}: {e}") from None
        names = [k for k, _ in partition_keys]
        paths = []
        for partition in get_partitions(database, table_name,
                                        _predicate(catalog_partition_predicate), catalog_id):
            values = [str(v) for v in partition.get("Values", [])]
            if len(values) != len(names):
                continue  # a partition that does not fit the table's keys names no folder
            if predicate is not None and not predicate.matches(dict(zip(names, values))):
                continue
            part_location = ((partition.get("StorageDescriptor") or {}).get("Location") or "")
            if not part_location.strip():
                part_location = _join(location, *(f"{k}={_hive_escape(v)}"
                                                  for k, v in zip(names, values)))
            paths.append((part_location.strip(), dict(zip(names, values))))
        paths.sort(key=lambda p: p[0])
    return CatalogSource(database=database, table_name=table_name, location=location,
                         paths=paths, format=fmt,
                         format_options=_format_options(table, fmt, for_write=False),
                         schema_columns=schema_columns, partition_keys=partition_keys,
                         table=table)


# ---------------------------------------------------------------------------------------------
# Sinks

def resolve_sink(database: str, table_name: str,
                 catalog_id: Optional[str] = None) -> CatalogSink:
    """Where a `write_dynamic_frame.from_catalog` into database.table_name writes: the table's
    Location, format and format options (for CSV: its separator, quote and escape, and a header
    only when the table skips one), its partition keys and columns."""
    what = f"{database}.{table_name}"
    table = get_table(database, table_name, catalog_id)
    _check_readable(table, what)
    sd = table.get("StorageDescriptor") or {}
    fmt = table_format(table)
    return CatalogSink(database=database, table_name=table_name, path=sd["Location"].strip(),
                       format=fmt, format_options=_format_options(table, fmt, for_write=True),
                       partition_keys=_columns(table.get("PartitionKeys")),
                       columns=_columns(sd.get("Columns")), table=table)


_TABLE_INPUT_FIELDS = ("Name", "Description", "Owner", "LastAccessTime", "LastAnalyzedTime",
                       "Retention", "StorageDescriptor", "PartitionKeys", "ViewOriginalText",
                       "ViewExpandedText", "TableType", "Parameters", "TargetTable")


def _partition_values_of(uri: str, location: str, keys: Sequence[str]) -> Optional[List[str]]:
    """The partition values of a file written under `location` in `k=v/` folders, or None when
    the file is not in such folders for exactly `keys`."""
    def norm(path: str) -> str:  # file:///x and /x name the same place
        return path[len("file://"):] if path.startswith("file://") else path

    base = norm(location).rstrip("/") + "/"
    uri = norm(uri)
    if not uri.startswith(base):
        return None
    segments = uri[len(base):].split("/")[:-1]  # the folders between location and file
    if len(segments) < len(keys):
        return None
    values = []
    for key, segment in zip(keys, segments):
        name, sep, value = segment.partition("=")
        if not sep or name != key:
            return None
        values.append(urllib.parse.unquote(value))
    return values


def _table_exists(database: str, table_name: str, catalog_id: Optional[str]) -> bool:
    """Whether GetTable finds the table (False only on EntityNotFoundException)."""
    import botocore.exceptions
    try:
        glue_client().get_table(DatabaseName=database, Name=table_name,
                                **_catalog_kwargs(catalog_id))
        return True
    except botocore.exceptions.ClientError as e:
        if e.response.get("Error", {}).get("Code") == "EntityNotFoundException":
            return False
        raise CatalogError(f"table {database}.{table_name}: {e}") from None


# What a table written by a job is declared as, per format: (InputFormat, OutputFormat, SerDe).
_NEW_TABLE_FORMATS = {
    "parquet": ("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
                "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"),
    "orc": ("org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
            "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
            "org.apache.hadoop.hive.ql.io.orc.OrcSerde"),
    "json": ("org.apache.hadoop.mapred.TextInputFormat",
             "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
             "org.openx.data.jsonserde.JsonSerDe"),
    "csv": ("org.apache.hadoop.mapred.TextInputFormat",
            "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
            "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"),
}


def new_table_input(table_name: str, location: str, fmt: str, schema_columns: Sequence[Any],
                    partition_keys: Sequence[Any],
                    format_options: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """CreateTable's TableInput for a table a job's write creates: EXTERNAL_TABLE at `location`
    (a folder: a trailing "/" is added), `classification` = the format (glueparquet is
    declared parquet, as Glue does), the written columns (Glue types as Hive types) without the
    partition keys, which become PartitionKeys. CSV tables get the sink's separator and a
    header line count when the sink writes a header. Raises CatalogError for a format the
    catalog cannot declare."""
    fmt_name = (fmt or "").strip().lower()
    fmt_name = "parquet" if fmt_name == "glueparquet" else fmt_name
    if fmt_name not in _NEW_TABLE_FORMATS:
        raise CatalogError(f"cannot create table {table_name} for format {fmt!r}: use "
                           + ", ".join(sorted(_NEW_TABLE_FORMATS)))
    input_format, output_format, serde = _NEW_TABLE_FORMATS[fmt_name]

    def pair(item) -> Column:
        if isinstance(item, (tuple, list)):
            return str(item[0]), str(item[1]) if len(item) > 1 else "string"
        return str(item), "string"
    keys = [pair(k) for k in partition_keys or []]
    key_names = {n.lower() for n, _ in keys}
    columns = [pair(c) for c in schema_columns or []]
    types = {n: t for n, t in columns}
    serde_params: Dict[str, str] = {}
    params = {"classification": fmt_name}
    if fmt_name == "csv":
        opts = dict(format_options or {})
        serde_params["field.delim"] = str(opts.get("separator", ","))
        if str(opts.get("writeHeader", "true")).lower() != "false":
            params["skip.header.line.count"] = "1"
    folder = location if location.endswith("/") else location + "/"
    return {
        "Name": table_name, "TableType": "EXTERNAL_TABLE", "Parameters": params,
        "PartitionKeys": [{"Name": n, "Type": glue_to_hive(types.get(n, t))} for n, t in keys],
        "StorageDescriptor": {
            "Columns": [{"Name": n, "Type": glue_to_hive(t)} for n, t in columns
                        if n.lower() not in key_names],
            "Location": folder, "InputFormat": input_format, "OutputFormat": output_format,
            "SerdeInfo": {"SerializationLibrary": serde, "Parameters": serde_params},
            "Parameters": {"classification": fmt_name}}}


def update_after_write(database: str, table_name: str, written_uris: Sequence[str],
                       partition_keys: Sequence[Any], schema_columns: Sequence[Any],
                       update_behavior: str = "UPDATE_IN_DATABASE",
                       enable_update_catalog: bool = False,
                       catalog_id: Optional[str] = None, location: str = "",
                       fmt: str = "", format_options: Optional[Dict[str, Any]] = None
                       ) -> Dict[str, Any]:
    """Brings the catalog up to date after a write into database.table_name.

    Only with `enable_update_catalog` (Glue's `enableUpdateCatalog`; without it the catalog is
    left alone and this returns at once). Then:
    - new partitions: each `k=v/` folder of `written_uris` under the table's Location that is not
      a partition yet is created (BatchCreatePartition, with the table's StorageDescriptor and
      the folder as its Location); existing ones are left as they are.
    - `update_behavior` "UPDATE_IN_DATABASE" (Glue's default): columns of `schema_columns`
      (name, Glue type) the table lacks are added to it (UpdateTable; existing columns keep
      their types); an unpartitioned table written with `partition_keys` gets them as its
      partition keys. "LOG": the schema is kept, the difference is printed.
    `partition_keys` and `schema_columns` items may be names or (name, type) pairs.
    A table that does not exist yet is created first when `location` (the sink's path) is given
    (Glue's "create a table in the Data Catalog" on `getSink(..., enableUpdateCatalog=True)` +
    `setCatalogInfo`): an EXTERNAL_TABLE at `location` in format `fmt` with the written columns
    and partition keys (new_table_input).
    Returns {"created_partitions": [[values]...], "added_columns": [names], "table_updated": b,
    "table_created": b}.
    """
    result: Dict[str, Any] = {"created_partitions": [], "added_columns": [],
                              "table_updated": False, "table_created": False}
    if not enable_update_catalog:
        return result
    behavior = (update_behavior or "UPDATE_IN_DATABASE").upper()
    if behavior not in ("UPDATE_IN_DATABASE", "LOG"):
        raise CatalogError(f"updateBehavior must be UPDATE_IN_DATABASE or LOG, not "
                           f"{update_behavior!r}")
    client = glue_client()
    what = f"{database}.{table_name}"
    try:
        table = get_table(database, table_name, catalog_id)
    except CatalogError:
        if not location or _table_exists(database, table_name, catalog_id):
            raise
        table_input = new_table_input(table_name, location, fmt, schema_columns,
                                      partition_keys, format_options)
        _call(f"creating table {what}", client.create_table, DatabaseName=database,
              TableInput=table_input, **_catalog_kwargs(catalog_id))
        result["table_created"] = True
        table = get_table(database, table_name, catalog_id)
    sd = dict(table.get("StorageDescriptor") or {})
    location = (sd.get("Location") or "").strip()
    if not location:
        raise CatalogError(f"table {what} has no StorageDescriptor.Location")

    def pair(item) -> Column:
        if isinstance(item, (tuple, list)):
            return str(item[0]), str(item[1]) if len(item) > 1 else "string"
        return str(item), "string"

    written_keys = [pair(k) for k in partition_keys or []]
    columns = [pair(c) for c in schema_columns or []]
    glue_types = dict(columns)
    table_keys = [c["Name"] for c in table.get("PartitionKeys") or []]

    # The schema.
    new_input = None
    existing = {c["Name"].lower() for c in sd.get("Columns") or []}
    existing |= {k.lower() for k in table_keys}
    key_names = {k.lower() for k, _ in written_keys} | {k.lower() for k in table_keys}
    added = [(n, t) for n, t in columns if n.lower() not in existing and n.lower() not in key_names]
    new_keys = []
    if not table_keys and written_keys:
        new_keys = [{"Name": n, "Type": glue_to_hive(glue_types.get(n, t))}
                    for n, t in written_keys]
    if added or new_keys:
        if behavior == "UPDATE_IN_DATABASE":
            new_input = {k: table[k] for k in _TABLE_INPUT_FIELDS if k in table}
            new_sd = dict(sd)
            new_sd["Columns"] = list(sd.get("Columns") or []) + [
                {"Name": n, "Type": glue_to_hive(t)} for n, t in added]
            new_input["StorageDescriptor"] = new_sd
            if new_keys:
                new_input["PartitionKeys"] = new_keys
                table_keys = [k["Name"] for k in new_keys]
            _call(f"updating table {what}", client.update_table, DatabaseName=database,
                  TableInput=new_input, **_catalog_kwargs(catalog_id))
            sd = new_sd
            result["added_columns"] = [n for n, _ in added]
            result["table_updated"] = True
        else:
            print(f"[openglue] updateBehavior LOG: table {what} keeps its schema; the data "
                  f"written has columns it lacks: {', '.join(n for n, _ in added) or '-'}"
                  + (f"; partition keys {', '.join(k['Name'] for k in new_keys)}"
                     if new_keys else ""), flush=True)

    # The partitions.
    if not table_keys:
        return result
    found: Dict[Tuple[str, ...], str] = {}
    for uri in written_uris or []:
        values = _partition_values_of(str(uri), location, table_keys)
        if values is None:
            continue
        folder = _join(location, *(f"{k}={_hive_escape(v)}" for k, v in zip(table_keys, values)))
        found.setdefault(tuple(values), folder)
    if not found:
        return result
    existing_values = set()
    wanted = list(found)
    for i in range(0, len(wanted), 1000):
        chunk = wanted[i:i + 1000]
        page = _call(f"partitions of {what}", client.batch_get_partition, DatabaseName=database,
                     TableName=table_name,
                     PartitionsToGet=[{"Values": list(v)} for v in chunk],
                     **_catalog_kwargs(catalog_id))
        for p in page.get("Partitions", []):
            existing_values.add(tuple(p.get("Values", [])))
    to_create = [v for v in wanted if v not in existing_values]
    for i in range(0, len(to_create), 100):
        chunk = to_create[i:i + 100]
        inputs = []
        for values in chunk:
            part_sd = dict(sd)
            part_sd["Location"] = found[values]
            inputs.append({"Values": list(values), "StorageDescriptor": part_sd})
        response = _call(f"adding partitions to {what}", client.batch_create_partition,
                         DatabaseName=database, TableName=table_name,
                         PartitionInputList=inputs, **_catalog_kwargs(catalog_id))
        failed = set()
        for error in response.get("Errors", []):
            code = (error.get("ErrorDetail") or {}).get("ErrorCode", "")
            if code == "AlreadyExistsException":  # a concurrent writer added it: fine
                failed.add(tuple(error.get("PartitionValues", [])))
                continue
            raise CatalogError(f"adding partition {error.get('PartitionValues')} to {what}: "
                               f"{code}: {(error.get('ErrorDetail') or {}).get('ErrorMessage')}")
        result["created_partitions"].extend(list(v) for v in chunk if v not in failed)
    return result
