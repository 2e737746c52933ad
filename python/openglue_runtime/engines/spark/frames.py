"""SparkEngine: DynamicFrames over Spark DataFrames (the Spark engine's native frames).

The engine boundary of openglue_runtime/engines/embedded/engine.py, implemented so that a DynamicFrame's rows
live in a Spark DataFrame and every step runs in Spark tasks, on the executors: nothing passes
through the driver but schemas, file lists and error records.

How: a plan is a DataFrame *base* plus the streamable steps that follow it. When Spark needs the
rows, the steps are fused into one `mapInArrow` function, and that function runs the embedded
engine's own step code (openglue_runtime/engines/embedded/ops.py) on each Arrow batch inside the executor's
Python worker. So a frame gives the same rows and types on both engines by construction, and
read -> apply_mapping -> write is one Python pass per task:

- file sources: one task per file (or group of small files); each task runs the embedded
  reader on its files. Without a declared schema (S3 paths; catalog tables without columns)
  a first Spark job infers each part's schema on the executors and the driver merges them as
  the embedded engine does (disagreeing types become choices);
- streamable steps (apply_mapping, select/drop/rename, resolveChoice, unnest, filter,
  split_rows): fused into the task;
- steps whose output type depends on all rows (map, unbox, drop_null_fields): a task pass
  that keeps each partition's result and its schema, the driver merges the schemas, a second
  pass conforms the kept results (the script's function runs once per record);
- join, union, mergeDynamicFrame, repartition: Spark's own join, union and exchange;
- sinks: each task writes its part of the rows with the embedded writer (`part-N-<uuid>` names
  never collide) and returns the files it wrote.
- relationalize, a spigot with `prob`, and JDBC sources still collect through the driver
  (docs/engines.md).

Types in the DataFrame: every Glue type is its Spark type, except a choice (an Arrow dense
union), kept as a struct with one field per member (at most one set per row, as Glue's
make_struct), and a timestamp, kept as TIMESTAMP_NTZ (the embedded engine's wall-clock value).
`toDF()` gives the script Spark's own types: TIMESTAMP (the value read as UTC) and the choice
structs as they are, which is what Glue's toDF gives.

Error records of filter/map (and thresholds) come back to the driver through an accumulator
per step, keyed by partition, so that recomputing a partition never counts its errors twice.
"""
import io
import itertools
import os
from typing import Dict, List, Optional, Sequence, Tuple

import pyarrow as pa

from openglue_runtime import types as gt
from openglue_runtime.engines.embedded import native, ops, pyformats
from openglue_runtime.engines.embedded.engine import (TRANSFORMS, _check_format, _collecting,
                                                      glue_table)
from openglue_runtime.engines.embedded.paths import join_path, parse_path
from openglue_runtime.engines.embedded.plan import (Op, ScanSource, _conform_records,
                                                    check_thresholds, conform_batch,
                                                    read_schema_with_partitions)
from openglue_runtime.engines.embedded.records import (empty_batch, merge_types, null_array,
                                                       records_to_table)

MAX_FILE_TASKS = 2000      # more files than this are grouped, so a scan never has more tasks
ERRORS_KEPT = 1000         # error records kept per step and partition (all are counted)

_ids = itertools.count(1)


# ---------------------------------------------------------------- Arrow <-> Spark encoding


def spark_arrow_type(at: pa.DataType, for_df: bool = False) -> pa.DataType:
    """The Arrow type a frame's column has inside Spark (`for_df`: as toDF gives it)."""
    t = pa.types
    if t.is_union(at):
        return pa.struct([pa.field(at.field(i).name, spark_arrow_type(at.field(i).type, for_df))
                          for i in range(at.num_fields)])
    if t.is_null(at):
        return pa.string()
    if t.is_timestamp(at):
        return pa.timestamp("us", tz="UTC") if for_df else pa.timestamp("us")
    if t.is_struct(at):
        return pa.struct([pa.field(at.field(i).name, spark_arrow_type(at.field(i).type, for_df))
                          for i in range(at.num_fields)])
    if t.is_list(at) or t.is_large_list(at):
        return pa.list_(spark_arrow_type(at.value_type, for_df))
    if t.is_map(at):
        return pa.map_(spark_arrow_type(at.key_type, for_df), spark_arrow_type(at.item_type, for_df))
    return at


def _spark_type(at: pa.DataType):
    """The Spark SQL type of an Arrow type produced by spark_arrow_type."""
    from pyspark.sql import types as st
    t = pa.types
    simple = [(t.is_boolean, st.BooleanType), (t.is_int8, st.ByteType), (t.is_int16, st.ShortType),
              (t.is_int32, st.IntegerType), (t.is_int64, st.LongType), (t.is_float32, st.FloatType),
              (t.is_float64, st.DoubleType), (t.is_string, st.StringType),
              (t.is_binary, st.BinaryType), (t.is_date32, st.DateType)]
    for test, cls in simple:
        if test(at):
            return cls()
    if t.is_decimal(at):
        return st.DecimalType(at.precision, at.scale)
    if t.is_timestamp(at):
        return st.TimestampType() if at.tz else st.TimestampNTZType()
    if t.is_struct(at):
        return st.StructType([st.StructField(at.field(i).name, _spark_type(at.field(i).type))
                              for i in range(at.num_fields)])
    if t.is_list(at):
        return st.ArrayType(_spark_type(at.value_type))
    if t.is_map(at):
        return st.MapType(_spark_type(at.key_type), _spark_type(at.item_type))
    raise TypeError("no Spark type for Arrow type {}".format(at))


def spark_schema(schema: pa.Schema, for_df: bool = False):
    from pyspark.sql import types as st
    return st.StructType([st.StructField(f.name, _spark_type(spark_arrow_type(f.type, for_df)))
                          for f in schema])


def glue_arrow_type_of_spark(dt) -> pa.DataType:
    """The frame type (Arrow, as the embedded engine keeps it) of a Spark SQL type."""
    from pyspark.sql import types as st
    table = [(st.BooleanType, pa.bool_()), (st.ByteType, pa.int8()), (st.ShortType, pa.int16()),
             (st.IntegerType, pa.int32()), (st.LongType, pa.int64()), (st.FloatType, pa.float32()),
             (st.DoubleType, pa.float64()), (st.StringType, pa.string()),
             (st.BinaryType, pa.binary()), (st.DateType, pa.date32()),
             (st.TimestampType, pa.timestamp("us")), (st.TimestampNTZType, pa.timestamp("us")),
             (st.NullType, pa.null())]
    for cls, at in table:
        if isinstance(dt, cls):
            return at
    if isinstance(dt, (st.CharType, st.VarcharType)):
        return pa.string()
    if isinstance(dt, st.DecimalType):
        return pa.decimal128(dt.precision, dt.scale)
    if isinstance(dt, st.StructType):
        return pa.struct([pa.field(f.name, glue_arrow_type_of_spark(f.dataType)) for f in dt.fields])
    if isinstance(dt, st.ArrayType):
        return pa.list_(glue_arrow_type_of_spark(dt.elementType))
    if isinstance(dt, st.MapType):
        return pa.map_(glue_arrow_type_of_spark(dt.keyType), glue_arrow_type_of_spark(dt.valueType))
    raise TypeError("Spark type {} has no DynamicFrame equivalent".format(dt.simpleString()))


def encode(arr, at: pa.DataType, for_df: bool = False):
    """A frame column (`at`, the frame's type) as Spark keeps it."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = pa.types
    target = spark_arrow_type(at, for_df)
    if arr.type == target:
        return arr
    if t.is_union(at):
        import pyarrow.compute as pc
        codes, offsets = _union_codes_offsets(arr)
        kids = []
        for i in range(at.num_fields):
            child = encode(arr.field(i), at.field(i).type, for_df)
            idx = pc.if_else(pc.equal(codes, pa.scalar(at.type_codes[i], pa.int8())), offsets,
                             pa.scalar(None, pa.int32()))
            kids.append(child.take(idx))
        # A null choice (its value null in whichever member) is a null struct.
        valid = None
        for k in kids:
            valid = k.is_valid() if valid is None else pc.or_(valid, k.is_valid())
        mask = pc.invert(valid) if valid is not None and not pc.all(valid).as_py() else None
        return pa.StructArray.from_arrays(kids, fields=list(target), mask=mask)
    if t.is_null(at):
        return pa.nulls(len(arr), pa.string())
    if t.is_timestamp(at):
        return arr.cast(target)
    if t.is_struct(at):
        kids = [encode(arr.field(i), at.field(i).type, for_df) for i in range(at.num_fields)]
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(kids, fields=list(target), mask=mask)
    if t.is_list(at):
        return pa.ListArray.from_arrays(_offsets(arr), encode(arr.flatten(), at.value_type, for_df),
                                        type=target, mask=arr.is_null() if arr.null_count else None)
    if t.is_map(at):
        return pa.MapArray.from_arrays(_offsets(arr), encode(arr.keys, at.key_type, for_df),
                                       encode(arr.items, at.item_type, for_df), type=target,
                                       mask=arr.is_null() if arr.null_count else None)
    return arr.cast(target)


def _union_codes_offsets(arr):
    """A dense union's type codes and value offsets for its own rows, read from its buffers
    (pyarrow's `type_codes` and `offsets` ignore a slice)."""
    n, start = len(arr), arr.offset
    bufs = arr.buffers()
    codes = pa.Array.from_buffers(pa.int8(), start + n, [None, bufs[1]]).slice(start, n)
    offsets = pa.Array.from_buffers(pa.int32(), start + n, [None, bufs[2]]).slice(start, n)
    return codes, offsets


def _offsets(arr):
    """A (possibly sliced) list or map array's offsets, starting at 0 like flatten()'s values."""
    import pyarrow.compute as pc
    offsets = arr.offsets
    first = offsets[0].as_py() if len(offsets) else 0
    return pc.subtract(offsets, pa.scalar(first, offsets.type)) if first else offsets


def decode(arr, at: pa.DataType):
    """A column as Spark gave it back as the frame type `at`."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = pa.types
    if arr.type == at:
        return arr
    if t.is_union(at):
        import pyarrow.compute as pc
        n = len(arr)
        kids = [decode(arr.field(i), at.field(i).type) for i in range(at.num_fields)]
        code = pa.nulls(n, pa.int8())
        for i in range(at.num_fields - 1, -1, -1):
            code = pc.if_else(kids[i].is_valid(), pa.scalar(i, pa.int8()), code)
        code = pc.fill_null(code, pa.scalar(0, pa.int8())).to_pylist()
        children, offsets = [], [0] * n
        for i in range(at.num_fields):
            rows = [r for r in range(n) if code[r] == i]
            for k, r in enumerate(rows):
                offsets[r] = k
            children.append(kids[i].take(pa.array(rows, pa.int64())) if rows else
                            kids[i].slice(0, 0))
        type_ids = pa.array([at.type_codes[c] for c in code], pa.int8())
        return pa.UnionArray.from_dense(type_ids, pa.array(offsets, pa.int32()), children,
                                        [at.field(i).name for i in range(at.num_fields)],
                                        list(at.type_codes))
    if t.is_null(at):
        return pa.nulls(len(arr), pa.null())
    if t.is_timestamp(at) and t.is_timestamp(arr.type):
        if arr.type.tz:
            arr = arr.cast(pa.timestamp(arr.type.unit, tz="UTC")).cast(pa.timestamp(arr.type.unit))
        return arr.cast(at)
    if t.is_struct(at):
        kids = []
        names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
        for i in range(at.num_fields):
            f = at.field(i)
            if f.name in names:
                kids.append(decode(arr.field(names.index(f.name)), f.type))
            else:
                kids.append(null_array(len(arr), f.type))
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(kids, fields=list(at), mask=mask)
    if t.is_list(at):
        return pa.ListArray.from_arrays(_offsets(arr), decode(arr.flatten(), at.value_type),
                                        type=at, mask=arr.is_null() if arr.null_count else None)
    if t.is_map(at):
        return pa.MapArray.from_arrays(_offsets(arr), decode(arr.keys, at.key_type),
                                       decode(arr.items, at.item_type), type=at,
                                       mask=arr.is_null() if arr.null_count else None)
    return arr.cast(at)


def encode_batch(batch: pa.RecordBatch, schema: pa.Schema, for_df: bool = False) -> pa.RecordBatch:
    target = pa.schema([pa.field(f.name, spark_arrow_type(f.type, for_df)) for f in schema])
    return pa.RecordBatch.from_arrays([encode(c, f.type, for_df)
                                       for c, f in zip(batch.columns, schema)], schema=target)


def decode_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    by_name = {n: i for i, n in enumerate(batch.schema.names)}
    cols = []
    for f in schema:
        i = by_name.get(f.name)
        cols.append(null_array(batch.num_rows, f.type) if i is None
                    else decode(batch.column(i), f.type))
    return pa.RecordBatch.from_arrays(cols, schema=schema)


# ---------------------------------------------------------------- error records


def _errors_param():
    from pyspark.accumulators import AccumulatorParam

    class PartitionErrors(AccumulatorParam):
        """{partition: (count, [records])}; a partition's later report replaces its earlier one."""

        def zero(self, value):
            return {}

        def addInPlace(self, a, b):
            a.update(b)
            return a
    return PartitionErrors()


class _ReadErrors(Op):
    """The read of a JSON source, as a step that only has error records (its malformed
    records); no threshold applies to it, as to Glue's reads."""
    name = "Read"
    can_error = True


class _Step:
    """An embedded op inside a Spark plan, with the accumulator its error records come back by."""

    def __init__(self, op, acc):
        self.op = op
        self.acc = acc
        self.ran = not op.can_error

    def errors(self) -> List[dict]:
        if self.acc is None:
            return []
        out: List[dict] = []
        for pid in sorted(self.acc.value):
            out.extend(self.acc.value[pid][1])
        return out

    def error_count(self) -> int:
        if self.acc is None:
            return 0
        return sum(c for c, _ in self.acc.value.values())


def _partition_id() -> int:
    from pyspark import TaskContext
    ctx = TaskContext.get()
    return ctx.partitionId() if ctx is not None else 0


def _run_ops(batches, steps_spec):
    """The fused streamable steps over frame batches (executor side). `steps_spec`: (op,
    accumulator, out schema) per step. Yields frame batches of the last schema."""
    op_list = [op for op, _, _ in steps_spec]
    for op in op_list:
        op.errors = []
    counts = [0] * len(op_list)
    kept: List[List[dict]] = [[] for _ in op_list]
    try:
        for b in batches:
            for i, (op, _, out_schema) in enumerate(steps_spec):
                b = conform_batch(op.batch(b), out_schema)
                if op.errors:
                    counts[i] += len(op.errors)
                    kept[i].extend(op.errors[:max(0, ERRORS_KEPT - len(kept[i]))])
                    op.errors = []
            yield b
    finally:
        pid = _partition_id()
        for i, (_, acc, _) in enumerate(steps_spec):
            if acc is not None:
                acc.add({pid: (counts[i], kept[i])})


# ---------------------------------------------------------------- bases


class _Base:
    """Where a plan's rows come from. `schema` is the frame schema of its rows."""
    listing: List[Tuple[str, int, int]] = []
    parents: Tuple["SparkPlan", ...] = ()
    own_steps: Tuple["_Step", ...] = ()   # a whole-partition step that made these rows

    def schema(self) -> pa.Schema:
        raise NotImplementedError

    def dataframe(self, steps_spec, out_schema: pa.Schema, tail=None, tail_schema=None):
        """The rows after `steps_spec`, as a DataFrame of Spark's encoding of `out_schema`, or
        with `tail` (a function of the frame batches, yielding Arrow batches of the Spark
        schema `tail_schema`) run at the end of the same task."""
        raise NotImplementedError


def _finish(frames, out_schema, tail, for_df=False):
    if tail is not None:
        return tail(frames)
    return (encode_batch(b, out_schema, for_df) for b in frames)


class _DataFrameBase(_Base):
    """Rows already in a DataFrame: Spark's encoding of `frame_schema`, or (`encoded` False)
    a script's DataFrame whose types decode into it."""

    def __init__(self, df, frame_schema: pa.Schema, parents=(), listing=(), encoded=True):
        self.df = df
        self._schema = frame_schema
        self.parents = tuple(parents)
        self.listing = list(listing)
        self.encoded = encoded

    def schema(self) -> pa.Schema:
        return self._schema

    def dataframe(self, steps_spec, out_schema, tail=None, tail_schema=None, for_df=False):
        if not steps_spec and tail is None and not for_df and self.encoded:
            return self.df
        in_schema = self._schema
        names = self.df.columns
        # mapInArrow resolves each column by name, and Spark's name parser takes dots apart: a
        # frame field such as `.links` (a join's second `links`) or `a.val.b` (relationalize)
        # would fail. The DataFrame goes in with positional names; its batches get theirs back.

        def fn(it):
            frames = (decode_batch(pa.RecordBatch.from_arrays(b.columns, names=names), in_schema)
                      for b in it)
            return _finish(_run_ops(frames, steps_spec), out_schema, tail, for_df)
        positional = self.df.toDF(*["c{}".format(i) for i in range(len(names))])
        return positional.mapInArrow(fn, tail_schema if tail is not None
                                     else spark_schema(out_schema, for_df))


class _LiteralBase(_Base):
    """A table made on the driver (from_arrow, from_records): its batches travel with the tasks."""

    def __init__(self, engine, table: pa.Table):
        self.engine = engine
        self.table = table
        self._payload: Optional[bytes] = None

    def payload(self) -> bytes:
        """The table as Arrow IPC bytes, serialized once however many times the rows are used."""
        if self._payload is None:
            self._payload = _ipc_bytes(self.table)
        return self._payload

    def schema(self) -> pa.Schema:
        return self.table.schema

    def dataframe(self, steps_spec, out_schema, tail=None, tail_schema=None, for_df=False):
        spark = self.engine.spark
        chunks = max(1, min(self.engine.parallelism(), (self.table.num_rows + 4095) // 4096))
        size = max(1, -(-self.table.num_rows // chunks))
        payload = self.payload()

        def fn(it):
            table = pa.ipc.open_stream(payload).read_all()
            for ids in it:
                for i in ids.column(0).to_pylist():
                    part = table.slice(i * size, size).to_batches()
                    yield from _finish(_run_ops(iter(part), steps_spec), out_schema,
                                       tail, for_df)
        return spark.range(0, chunks, 1, chunks).mapInArrow(
            fn, tail_schema if tail is not None else spark_schema(out_schema, for_df))


class _ScanBase(_Base):
    """Files read in Spark tasks by the embedded reader (`source`: the ScanSource the embedded
    engine would read)."""

    def __init__(self, engine, source: ScanSource):
        self.engine = engine
        self.source = source
        self.listing = list(source.listing)
        self.read_schema: Optional[pa.Schema] = None
        # A catalog CSV table's declared columns are typed per cell (ScanSource._typed_per_value)
        # by a first Spark job, as an undeclared schema is inferred.
        self._data_schema: Optional[pa.Schema] = (
            None if source._by_position() and source.text_typed_columns() is not None
            else source.declared)
        self._groups = self._split(source.parts)
        # A JSON source's malformed records (plan.ScanSource.errors) come back from the tasks
        # like a step's error records, so errorsCount and errorsAsDynamicFrame see them.
        if source.options.get("openglue.badRecords") == "collect":
            acc = engine.spark.sparkContext.accumulator({}, _errors_param())
            self.own_steps = (_Step(_ReadErrors(), acc),)

    @staticmethod
    def _split(parts):
        units = [([f], values) for files, values in parts for f in files]
        if len(units) <= MAX_FILE_TASKS:
            return [[u] for u in units]
        per = -(-len(units) // MAX_FILE_TASKS)
        return [units[i:i + per] for i in range(0, len(units), per)]

    def _tasks(self, fn, spark_type):
        n = max(1, len(self._groups))
        return self.engine.spark.range(0, n, 1, n).mapInArrow(fn, spark_type)

    def data_schema(self) -> pa.Schema:
        """The files' schema: declared, or inferred per file on the executors and merged on the
        driver in file order (a catalog CSV table's declared columns: their cells typed on the
        executors, ScanSource._typed_per_value)."""
        if self._data_schema is None:
            src, groups, store = self.source, self._groups, native.storage()
            positional = src.text_typed_columns() if src.declared is not None else None

            def infer(it):
                native.use_storage(store)
                for ids in it:
                    for i in ids.column(0).to_pylist():
                        for files, _ in groups[i]:
                            scan = pyformats.open_scan(files, src.fmt, src.options)
                            if positional is not None:
                                # The typed columns holding other cells.
                                lost = set(scan.text_losses(positional))
                                sch = pa.schema([f for f in positional if f.name in lost])
                            elif src._csv_strings():
                                # from_options CSV: every column a string.
                                sch = pa.schema([pa.field(n, pa.string())
                                                 for n in scan.raw_schema().names])
                            else:
                                sch = scan.schema()
                            yield pa.RecordBatch.from_pydict(
                                {"i": [i], "schema": [sch.serialize().to_pybytes()]})
            from pyspark.sql import types as st
            rows = self._tasks(infer, st.StructType([st.StructField("i", st.LongType()),
                                                     st.StructField("schema", st.BinaryType())]))
            got = sorted((r["i"], bytes(r["schema"])) for r in rows.collect())
            schemas = [pa.ipc.read_schema(pa.py_buffer(blob)) for _, blob in got]
            if positional is not None:
                self._data_schema = src.with_text_choices({n for s in schemas for n in s.names})
            else:
                merged: gt.DataType = gt.StructType([])
                for sch in schemas:
                    merged = merge_types(merged, gt.from_arrow_schema(sch))
                self._data_schema = gt.to_arrow_schema(merged)
        return self._data_schema

    def schema(self) -> pa.Schema:
        if self.read_schema is not None:
            return read_schema_with_partitions(self.source, self.read_schema)
        if not self.source.parts:
            return self.source.schema()
        data = self.data_schema()
        names = {n for n, _ in self.source.partition_columns}
        fields = [f for f in data if f.name not in names]
        fields += [pa.field(n, gt.to_arrow_type(t)) for n, t in self.source.partition_columns]
        return pa.schema(fields)

    def dataframe(self, steps_spec, out_schema, tail=None, tail_schema=None, for_df=False):
        src, groups, store = self.source, self._groups, native.storage()
        read_schema = self.read_schema
        declared = self.data_schema() if read_schema is None and src.parts else src.declared
        in_schema = self.schema()
        acc = self.own_steps[0].acc if self.own_steps else None

        def fn(it):
            native.use_storage(store)
            errors: List[dict] = []
            try:
                for ids in it:
                    for i in ids.column(0).to_pylist():
                        part = ScanSource(groups[i], src.fmt, src.options, [],
                                          src.partition_columns, declared)
                        _, batches = part.open(read_schema if read_schema is not None
                                               else in_schema)
                        yield from _finish(_run_ops(batches, steps_spec), out_schema,
                                           tail, for_df)
                        errors.extend(part.errors)
            finally:
                if acc is not None:
                    acc.add({_partition_id(): (len(errors), errors[:ERRORS_KEPT])})
        if not self._groups:
            return self.engine.empty_df(out_schema if tail is None else None, tail_schema, for_df)
        return self._tasks(fn, tail_schema if tail is not None else spark_schema(out_schema, for_df))


# ---------------------------------------------------------------- plans


class SparkPlan:
    """A base plus fused streamable steps. Immutable: a step returns a new plan."""

    def __init__(self, base: _Base, steps: Tuple[_Step, ...] = (),
                 schemas: Tuple[pa.Schema, ...] = ()):
        self.base = base
        self.steps = tuple(steps)
        self.schemas = tuple(schemas)   # the output schema after each step

    @property
    def schema(self) -> pa.Schema:
        return self.schemas[-1] if self.schemas else self.base.schema()

    def lineage(self) -> List[_Step]:
        """Every step this plan's rows went through, upstream plans' first."""
        seen, out = set(), []

        def walk(plan):
            for parent in plan.base.parents:
                walk(parent)
            for s in tuple(plan.base.own_steps) + plan.steps:
                if id(s) not in seen:
                    seen.add(id(s))
                    out.append(s)
        walk(self)
        return out

    def spec(self):
        return [(s.op, s.acc, sch) for s, sch in zip(self.steps, self.schemas)]

    def dataframe(self, for_df: bool = False):
        return self.base.dataframe(self.spec(), self.schema, for_df=for_df)

    def with_tail(self, tail, tail_schema):
        return self.base.dataframe(self.spec(), self.schema, tail, tail_schema)


class SparkEngine:
    """The engine methods of openglue_runtime/engines/embedded/engine.py over Spark (see the module doc)."""
    name = "spark"

    def __init__(self, spark_session):
        self._session_source = spark_session
        self._shipped = None

    @property
    def spark(self):
        s = self._session_source
        spark = s() if callable(s) else s
        if self._shipped is not spark.sparkContext:
            _ship_runtime(spark.sparkContext)
            self._shipped = spark.sparkContext
        return spark

    def parallelism(self) -> int:
        return max(1, self.spark.sparkContext.defaultParallelism)

    def empty_df(self, frame_schema: Optional[pa.Schema], spark_type=None, for_df=False):
        st = spark_type if spark_type is not None else spark_schema(frame_schema, for_df)
        return self.spark.createDataFrame([], st)

    def _step(self, op) -> _Step:
        acc = self.spark.sparkContext.accumulator({}, _errors_param()) if op.can_error else None
        return _Step(op, acc)

    def _materialized(self, df, schema: pa.Schema, parents, listing=()) -> SparkPlan:
        return SparkPlan(_DataFrameBase(df, schema, parents, listing))

    # ---------------------------------------------------------------- sources

    def from_arrow(self, table) -> SparkPlan:
        return SparkPlan(_LiteralBase(self, glue_table(table)))

    def from_records(self, records, schema: Optional[gt.StructType] = None) -> SparkPlan:
        return SparkPlan(_LiteralBase(self, records_to_table(list(records), schema)))

    def from_spark(self, df) -> SparkPlan:
        """A script's DataFrame as a frame (`DynamicFrame.fromDF`): no rows move."""
        try:
            schema = pa.schema([pa.field(f.name, glue_arrow_type_of_spark(f.dataType))
                                for f in df.schema.fields])
        except TypeError as e:
            raise TypeError("DynamicFrame.fromDF(): {}".format(e)) from e
        # The script's types (TIMESTAMP instants, CHAR...) become frame types in the tasks.
        return SparkPlan(_DataFrameBase(df, schema, encoded=False))

    def list_files(self, paths, connection_options):
        from openglue_runtime.engines.embedded.engine import EmbeddedEngine
        return EmbeddedEngine().list_files(paths, connection_options)

    def read_files(self, listing, fmt, format_options, connection_options) -> SparkPlan:
        fmt = _check_format(fmt)
        options = dict(format_options or {})
        if connection_options.get("compressionType") and "compressionType" not in options:
            options["compressionType"] = connection_options["compressionType"]
        if fmt == "csv":
            options["openglue.csvStrings"] = "true"  # every column a string, as on Glue
        files = [u for u, _, _ in listing]
        return SparkPlan(_ScanBase(self, ScanSource([(files, {})], fmt, _collecting(fmt, options),
                                                    listing)))

    def read_catalog(self, parts, listing, fmt, format_options, columns, partition_keys):
        from openglue_runtime.engines.embedded.engine import EmbeddedEngine
        embedded = EmbeddedEngine().read_catalog(parts, listing, fmt, format_options, columns,
                                                  partition_keys)
        return SparkPlan(_ScanBase(self, embedded.source))

    # ---------------------------------------------------------------- steps

    def transform(self, plan: SparkPlan, name: str, **args) -> SparkPlan:
        op = TRANSFORMS[name](**args)
        if name == "repartition":
            df = plan.dataframe().repartition(op.n)
            return self._materialized(df, plan.schema, [plan], plan.base.listing)
        if name == "join":
            return self._join(plan, op)
        if name == "union":
            return self._union(plan, [o.frame._plan for o in op.others], op)
        if name == "merge":
            return self._merge(plan, op)
        if name == "spigot":
            return self._spigot(plan, op)
        if name == "drop_null_fields":
            return self._drop_null_fields(plan, op)
        if not op.streamable:
            return self._whole_partition(plan, op)
        return self._then(plan, op)

    def _then(self, plan: SparkPlan, op) -> SparkPlan:
        base = plan.base
        if (not plan.steps and isinstance(base, _ScanBase) and base.read_schema is None
                and op.read_schema() is not None):
            # As the embedded engine does: an apply_mapping naming every source type reads the
            # files conformed to those types, without an inference pass.
            scan = _ScanBase(self, base.source)
            scan.read_schema = op.read_schema()
            base = scan
            plan = SparkPlan(base)
        out_schema = op.batch(empty_batch(plan.schema)).schema
        op.errors = []
        return SparkPlan(base, plan.steps + (self._step(op),), plan.schemas + (out_schema,))

    def split_rows(self, plan: SparkPlan, comparisons, **kw):
        return (self._then(plan, ops.SplitRowsOp(comparisons, True, **kw)),
                self._then(plan, ops.SplitRowsOp(comparisons, False, **kw)))

    def relationalize(self, plan: SparkPlan, root_name: str) -> Dict[str, SparkPlan]:
        # Driver-bound (docs/engines.md): the ids joining the tables are numbered over all rows.
        tables = ops.relationalize(self.to_arrow(plan), root_name)
        return {name: self.from_arrow(t) for name, t in tables.items()}

    def _whole_partition(self, plan: SparkPlan, op) -> SparkPlan:
        """map, unbox: the op over each partition's rows; its output schema merged over all
        partitions; each partition's kept result conformed to it."""
        step = self._step(op)
        in_schema = plan.schema

        def first(frames):
            table = pa.Table.from_batches(list(frames), schema=in_schema)
            op.errors = []
            out = op.table(table)
            pid = _partition_id()
            if step.acc is not None:
                step.acc.add({pid: (len(op.errors), op.errors[:ERRORS_KEPT])})
            yield _kept_part(pid, out)
        kept, parts = _keep_parts(plan.with_tail(first, _kept_parts_type()))
        step.ran = True
        merged: gt.DataType = gt.StructType([])
        # Partitions without rows say nothing about the types (an empty unbox keeps its
        # string), unless no partition has rows: then the first one's schema, as the op gives
        # for no rows on the embedded engine.
        for _, _, schema in [p for p in parts if p[1]] or parts[:1]:
            merged = merge_types(merged, gt.from_arrow_schema(schema))
        out_schema = gt.to_arrow_schema(merged)

        def conform(t):
            return _conform_records(t, merged, out_schema)
        df = _kept_rows(kept, out_schema, conform)
        result = self._materialized(df, out_schema, [plan], plan.base.listing)
        result.base.own_steps = (step,)
        return result   # thresholds are checked at the frame's actions, as on the embedded engine

    def read_jdbc(self, target, options: dict, transformation_ctx: str) -> SparkPlan:
        """A JDBC source read in Spark tasks, one per query (per `hashpartitions` part), each
        with the embedded engine's reader and type mapping; the parts' types merged as reading
        the whole would type them. The bookmark bounds are fixed on the driver first."""
        from openglue_runtime import jdbc
        planned = jdbc.plan_read(target, options, transformation_ctx)
        queries = planned.queries

        def fetch(it):
            for ids in it:
                for i in ids.column(0).to_pylist():
                    yield _kept_part(i, jdbc.fetch_table(target, *queries[i]))
        n = len(queries)
        kept, parts = _keep_parts(self.spark.range(0, n, 1, n).mapInArrow(fetch,
                                                                           _kept_parts_type()))
        first = parts[0][2]
        out_schema = pa.schema([
            pa.field(f.name, jdbc.merge_part_types([p[2].field(i).type for p in parts]))
            for i, f in enumerate(first)])

        def conform(t):
            return pa.Table.from_arrays([jdbc.conform_part(t.column(i).combine_chunks(), f.type)
                                         for i, f in enumerate(out_schema)], schema=out_schema)
        df = _kept_rows(kept, out_schema, conform)
        planned.register(sum(p[1] for p in parts))
        return self._materialized(df, out_schema, [])

    def _drop_null_fields(self, plan: SparkPlan, op) -> SparkPlan:
        """The fields null in every row (over all partitions) dropped, as DropNullFields does."""
        from pyspark.sql import types as st
        in_schema = plan.schema

        def kept_paths(frames):
            table = pa.Table.from_batches(list(frames), schema=in_schema)
            if table.num_rows == 0:
                return
            out = op.table(table)
            yield pa.RecordBatch.from_pydict({"path": sorted(_paths(out.schema))},
                                             schema=pa.schema([("path", pa.string())]))
        rows = plan.with_tail(kept_paths, st.StructType([st.StructField("path", st.StringType())]))
        keep = {r["path"] for r in rows.distinct().collect()}
        if not keep and self.count(plan) == 0:
            out = op.table(pa.Table.from_batches([empty_batch(in_schema)]))
            keep = _paths(out.schema)
        drop = _dropped_paths(in_schema, keep)
        if not drop:
            return plan
        return self._then(plan, ops.DropFields([join_path(p) for p in drop]))

    def _join(self, plan: SparkPlan, op) -> SparkPlan:
        from pyspark.sql import functions as F
        other: SparkPlan = op.other.frame._plan
        left_s, right_s = plan.schema, other.schema
        ldf = plan.dataframe().toDF(*["l{}".format(i) for i in range(len(left_s))])
        rdf = other.dataframe().toDF(*["r{}".format(i) for i in range(len(right_s))])

        def key(df_prefix, schema, path):
            parts = parse_path(path)
            names = schema.names
            if parts[0] not in names:
                raise KeyError("join key {!r} is not a field of the frame".format(path))
            c = F.col("{}{}".format(df_prefix, names.index(parts[0])))
            at = schema.field(parts[0]).type
            for p in parts[1:]:
                if not pa.types.is_struct(at) or at.get_field_index(p) < 0:
                    raise KeyError("join key {!r} is not a field of the frame".format(path))
                c = c.getField(p)
                at = at.field(at.get_field_index(p)).type
            return c, at
        conds = []
        for k1, k2 in zip(op.keys1, op.keys2):
            (lc, lt), (rc, rt) = key("l", left_s, k1), key("r", right_s, k2)
            if pa.types.is_union(lt) or pa.types.is_union(rt):
                raise TypeError("join key {!r}/{!r} is a choice: resolve it with resolveChoice "
                                "before joining on the Spark engine".format(k1, k2))
            if lt != rt:
                common = merge_types(gt.from_arrow_type(lt), gt.from_arrow_type(rt))
                if isinstance(common, gt.ChoiceType):
                    common = gt.StringType()
                sql_type = _spark_type(spark_arrow_type(gt.to_arrow_type(common)))
                lc, rc = lc.cast(sql_type), rc.cast(sql_type)
            conds.append(lc == rc)
        cond = conds[0]
        for c in conds[1:]:
            cond = cond & c
        joined = ldf.join(rdf, cond, "inner")
        cols, fields, names = [], [], []
        for i, f in enumerate(left_s):
            cols.append(F.col("l{}".format(i)))
            fields.append(f)
            names.append(f.name)
        for i, f in enumerate(right_s):
            n = f.name
            if n in names:
                if n in op.keys2 and n in op.keys1 and op.keys1.index(n) == op.keys2.index(n):
                    continue
                while n in names:
                    n = "." + n
            cols.append(F.col("r{}".format(i)))
            fields.append(pa.field(n, f.type))
            names.append(n)
        out_schema = pa.schema(fields)
        df = joined.select(*cols).toDF(*names)
        return self._materialized(df, out_schema, [plan, other], plan.base.listing)

    def _conformed(self, plan: SparkPlan, merged: gt.StructType, schema: pa.Schema):
        if plan.schema == schema:
            return plan.dataframe()
        in_schema = plan.schema

        def conform(frames):
            for b in frames:
                t = _conform_records(pa.Table.from_batches([b], schema=in_schema), merged, schema)
                for rb in t.to_batches():
                    yield encode_batch(rb, schema)
        return plan.with_tail(conform, spark_schema(schema))

    def _union(self, plan: SparkPlan, others: List[SparkPlan], op=None) -> SparkPlan:
        plans = [plan] + list(others)
        merged: gt.DataType = gt.StructType([])
        for p in plans:
            merged = merge_types(merged, gt.from_arrow_schema(p.schema))
        schema = gt.to_arrow_schema(merged)
        df = None
        for p in plans:
            part = self._conformed(p, merged, schema)
            df = part if df is None else df.union(part)
        return self._materialized(df, schema, plans, plan.base.listing)

    def _merge(self, plan: SparkPlan, op) -> SparkPlan:
        stage: SparkPlan = op.stage.frame._plan
        from pyspark.sql import functions as F
        src_s, stage_s = plan.schema, stage.schema
        sdf = plan.dataframe().toDF(*["s{}".format(i) for i in range(len(src_s))])
        tdf = stage.dataframe().toDF(*["t{}".format(i) for i in range(len(stage_s))])
        conds = []
        for k in op.keys:
            parts = parse_path(k)
            for sch, prefix in ((src_s, "s"), (stage_s, "t")):
                if parts[0] not in sch.names:
                    raise KeyError("join key {!r} is not a field of the frame".format(k))
            sc = F.col("s{}".format(src_s.names.index(parts[0])))
            tc = F.col("t{}".format(stage_s.names.index(parts[0])))
            for p in parts[1:]:
                sc, tc = sc.getField(p), tc.getField(p)
            conds.append(sc.eqNullSafe(tc))
        cond = conds[0]
        for c in conds[1:]:
            cond = cond & c
        kept = sdf.join(tdf, cond, "left_anti").toDF(*src_s.names)
        kept_plan = self._materialized(kept, src_s, [plan, stage])
        return self._union(kept_plan, [stage])

    def _spigot(self, plan: SparkPlan, op) -> SparkPlan:
        result = SparkPlan(plan.base, plan.steps, plan.schemas)
        result.spigot = op
        return result

    # ---------------------------------------------------------------- actions

    def _after_action(self, plan: SparkPlan, complete: bool = True) -> None:
        steps = plan.lineage()
        for i, s in enumerate(steps):
            if complete:
                s.ran = True
            _check_thresholds(s, steps[:i])

    def count(self, plan: SparkPlan) -> int:
        n = plan.dataframe().count()
        self._after_action(plan)
        return n

    def schema(self, plan: SparkPlan) -> gt.StructType:
        return gt.from_arrow_schema(plan.schema)

    def _collect(self, df, schema: pa.Schema) -> pa.Table:
        batches = df._collect_as_arrow()
        frames = [decode_batch(b, schema) for b in batches if b.num_rows]
        if not frames:
            return pa.Table.from_batches([empty_batch(schema)])
        return pa.Table.from_batches(frames, schema=schema)

    def head(self, plan: SparkPlan, n: int) -> List[dict]:
        table = self._collect(plan.dataframe().limit(int(n)), plan.schema)
        self._after_action(plan, complete=False)
        return table.to_pylist()

    def to_arrow(self, plan: SparkPlan) -> pa.Table:
        table = self._collect(plan.dataframe(), plan.schema)
        self._after_action(plan)
        return table

    def to_spark(self, plan: SparkPlan):
        """The frame as the script's DataFrame (`toDF()`): Spark's own types, choices as
        structs; no rows move."""
        if len(plan.schema) == 0:
            return self.empty_df(None, spark_schema(plan.schema, True))
        return plan.dataframe(for_df=True)

    def errors(self, plan: SparkPlan):
        steps = plan.lineage()
        if not all(s.ran for s in steps):
            self.count(plan)
        own = list(plan.base.own_steps) + list(plan.steps)
        last = own[-1].errors() if own else []
        return [e for s in steps for e in s.errors()], last

    def num_partitions(self, plan: SparkPlan) -> int:
        if isinstance(plan.base, _ScanBase):
            return max(1, len(plan.base._groups))
        return plan.dataframe().rdd.getNumPartitions()

    def listing(self, plan: SparkPlan):
        return list(plan.base.listing)

    # ---------------------------------------------------------------- sinks

    def write(self, plan: SparkPlan, path: str, fmt: str, format_options: dict,
              partition_keys: Sequence[str]) -> List[str]:
        from pyspark.sql import types as st
        fmt = _check_format(fmt)
        schema = plan.schema
        if len(schema) == 0:
            return []
        store, options, keys = native.storage(), dict(format_options or {}), list(partition_keys)

        def write_part(frames):
            native.use_storage(store)
            first = next(frames, None)
            if first is None:
                return
            reader = pa.RecordBatchReader.from_batches(
                schema, itertools.chain([first], frames))
            uris = pyformats.write(reader, path, fmt, options, keys)
            yield pa.RecordBatch.from_pydict({"uri": uris}, schema=pa.schema([("uri", pa.string())]))
        rows = plan.with_tail(write_part, st.StructType([st.StructField("uri", st.StringType())]))
        uris = [r["uri"] for r in rows.collect()]
        self._after_action(plan)
        if not uris:
            # No rows anywhere: what the embedded engine writes for an empty frame.
            empty = pa.RecordBatchReader.from_batches(schema, iter([]))
            uris = pyformats.write(empty, path, fmt, options, keys)
        return uris

    def write_sample(self, plan: SparkPlan, path: str) -> List[str]:
        op = getattr(plan, "spigot", None)
        if op is None:
            raise ValueError("write_sample needs a spigot step")
        if op.prob is not None:
            table = self.to_arrow(plan)   # driver-bound: one random draw per row, in order
        else:
            table = self._collect(plan.dataframe().limit(int(op.topk or 0)), plan.schema)
        op.table(table)
        sample = op.sample if op.sample is not None else pa.table({})
        return native.write(pa.RecordBatchReader.from_batches(sample.schema, sample.to_batches()),
                            path, "json", {}, [])

    def purge(self, path: str, retention_ms, exclusions) -> List[str]:
        return native.delete_prefix(path, retention_ms, exclusions)


def _ship_runtime(sc) -> None:
    """What the executors' Python workers import to run the steps: the awsglue package as
    Python sources (spark_conf's py-files archive; a job run on a cluster already has it) and
    the embedded engine's compiled extension with the application's files, which
    openglue_runtime.engines.embedded.native loads from there (Python imports no extension from a zip). Done
    on every master: a worker's own PYTHONPATH never has to know about OpenGlue."""
    if getattr(sc, "_openglue_runtime_shipped", False):
        return
    sc._openglue_runtime_shipped = True
    from openglue_runtime.engines.spark.conf import py_files_archive
    archive = py_files_archive()
    included = {os.path.basename(p) for p in (getattr(sc, "_python_includes", None) or [])}
    if os.path.basename(archive) not in included:
        sc.addPyFile(archive)
    path = getattr(getattr(native, "_ext", None), "__file__", None)
    if path:
        try:
            sc.addFile(path)
        except Exception as e:  # noqa: BLE001 - already registered by a job run's settings
            if "already registered" not in str(e):
                raise


def _kept_parts_type():
    from pyspark.sql import types as st
    return st.StructType([st.StructField("pid", st.LongType()), st.StructField("rows", st.LongType()),
                          st.StructField("schema", st.BinaryType()),
                          st.StructField("data", st.BinaryType())])


def _kept_part(pid: int, table: pa.Table) -> pa.RecordBatch:
    """One task's result kept whole (Arrow IPC) with its schema, for a second pass."""
    return pa.RecordBatch.from_pydict({"pid": [pid], "rows": [table.num_rows],
                                       "schema": [table.schema.serialize().to_pybytes()],
                                       "data": [_ipc_bytes(table)]})


def _ipc_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def _keep_parts(df):
    """The kept results persisted, and (pid, rows, schema) of each, in pid order."""
    from pyspark import StorageLevel
    df = df.persist(StorageLevel.MEMORY_AND_DISK)
    metas = sorted(((r["pid"], r["rows"], pa.ipc.read_schema(pa.py_buffer(bytes(r["schema"]))))
                    for r in df.select("pid", "rows", "schema").collect()), key=lambda m: m[0])
    return df, metas


def _kept_rows(kept, out_schema: pa.Schema, conform):
    """The second pass: every kept result with rows, conformed to `out_schema`."""
    def second(it):
        for b in it:
            for blob in b.column("data").to_pylist():
                t = pa.ipc.open_stream(blob).read_all()
                if t.num_rows == 0:
                    continue
                if t.schema != out_schema:
                    t = conform(t)
                for rb in t.to_batches():
                    yield encode_batch(rb, out_schema)
    return kept.select("data").mapInArrow(second, spark_schema(out_schema))


def _check_thresholds(step: _Step, prior: Sequence[_Step]) -> None:
    errs = step.errors()
    check_thresholds(step.op, step.error_count(), errs[0]["msg"] if errs else "",
                     sum(p.error_count() for p in prior))

def _paths(schema: pa.Schema) -> set:
    out = set()

    def walk(prefix, at):
        for i in range(at.num_fields):
            f = at.field(i)
            p = prefix + [f.name]
            out.add("\x00".join(p))
            if pa.types.is_struct(f.type):
                walk(p, f.type)
    walk([], pa.struct(list(schema)))
    return out


def _dropped_paths(schema: pa.Schema, keep: set) -> List[List[str]]:
    """The field paths of `schema` not in `keep` (a struct none of whose fields are kept is
    dropped whole)."""
    out: List[List[str]] = []

    def walk(prefix, at) -> bool:
        any_kept = False
        for i in range(at.num_fields):
            f = at.field(i)
            p = prefix + [f.name]
            key = "\x00".join(p)
            if key not in keep:
                out.append(p)
                continue
            if pa.types.is_struct(f.type) and f.type.num_fields:
                before = len(out)
                if not walk(p, f.type):
                    del out[before:]
                    out.append(p)
                    continue
            any_kept = True
        return any_kept
    walk([], pa.struct(list(schema)))
    return out


