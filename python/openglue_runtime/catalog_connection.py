"""The Data Catalog itself as a source and a sink: the connection types AWS's own utilities use.

AWS's Hive metastore migration scripts (aws-glue-samples, utilities/Hive_metastore_migration)
read a database's entities as a DynamicFrame and write entities back through two connection
types that the developer guide does not list:

- source `com.amazonaws.services.glue.connections.DataCatalogConnection` with the connection
  options `catalog.database` (required: the database to read), `catalog.name` and
  `catalog.region` (`read_records`): one record per kind of entity, each holding a list of
  entities in `items`:

      {"type": "database", "items": [database]}
      {"type": "table", "database": db, "items": [table, ...]}               (100 per record)
      {"type": "partition", "database": db, "table": t, "items": [partition, ...]}  (100 per record)

  An entity has the field names of Glue's Java model (`name`, `locationUri`, `parameters`,
  `storageDescriptor.serdeInfo.serializationLibrary`, a partition's `namespaceName`,
  `tableName` and `values`, ...), as the scripts' DATACATALOG_*_SCHEMA spell them; times
  (`createTime`, `lastAccessTime`, `creationTime`) are epoch milliseconds as text, which the
  scripts' catalog-to-Hive conversion reads. A field the catalog does not have is null, so a
  round trip writes back exactly what was there. The frame's schema is FRAME_SCHEMA: `items` is
  one struct type holding the fields of all three kinds (each record fills its kind's).
- sink `catalog` with `catalog.name` and `catalog.region` (`write_records`): each record's
  `type` says what its `items` (or one entity in `item`) are; databases are created
  (CreateDatabase), tables in the record's `database` (CreateTable) and partitions of the
  record's `database`.`table` (BatchCreatePartition, 100 at a time). An entity that already
  exists is overwritten (UpdateDatabase, UpdateTable, BatchUpdatePartition), as AWS's import
  does. Times may be epoch milliseconds, Java's `MMM dd, yyyy hh:mm:ss a` (what the scripts'
  Hive conversion writes: "Apr 04, 2017 08:58:43 AM", UTC) or ISO 8601; a table's `createTime`
  and a partition's `creationTime` are the catalog's to set and are not written.

`catalog.region` names the region the Glue client signs for (the server answers any region);
`catalog.name` is accepted and not used: a server has one Data Catalog. Both directions run in
the job's driver through the server's Glue API (openglue_runtime.catalog.glue_client), on
either engine: the entities of a database are metadata, held in memory as the frame's rows.
"""
import calendar
import datetime
import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from openglue_runtime import types as gt
from openglue_runtime.catalog import CatalogError, _call, glue_client

SOURCE_NAME = "com.amazonaws.services.glue.connections.DataCatalogConnection"
SOURCE_TYPE = SOURCE_NAME.lower()
SINK_TYPE = "catalog"
ITEMS_PER_RECORD = 100  # also BatchCreatePartition's and BatchUpdatePartition's limit

# ---------------------------------------------------------------------------------------------
# The entities: (Glue API name, item name, kind). A kind is a scalar type name, "map" (string
# to string), "time" (a timestamp, as text in items), "strings" (a list of strings), a nested
# spec (a struct) or a one-element list of a spec (a list of structs).

_COLUMN = (("Name", "name", "string"), ("Type", "type", "string"),
           ("Comment", "comment", "string"))
_SERDE = (("Name", "name", "string"), ("SerializationLibrary", "serializationLibrary", "string"),
          ("Parameters", "parameters", "map"))
_SKEWED = (("SkewedColumnNames", "skewedColumnNames", "strings"),
           ("SkewedColumnValueLocationMaps", "skewedColumnValueLocationMaps", "map"),
           ("SkewedColumnValues", "skewedColumnValues", "strings"))
_SORT = (("Column", "column", "string"), ("SortOrder", "order", "int"))
_STORAGE = (("InputFormat", "inputFormat", "string"), ("Compressed", "compressed", "boolean"),
            ("StoredAsSubDirectories", "storedAsSubDirectories", "boolean"),
            ("Location", "location", "string"), ("NumberOfBuckets", "numberOfBuckets", "int"),
            ("OutputFormat", "outputFormat", "string"),
            ("BucketColumns", "bucketColumns", "strings"), ("Columns", "columns", [_COLUMN]),
            ("Parameters", "parameters", "map"), ("SerdeInfo", "serdeInfo", _SERDE),
            ("SkewedInfo", "skewedInfo", _SKEWED), ("SortColumns", "sortColumns", [_SORT]))
DATABASE = (("Name", "name", "string"), ("Description", "description", "string"),
            ("LocationUri", "locationUri", "string"), ("Parameters", "parameters", "map"))
TABLE = (("Name", "name", "string"), ("Description", "description", "string"),
         ("Owner", "owner", "string"), ("CreateTime", "createTime", "time"),
         ("LastAccessTime", "lastAccessTime", "time"), ("Retention", "retention", "int"),
         ("TableType", "tableType", "string"),
         ("ViewExpandedText", "viewExpandedText", "string"),
         ("ViewOriginalText", "viewOriginalText", "string"), ("Parameters", "parameters", "map"),
         ("PartitionKeys", "partitionKeys", [_COLUMN]),
         ("StorageDescriptor", "storageDescriptor", _STORAGE))
PARTITION = (("CreationTime", "creationTime", "time"),
             ("LastAccessTime", "lastAccessTime", "time"),
             ("DatabaseName", "namespaceName", "string"), ("TableName", "tableName", "string"),
             ("Parameters", "parameters", "map"),
             ("StorageDescriptor", "storageDescriptor", _STORAGE),
             ("Values", "values", "strings"))
# What CreateX/UpdateX take of each kind (the Input shapes of the botocore model).
_NOT_INPUT = {"database": set(), "table": {"CreateTime"},
              "partition": {"CreationTime", "DatabaseName", "TableName"}}
_KINDS = {"database": DATABASE, "table": TABLE, "partition": PARTITION}

_SCALARS = {"string": gt.StringType, "int": gt.IntegerType, "boolean": gt.BooleanType,
            "time": gt.StringType}


def _glue_type(kind) -> gt.DataType:
    if isinstance(kind, list):
        return gt.ArrayType(_glue_type(kind[0]))
    if isinstance(kind, tuple):
        return gt.StructType([gt.Field(name, _glue_type(k)) for _, name, k in kind])
    if kind == "map":
        return gt.MapType(gt.StringType())
    if kind == "strings":
        return gt.ArrayType(gt.StringType())
    return _SCALARS[kind]()


def _item_type() -> gt.StructType:
    """One struct with the fields of every kind, in order of first appearance."""
    fields: Dict[str, gt.Field] = {}
    for spec in (DATABASE, TABLE, PARTITION):
        for _, name, kind in spec:
            fields.setdefault(name, gt.Field(name, _glue_type(kind)))
    return gt.StructType(list(fields.values()))


FRAME_SCHEMA = gt.StructType([
    gt.Field("type", gt.StringType()), gt.Field("database", gt.StringType()),
    gt.Field("table", gt.StringType()), gt.Field("items", gt.ArrayType(_item_type()))])


def is_source(connection_type: str) -> bool:
    return (connection_type or "").lower() == SOURCE_TYPE


def is_sink(connection_type: str) -> bool:
    return (connection_type or "").lower() == SINK_TYPE


# ---------------------------------------------------------------------------------------------
# Times

_JAVA_DATE = re.compile(r"^([A-Za-z]{3})\s+(\d{1,2}),\s*(\d{4})\s+(\d{1,2}):(\d{2}):(\d{2})\s*"
                        r"([AaPp][Mm])$")
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m}


def time_text(value: Any) -> Optional[str]:
    """A catalog timestamp (boto3's datetime) as epoch milliseconds in text."""
    if value is None:
        return None
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return str(int(round(value.timestamp() * 1000)))
    return str(value)


def parse_time(text: Any, what: str) -> Optional[datetime.datetime]:
    """An item's time as a UTC datetime: epoch milliseconds, Java's "MMM dd, yyyy hh:mm:ss a"
    (UTC), or ISO 8601; None for null, "" and "{}" (no time). Raises ValueError naming `what`
    for anything else."""
    if text is None:
        return None
    if isinstance(text, datetime.datetime):
        return text if text.tzinfo else text.replace(tzinfo=datetime.timezone.utc)
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return datetime.datetime.fromtimestamp(text / 1000.0, datetime.timezone.utc)
    s = str(text).strip()
    if s in ("", "{}"):
        return None
    if re.fullmatch(r"-?\d+", s):
        return datetime.datetime.fromtimestamp(int(s) / 1000.0, datetime.timezone.utc)
    m = _JAVA_DATE.match(s)
    if m and m.group(1).lower() in _MONTHS:
        hour = int(m.group(4)) % 12 + (12 if m.group(7).lower() == "pm" else 0)
        return datetime.datetime(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2)),
                                 hour, int(m.group(5)), int(m.group(6)),
                                 tzinfo=datetime.timezone.utc)
    try:
        parsed = datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError("{}: {!r} is not a time (epoch milliseconds, \"Apr 04, 2017 08:58:43 "
                         "AM\" or ISO 8601)".format(what, s)) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)


# ---------------------------------------------------------------------------------------------
# Glue API entity <-> item

def to_item(entity: Optional[Dict[str, Any]], spec) -> Optional[Dict[str, Any]]:
    """A GetDatabase/GetTable/GetPartitions entity as an item of `spec` (null where absent)."""
    if entity is None:
        return None
    item: Dict[str, Any] = {}
    for api, name, kind in spec:
        value = entity.get(api)
        if value is None:
            item[name] = None
        elif isinstance(kind, list):
            item[name] = [to_item(v, kind[0]) for v in value]
        elif isinstance(kind, tuple):
            item[name] = to_item(value, kind)
        elif kind == "time":
            item[name] = time_text(value)
        elif kind == "map":
            item[name] = {str(k): None if v is None else str(v) for k, v in value.items()}
        else:
            item[name] = value
    return item


def _pairs(value) -> Dict[str, Any]:
    """A map as it comes out of a frame (a dict, or Arrow's list of (key, value) pairs)."""
    if isinstance(value, dict):
        return dict(value)
    return {k: v for k, v in value}


def to_input(item: Optional[Dict[str, Any]], spec, what: str,
             skip: Iterable[str] = ()) -> Optional[Dict[str, Any]]:
    """An item of `spec` as the Glue API's XInput (nulls left out, `skip` fields not given)."""
    if item is None:
        return None
    skip = set(skip)
    out: Dict[str, Any] = {}
    for api, name, kind in spec:
        value = item.get(name)
        if value is None or api in skip:
            continue
        if isinstance(kind, list):
            out[api] = [to_input(v, kind[0], what) for v in value if v is not None]
        elif isinstance(kind, tuple):
            nested = to_input(value, kind, what)
            if nested:
                out[api] = nested
        elif kind == "time":
            when = parse_time(value, "{}: {}".format(what, name))
            if when is not None:
                out[api] = when
        elif kind == "map":
            # A null value is a key the entity lacks (a map read back from JSON as a struct
            # has every key of every entity).
            out[api] = {str(k): str(v) for k, v in _pairs(value).items() if v is not None}
        elif kind == "strings":
            out[api] = [str(v) for v in value if v is not None]
        elif kind == "int":
            out[api] = int(value)
        elif kind == "boolean":
            out[api] = value.strip().lower() == "true" if isinstance(value, str) else bool(value)
        else:
            out[api] = str(value)
    return out


# ---------------------------------------------------------------------------------------------
# The source

def _client(options: Dict[str, Any]):
    return glue_client(region=str(options.get("catalog.region") or "") or None)


def _pages(what: str, fn, key: str, **kwargs) -> List[Dict[str, Any]]:
    found: List[Dict[str, Any]] = []
    while True:
        page = _call(what, fn, **kwargs)
        found.extend(page.get(key, []))
        token = page.get("NextToken")
        if not token:
            return found
        kwargs["NextToken"] = token


def _chunks(items: Sequence[Any], n: int = ITEMS_PER_RECORD):
    for i in range(0, len(items), n):
        yield items[i:i + n]


def read_records(connection_options: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The records of the DataCatalogConnection source for `catalog.database` (see the module's
    doc): the database, its tables, each table's partitions. Raises ValueError without
    `catalog.database`, CatalogError when the catalog refuses (an unknown database)."""
    options = dict(connection_options or {})
    database = str(options.get("catalog.database") or "").strip()
    if not database:
        raise ValueError("connection_type {!r} needs connection_options[\"catalog.database\"] "
                         "(the database to read)".format(SOURCE_NAME))
    client = _client(options)
    db = _call("database {}".format(database), client.get_database, Name=database)["Database"]
    records: List[Dict[str, Any]] = [{"type": "database", "database": None, "table": None,
                                      "items": [to_item(db, DATABASE)]}]
    tables = _pages("tables of {}".format(database), client.get_tables, "TableList",
                    DatabaseName=database)
    tables.sort(key=lambda t: t["Name"])
    for chunk in _chunks(tables):
        records.append({"type": "table", "database": database, "table": None,
                        "items": [to_item(t, TABLE) for t in chunk]})
    for table in tables:
        if not table.get("PartitionKeys"):
            continue
        partitions = _pages("partitions of {}.{}".format(database, table["Name"]),
                            client.get_partitions, "Partitions", DatabaseName=database,
                            TableName=table["Name"])
        partitions.sort(key=lambda p: list(p.get("Values") or []))
        for chunk in _chunks(partitions):
            records.append({"type": "partition", "database": database, "table": table["Name"],
                            "items": [to_item(p, PARTITION) for p in chunk]})
    return records


# ---------------------------------------------------------------------------------------------
# The sink

def _code(error) -> str:
    return error.response.get("Error", {}).get("Code", "")


def _create_or_update(what: str, create, update) -> str:
    """Runs `create()`; on AlreadyExistsException runs `update()`. Returns "created" or
    "updated"; other errors become CatalogError naming `what`."""
    import botocore.exceptions
    try:
        create()
        return "created"
    except botocore.exceptions.ClientError as e:
        if _code(e) != "AlreadyExistsException":
            error = e.response.get("Error", {})
            raise CatalogError("{}: {}: {}".format(what, _code(e), error.get("Message", e))) \
                from None
    _call(what, lambda: update())
    return "updated"


def _entities(record: Dict[str, Any]) -> List[Dict[str, Any]]:
    items = record.get("items")
    if items is None and record.get("item") is not None:
        items = [record["item"]]
    return [i for i in items or [] if i is not None]


def write_records(records: Iterable[Dict[str, Any]],
                  connection_options: Dict[str, Any]) -> Dict[str, int]:
    """Writes the records of a `catalog` sink (see the module's doc) into the catalog, in
    order. Returns counts {"databases", "tables", "partitions", "updated"}. Raises ValueError
    for a record that is not a database, table or partition or lacks what names its place,
    CatalogError when the catalog refuses one (a table of a database that does not exist)."""
    client = _client(dict(connection_options or {}))
    counts = {"databases": 0, "tables": 0, "partitions": 0, "updated": 0}
    for record in records:
        kind = str(record.get("type") or "").lower()
        items = _entities(record)
        if kind == "database":
            for item in items:
                name = item.get("name")
                what = "database {}".format(name)
                db_input = to_input(item, DATABASE, what)
                if not name:
                    raise ValueError("catalog sink: a database item without a name")
                done = _create_or_update(
                    "creating " + what,
                    lambda: client.create_database(DatabaseInput=db_input),
                    lambda: client.update_database(Name=name, DatabaseInput=db_input))
                counts["databases"] += 1
                counts["updated"] += done == "updated"
        elif kind == "table":
            database = record.get("database")
            for item in items:
                name = item.get("name")
                if not database or not name:
                    raise ValueError("catalog sink: a table record needs \"database\" and each "
                                     "item a \"name\" (got {!r}, {!r})".format(database, name))
                what = "table {}.{}".format(database, name)
                table_input = to_input(item, TABLE, what, _NOT_INPUT["table"])
                done = _create_or_update(
                    "creating " + what,
                    lambda: client.create_table(DatabaseName=database, TableInput=table_input),
                    lambda: client.update_table(DatabaseName=database, TableInput=table_input))
                counts["tables"] += 1
                counts["updated"] += done == "updated"
        elif kind == "partition":
            counts["updated"] += _write_partitions(client, record, items)
            counts["partitions"] += len(items)
        else:
            raise ValueError("catalog sink: record type {!r} is not database, table or "
                             "partition".format(record.get("type")))
    return counts


def _write_partitions(client, record: Dict[str, Any], items: List[Dict[str, Any]]) -> int:
    """Creates a record's partitions, updating those that exist; returns how many were
    updated."""
    by_table: Dict[Tuple[str, str], List[Dict[str, Any]]] = {}
    for item in items:
        database = record.get("database") or item.get("namespaceName")
        table = record.get("table") or item.get("tableName")
        if not database or not table:
            raise ValueError("catalog sink: a partition needs its database and table (the "
                             "record's \"database\" and \"table\")")
        by_table.setdefault((database, table), []).append(item)
    updated = 0
    for (database, table), parts in by_table.items():
        what = "partitions of {}.{}".format(database, table)
        inputs = [to_input(p, PARTITION, what, _NOT_INPUT["partition"]) for p in parts]
        for chunk in _chunks(inputs):
            response = _call("adding " + what, client.batch_create_partition,
                             DatabaseName=database, TableName=table, PartitionInputList=chunk)
            existing = []
            by_values = {tuple(p.get("Values") or []): p for p in chunk}
            for error in response.get("Errors", []):
                detail = error.get("ErrorDetail") or {}
                values = tuple(error.get("PartitionValues") or [])
                if detail.get("ErrorCode") == "AlreadyExistsException" and values in by_values:
                    existing.append(by_values[values])
                    continue
                raise CatalogError("adding partition {} to {}.{}: {}: {}".format(
                    list(values), database, table, detail.get("ErrorCode"),
                    detail.get("ErrorMessage")))
            if not existing:
                continue
            response = _call("updating " + what, client.batch_update_partition,
                             DatabaseName=database, TableName=table, Entries=[
                                 {"PartitionValueList": p["Values"], "PartitionInput": p}
                                 for p in existing])
            for error in response.get("Errors", []):
                detail = error.get("ErrorDetail") or {}
                raise CatalogError("updating partition {} of {}.{}: {}: {}".format(
                    error.get("PartitionValueList"), database, table, detail.get("ErrorCode"),
                    detail.get("ErrorMessage")))
            updated += len(existing)
    return updated


def _dedupe_type(t):
    """`t` without repeated struct field names (the first of each name is kept)."""
    import pyarrow as pa
    if pa.types.is_struct(t):
        seen, fields = set(), []
        for f in t:
            if f.name not in seen:
                seen.add(f.name)
                fields.append(pa.field(f.name, _dedupe_type(f.type)))
        return pa.struct(fields)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_dedupe_type(t.value_type))
    return t


def _dedupe(arr):
    import pyarrow as pa
    t = arr.type
    if pa.types.is_struct(t):
        seen, kids, fields = set(), [], []
        for i in range(t.num_fields):
            f = t.field(i)
            if f.name in seen:
                continue
            seen.add(f.name)
            kid = _dedupe(arr.field(i))
            kids.append(kid)
            fields.append(pa.field(f.name, kid.type))
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(kids, fields=fields, mask=mask)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        values = _dedupe(arr.flatten())
        offsets = arr.offsets
        start = offsets[0].as_py() if len(offsets) else 0
        if start:
            import pyarrow.compute as pc
            offsets = pc.subtract(offsets, pa.scalar(start, offsets.type))
        return pa.ListArray.from_arrays(offsets, values, mask=arr.is_null()
                                        if arr.null_count else None)
    return arr


def table_records(table) -> List[Dict[str, Any]]:
    """A frame's rows (an Arrow table) as records. A struct that repeats a field name (the
    scripts' `--database-prefix` import builds partition items with `creationTime` twice) keeps
    the first of each name."""
    import pyarrow as pa
    columns, names = [], []
    for name, column in zip(table.column_names, table.columns):
        if name in names:
            continue
        if _dedupe_type(column.type) != column.type:
            column = pa.chunked_array([_dedupe(c) for c in column.chunks],
                                      type=_dedupe_type(column.type))
        names.append(name)
        columns.append(column)
    return pa.Table.from_arrays(columns, names=names).to_pylist()
