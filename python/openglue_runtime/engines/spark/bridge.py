"""The bridge between DynamicFrames (the embedded engine) and Spark DataFrames (the Spark
engine), in both directions through Arrow.

- `to_spark(frame)` (`DynamicFrame.toDF()`): the frame's rows as an Arrow table, written as
  Parquet under the run's temporary folder and read by Spark, so every type keeps its exact
  Spark type: byte/short/int/long, float/double, decimal(p,s), string, boolean, date, timestamp,
  binary, arrays, structs, maps. A choice column becomes a struct with one field per member
  type, named by the type (`struct<int:int,string:string>`), as Glue's toDF() and
  resolveChoice's make_struct do; a column that is null everywhere becomes a string column.
- `from_spark(df)` (`DynamicFrame.fromDF()`): the DataFrame's rows collected through Arrow
  (`_collect_as_arrow`) as the Arrow table a frame on the embedded engine is made from.
  Timestamps come back as UTC wall-clock values, as the embedded engine keeps them.

Limits (docs/engines.md): both directions pass through the driver (toDF writes the frame from
the driver, fromDF collects the DataFrame to it), so a frame must fit the driver's memory, as
it must on the embedded engine; toDF's files are local to the driver's machine, which local
mode and a cluster on the same machine can read (a remote cluster needs a shared TMPDIR).
"""
import itertools
import os
import tempfile
import threading
from openglue_runtime import types as gt

_counter = itertools.count(1)
_lock = threading.Lock()


class BridgeError(TypeError):
    """A value that cannot cross between a DynamicFrame and a Spark DataFrame."""


def _has_choice(dt: gt.DataType) -> bool:
    if isinstance(dt, gt.ChoiceType):
        return True
    if isinstance(dt, gt.StructType):
        return any(_has_choice(f.dataType) for f in dt.fields)
    if isinstance(dt, gt.ArrayType):
        return _has_choice(dt.elementType)
    if isinstance(dt, gt.MapType):
        return _has_choice(dt.valueType)
    return False


def _spark_ready_type(t, path: str):
    """The Arrow type Spark reads faithfully for `t`: naive timestamps as UTC instants, null
    as string; unions (unresolved choices) are refused."""
    import pyarrow as pa
    if pa.types.is_null(t):
        return pa.string()
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_time(t):
        raise BridgeError("column {} has type {}: Spark has no time-of-day type; cast it to a "
                          "string first".format(path, t))
    if pa.types.is_union(t):
        raise BridgeError("column {} is a choice that cannot be made a struct; resolve it with "
                          "resolveChoice before toDF()".format(path))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _spark_ready_type(f.type, path + "." + f.name))
                          for f in t])
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        return pa.list_(_spark_ready_type(t.value_type, path + "[]"))
    if pa.types.is_map(t):
        return pa.map_(_spark_ready_type(t.key_type, path + ".key"),
                       _spark_ready_type(t.item_type, path + ".value"))
    if pa.types.is_dictionary(t):
        return _spark_ready_type(t.value_type, path)
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_unsigned_integer(t):
        widths = {8: pa.int16(), 16: pa.int32(), 32: pa.int64()}
        if t.bit_width not in widths:
            raise BridgeError("column {} has type {}: Spark has no unsigned 64-bit type"
                              .format(path, t))
        return widths[t.bit_width]
    return t


def spark_ready(table):
    """`table` with every column of a type Spark reads from Parquet as the Glue type says."""
    import pyarrow as pa
    fields = [pa.field(f.name, _spark_ready_type(f.type, f.name)) for f in table.schema]
    target = pa.schema(fields)
    if target.equals(table.schema):
        return table
    return table.cast(target)


def _scratch_dir() -> str:
    base = os.environ.get("TMPDIR") or tempfile.gettempdir()
    path = os.path.join(base, "openglue-todf")
    os.makedirs(path, exist_ok=True)
    return path


def to_spark(frame, spark):
    """`frame` (a DynamicFrame) as a Spark DataFrame of `spark` (a SparkSession)."""
    import pyarrow.parquet as pq
    if _has_choice(frame.schema()):
        frame = frame.resolveChoice(choice="make_struct")
    table = spark_ready(frame.to_arrow())
    with _lock:
        n = next(_counter)
    path = os.path.join(_scratch_dir(), "{}-{}.parquet".format(os.getpid(), n))
    pq.write_table(table, path)
    return spark.read.parquet("file://" + path)


def _from_spark_type(t):
    """Arrow types as the embedded engine keeps them: timestamps naive (UTC wall clock)."""
    import pyarrow as pa
    if pa.types.is_timestamp(t):
        return pa.timestamp(t.unit)
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _from_spark_type(f.type)) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_from_spark_type(t.value_type))
    if pa.types.is_map(t):
        return pa.map_(_from_spark_type(t.key_type), _from_spark_type(t.item_type))
    return t


def _repeats(dt) -> bool:
    """Whether a struct inside the Spark type `dt` repeats a field name."""
    from pyspark.sql import types as st
    if isinstance(dt, st.ArrayType):
        return _repeats(dt.elementType)
    if isinstance(dt, st.MapType):
        return _repeats(dt.valueType)
    if isinstance(dt, st.StructType):
        names = [f.name for f in dt.fields]
        return len(set(names)) != len(names) or any(_repeats(f.dataType) for f in dt.fields)
    return False


def _first_fields(column, dt):
    """`column`, of the Spark type `dt` (for which _repeats holds), with every struct inside
    keeping the first field of each name. A struct is cast (by position, as Spark casts
    structs) to names that do not repeat, then rebuilt from the fields it keeps."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as st
    if isinstance(dt, st.ArrayType):
        return F.transform(column, lambda x: _first_fields(x, dt.elementType))
    if isinstance(dt, st.MapType):
        return F.transform_values(column, lambda _, v: _first_fields(v, dt.valueType))
    seen, renamed, kept = set(), [], []
    for i, f in enumerate(dt.fields):
        if f.name in seen:
            renamed.append(st.StructField("_openglue_repeated_{}".format(i), f.dataType))
            continue
        seen.add(f.name)
        kept.append(f)
        renamed.append(st.StructField(f.name, f.dataType, f.nullable))
    positional = column.cast(st.StructType(renamed))
    fields = [(_first_fields(positional[f.name], f.dataType) if _repeats(f.dataType)
               else positional[f.name]).alias(f.name) for f in kept]
    return F.when(column.isNull(), F.lit(None)).otherwise(F.struct(*fields))


def unique_struct_fields(df):
    """`df` with structs that repeat a field name keeping the first of each name
    (`DynamicFrame.fromDF`: a record has one field per name, and Arrow, which the frames'
    rows cross, refuses repeated names); `df` itself when no struct repeats one."""
    if not any(_repeats(f.dataType) for f in df.schema.fields):
        return df
    return df.select(*[_first_fields(df[f.name], f.dataType).alias(f.name)
                       if _repeats(f.dataType) else df[f.name] for f in df.schema.fields])


def from_spark(df):
    """The rows of `df` (a Spark DataFrame) as an Arrow table with the embedded engine's types."""
    import pyarrow as pa
    try:
        from pyspark.sql.pandas.types import to_arrow_schema
        schema = to_arrow_schema(df.schema)
    except (TypeError, ValueError, ImportError) as e:
        raise BridgeError("DynamicFrame.fromDF(): the DataFrame's schema {} cannot be converted: "
                          "{}".format(df.schema.simpleString(), e)) from e
    batches = df._collect_as_arrow()
    table = pa.Table.from_batches(batches) if batches else schema.empty_table()
    target = pa.schema([pa.field(f.name, _from_spark_type(f.type)) for f in table.schema])
    if not target.equals(table.schema):
        # Spark's instants -> UTC wall-clock values (the cast drops the zone, keeping UTC).
        table = table.cast(target)
    return table
