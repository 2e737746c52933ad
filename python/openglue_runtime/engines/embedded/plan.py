"""The embedded engine's lazy plan: a source plus a chain of operations, executed on demand.

Streamable operations (apply_mapping, select/drop/rename, resolveChoice, unnest, filter,
split_rows) run batch by batch, so read -> apply_mapping -> write is one pass in bounded memory.
Operations that need all rows (map, join, union, relationalize, unbox, drop_null_fields, merge)
materialize their input once as an Arrow table and cache their output, so a Python callable runs
once per record however many times the frame is used afterwards.

When the first operation over a file source is an apply_mapping that names every source type,
the source is streamed conformed to those types (`Scan.stream(schema)`) without an inference pass.
"""
import traceback
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

import pyarrow as pa

from openglue_runtime import types as gt
from openglue_runtime.engines.embedded import native, pyformats
from openglue_runtime.engines.embedded.cast import convert_py, glue_cast
from openglue_runtime.engines.embedded.records import (empty_batch, merge_types, null_array,
                                                       values_to_arrow)

BATCH_ROWS = 65536


class ErrorThresholdExceeded(RuntimeError):
    """More error records than a transform's stageThreshold/totalThreshold allow."""


# ---------------------------------------------------------------- sources


class Source:
    listing: List[Tuple[str, int, int]] = []

    def schema(self) -> pa.Schema:
        raise NotImplementedError

    def open(self, read_schema: Optional[pa.Schema]) -> Tuple[pa.Schema, Iterator[pa.RecordBatch]]:
        raise NotImplementedError

    def num_partitions(self) -> int:
        return 1


class TableSource(Source):
    def __init__(self, table: pa.Table):
        self.table = table
        self.listing = []

    def schema(self) -> pa.Schema:
        return self.table.schema

    def open(self, read_schema=None):
        return self.table.schema, iter(self.table.to_batches(max_chunksize=BATCH_ROWS))


class ScanSource(Source):
    """Files read by the engine. `parts` groups files sharing partition values (catalog tables);
    `partition_columns` gives the Glue type of each partition column; `declared` is a schema
    the rows are conformed to (a catalog table's columns) instead of inferring one."""

    def __init__(self, parts: Sequence[Tuple[List[str], Dict[str, str]]], fmt: str, options: dict,
                 listing: List[Tuple[str, int, int]],
                 partition_columns: Sequence[Tuple[str, gt.DataType]] = (),
                 declared: Optional[pa.Schema] = None):
        self.parts = [(list(files), dict(values)) for files, values in parts if files]
        self.fmt = fmt
        self.options = dict(options)
        self.listing = list(listing)
        self.partition_columns = list(partition_columns)
        self.declared = declared
        self._schema: Optional[pa.Schema] = None
        self._scans: Dict[int, object] = {}
        # The error records of the last complete read (malformed JSON records), and whether
        # one has completed.
        self.errors: List[dict] = []
        self.ran = False

    def num_partitions(self) -> int:
        return max(1, sum(len(f) for f, _ in self.parts))

    def _scan(self, i: int):
        """One engine Scan per part, kept so an inferred schema is not inferred twice."""
        if i not in self._scans:
            self._scans[i] = pyformats.open_scan(self.parts[i][0], self.fmt, self.options)
        return self._scans[i]

    def _data_schema(self) -> pa.Schema:
        if self.declared is not None:
            if not self._by_position():
                return self.declared
            if self._schema is None:
                self._schema = self._typed_per_value()
            return self._schema
        if self._csv_strings():
            # from_options CSV: every column a string, as Glue's reader gives them.
            if self._schema is None:
                names: List[str] = []
                for i in range(len(self.parts)):
                    names += [n for n in self._scan(i).raw_schema().names if n not in names]
                self._schema = pa.schema([pa.field(n, pa.string()) for n in names])
            return self._schema
        if self._schema is None:
            merged: gt.DataType = gt.StructType([])
            for i in range(len(self.parts)):
                merged = merge_types(merged, gt.from_arrow_schema(self._scan(i).schema()))
            self._schema = gt.to_arrow_schema(merged)
        return self._schema

    def _typed_per_value(self) -> pa.Schema:
        """A catalog CSV table's columns as Glue types its cells: a column declared as a
        primitive other than string that holds a value of another kind (text a cast to the
        declared type loses) is choice(<declared>, string), the values that fit the declared
        type and the others kept as strings (the developer guide's Medicare example:
        `provider id` declared bigint reads as choice of long and string). One pass over the
        files before the rows are read, only when such columns are declared."""
        positional = self.text_typed_columns()
        if positional is None:
            return self.declared
        lost = set()
        for i in range(len(self.parts)):
            lost.update(self._scan(i).text_losses(positional))
        return self.with_text_choices(lost)

    def text_typed_columns(self) -> Optional[pa.Schema]:
        """The declared columns a catalog CSV table's cells are typed into (primitives other
        than string), named by position (col<i>), or None when there are none."""
        typed = [pa.field("col{}".format(i), f.type) for i, f in enumerate(self.declared)
                 if not pa.types.is_string(f.type) and not pa.types.is_nested(f.type)]
        return pa.schema(typed) if typed else None

    def with_text_choices(self, lost) -> pa.Schema:
        """The declared schema with choice(<declared>, string) for the columns (by position
        name) some of whose cells are not of the declared type."""
        fields = []
        for i, f in enumerate(self.declared):
            if "col{}".format(i) in lost:
                choice = gt.ChoiceType([gt.from_arrow_type(f.type), gt.StringType()])
                f = pa.field(f.name, gt.to_arrow_type(choice))
            fields.append(f)
        return pa.schema(fields)

    def _by_position(self) -> bool:
        """A catalog CSV table: declared columns are read by position (engine.read_catalog)."""
        return (self.fmt == "csv" and self.declared is not None
                and bool(self.options.get("openglue.csvByPosition")))

    def _csv_strings(self) -> bool:
        return self.fmt == "csv" and bool(self.options.get("openglue.csvStrings"))

    def _part_names(self):
        return {n for n, _ in self.partition_columns}

    def schema(self) -> pa.Schema:
        data = self._data_schema()
        fields = [f for f in data if f.name not in self._part_names()]
        fields += [pa.field(n, gt.to_arrow_type(t)) for n, t in self.partition_columns]
        return pa.schema(fields)

    def open(self, read_schema: Optional[pa.Schema] = None):
        parts_named = self._part_names()
        conform = (read_schema is not None or len(self.parts) > 1 or self.declared is not None
                   or self._csv_strings())
        first_reader = None
        if read_schema is not None:
            data = pa.schema([f for f in read_schema if f.name not in parts_named])
        elif conform or not self.parts:
            data = pa.schema([f for f in self._data_schema() if f.name not in parts_named])
        else:
            # One part, rows as the engine types them: its stream infers once and knows the schema.
            first_reader = self._scan(0).stream(None)
            data = first_reader.schema
        pcols = [(n, t) for n, t in self.partition_columns
                 if read_schema is None or n in read_schema.names]
        out_schema = pa.schema(list(data) + [pa.field(n, gt.to_arrow_type(t)) for n, t in pcols])
        stream_schema = data
        if self._by_position() and conform:
            # The files' fields are col0, col1, ...: each declared column reads its position.
            # A mapping's read schema names its sources as the script spells them, and
            # ApplyMapping matches names in any case (`customerId` reads `customerid`).
            position = {f.name.lower(): i for i, f in reversed(list(enumerate(self.declared)))}
            position.update({f.name: i for i, f in enumerate(self.declared)})

            def at(name):
                return position.get(name, position.get(name.lower()))
            stream_schema = pa.schema([pa.field("col{}".format(at(f.name)), f.type)
                                       if at(f.name) is not None else f for f in data])

        def gen():
            for i, (files, values) in enumerate(self.parts):
                if i == 0 and first_reader is not None:
                    reader = first_reader
                else:
                    reader = self._scan(i).stream(stream_schema if conform else None)
                consts = []
                for n, t in pcols:
                    consts.append((convert_py(values.get(n), t), gt.to_arrow_type(t)))
                for batch in reader:
                    arrays = list(batch.columns)
                    for v, at in consts:
                        arrays.append(pa.array([v] * batch.num_rows, type=at))
                    yield pa.RecordBatch.from_arrays(arrays, schema=out_schema)
            self.errors = [source_error(bad) for i in range(len(self.parts)) if i in self._scans
                           for bad in self._scans[i].bad_records()]
            self.ran = True
        return out_schema, gen()


def source_error(bad: dict) -> dict:
    """A malformed input record as an error record, with the fields Glue's have (callsite, msg,
    stackTrace, input, bytesread, source, dynamicRecord): `dynamicRecord` is what parses of the
    record before the point where it breaks (as Glue's reader keeps the fields read so far)."""
    text = str(bad.get("input", ""))
    line = int(bad.get("line") or 0)
    where = "{}{}".format(bad.get("source", ""), " line {}".format(line) if line else "")
    return {"callsite": "read " + where, "msg": "Malformed record: " + str(bad.get("message", "")),
            "stackTrace": "", "input": text, "bytesread": len(text.encode("utf-8")),
            "source": str(bad.get("source", "")), "dynamicRecord": _partial_record(text)}


def _partial_record(text: str) -> Optional[dict]:
    """The members of a broken JSON object that come before the break ({} when none parse)."""
    import json
    decoder = json.JSONDecoder()
    body = text.strip()
    if not body.startswith("{"):
        return None
    out: dict = {}
    pos = 1
    while True:
        while pos < len(body) and body[pos] in " \t\r\n,":
            pos += 1
        try:
            key, pos = decoder.raw_decode(body, pos)
            while pos < len(body) and body[pos] in " \t\r\n":
                pos += 1
            if not isinstance(key, str) or pos >= len(body) or body[pos] != ":":
                return out
            pos += 1
            while pos < len(body) and body[pos] in " \t\r\n":
                pos += 1
            value, pos = decoder.raw_decode(body, pos)
        except ValueError:
            return out
        out[key] = value


# ---------------------------------------------------------------- operations


class Op:
    """One step of a plan. Streamable steps implement `batch`; the others `table`."""
    streamable = True
    name = "Op"
    can_error = False

    def __init__(self, stage_threshold: int = 0, total_threshold: int = 0,
                 transformation_ctx: str = ""):
        self.stage_threshold = int(stage_threshold or 0)
        self.total_threshold = int(total_threshold or 0)
        self.transformation_ctx = transformation_ctx
        self.errors: List[dict] = []
        self.ran = not self.can_error
        self._cache: Optional[pa.Table] = None

    def batch(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        raise NotImplementedError

    def table(self, table: pa.Table) -> pa.Table:
        raise NotImplementedError

    def read_schema(self) -> Optional[pa.Schema]:
        return None

    def record_error(self, record, exc: BaseException) -> None:
        """An error record with Glue's fields: where (`callsite`: the transform and its
        transformation_ctx), what (`msg`, `stackTrace`), and the record (`input` as JSON text,
        `dynamicRecord` as it was)."""
        text = _json_record(record)
        self.errors.append({
            "callsite": self.name + (" " + self.transformation_ctx
                                     if self.transformation_ctx else ""),
            "msg": "{}: {}".format(type(exc).__name__, exc),
            "stackTrace": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:],
            "input": text,
            "bytesread": 0,
            "source": "",
            "dynamicRecord": record if isinstance(record, dict) else None,
        })


def _json_record(record) -> str:
    import json
    try:
        return json.dumps(record, default=str, sort_keys=False)
    except (TypeError, ValueError):
        return repr(record)


class Plan:
    """An immutable source + operations chain. Frames derived from one another share ops."""

    def __init__(self, source: Source, ops: Tuple[Op, ...] = ()):
        self.source = source
        self.ops = tuple(ops)

    def then(self, op: Op) -> "Plan":
        return Plan(self.source, self.ops + (op,))

    # -- execution

    def _start(self):
        """Where execution starts: the latest cached op, or the source."""
        for i in range(len(self.ops) - 1, -1, -1):
            if self.ops[i]._cache is not None:
                t = self.ops[i]._cache
                return i + 1, t.schema, iter(t.to_batches(max_chunksize=BATCH_ROWS))
        read_schema = self.ops[0].read_schema() if self.ops else None
        schema, it = self.source.open(read_schema)
        return 0, schema, it

    def stream(self) -> Tuple[pa.Schema, Iterator[pa.RecordBatch]]:
        start, schema, it = self._start()
        for idx in range(start, len(self.ops)):
            op = self.ops[idx]
            prior = self.ops[:idx]
            if op.streamable:
                out_schema = op.batch(empty_batch(schema)).schema
                it = _run_streaming(op, it, prior, out_schema)
                schema = out_schema
            else:
                table = pa.Table.from_batches(list(it), schema=schema)
                op.errors = []
                result = op.table(table)
                op.ran = True
                _check_thresholds(op, prior)
                op._cache = result
                schema, it = result.schema, iter(result.to_batches(max_chunksize=BATCH_ROWS))
        return schema, it

    def to_table(self) -> pa.Table:
        schema, it = self.stream()
        return pa.Table.from_batches(list(it), schema=schema)

    def reader(self) -> pa.RecordBatchReader:
        schema, it = self.stream()
        return pa.RecordBatchReader.from_batches(schema, it)

    def schema(self) -> pa.Schema:
        """The output schema; computed from the source's schema through streamable steps
        without reading data where possible."""
        if any(not op.streamable and op._cache is None for op in self.ops):
            schema, it = self.stream()
            for _ in it:
                pass
            return schema
        start, schema = 0, None
        for i in range(len(self.ops) - 1, -1, -1):
            if self.ops[i]._cache is not None:
                start, schema = i + 1, self.ops[i]._cache.schema
                break
        if schema is None:
            read_schema = self.ops[0].read_schema() if self.ops else None
            schema = read_schema_with_partitions(self.source, read_schema)
        for op in self.ops[start:]:
            schema = op.batch(empty_batch(schema)).schema
        return schema

    def count(self) -> int:
        _, it = self.stream()
        return sum(b.num_rows for b in it)

    def head(self, n: int) -> pa.Table:
        schema, it = self.stream()
        out, total = [], 0
        for b in it:
            if total >= n:
                break
            out.append(b.slice(0, n - total))
            total += out[-1].num_rows
        return pa.Table.from_batches(out, schema=schema)

    def ensure_ran(self) -> None:
        if not all(op.ran for op in self.ops) or not getattr(self.source, "ran", True):
            self.count()

    def all_errors(self) -> List[dict]:
        return list(getattr(self.source, "errors", [])) + [e for op in self.ops for e in op.errors]


def read_schema_with_partitions(source: Source, read_schema: Optional[pa.Schema]) -> pa.Schema:
    if read_schema is None:
        return source.schema()
    if isinstance(source, ScanSource):
        names = {n for n, _ in source.partition_columns}
        fields = [f for f in read_schema if f.name not in names]
        fields += [pa.field(n, gt.to_arrow_type(t)) for n, t in source.partition_columns
                   if n in read_schema.names]
        return pa.schema(fields)
    return read_schema


def check_thresholds(op: Op, count: int, first_msg: str, prior_count: int) -> None:
    """Raises ErrorThresholdExceeded when `op`'s `count` error records (the first saying
    `first_msg`), or those with the `prior_count` of the steps before it, exceed its thresholds.
    Shared by both engines (openglue_runtime/engines/spark/frames.py counts its records per Spark partition)."""
    if op.stage_threshold and count > op.stage_threshold:
        raise ErrorThresholdExceeded(
            "{} ({}): {} error records exceed stageThreshold {}; first error: {}".format(
                op.name, op.transformation_ctx or "no transformation_ctx", count,
                op.stage_threshold, first_msg))
    if op.total_threshold and count + prior_count > op.total_threshold:
        raise ErrorThresholdExceeded(
            "{} ({}): {} error records in total exceed totalThreshold {}".format(
                op.name, op.transformation_ctx or "no transformation_ctx", count + prior_count,
                op.total_threshold))


def _check_thresholds(op: Op, prior: Sequence[Op]) -> None:
    check_thresholds(op, len(op.errors), op.errors[0]["msg"] if op.errors else "",
                     sum(len(p.errors) for p in prior))


def conform_batch(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """A step's output batch cast to the step's output schema (Glue's cast), when it differs."""
    if batch.schema == schema:
        return batch
    return pa.RecordBatch.from_arrays(
        [glue_cast(c, gt.from_arrow_type(f.type)) for c, f in zip(batch.columns, schema)],
        schema=schema)


def _run_streaming(op: Op, it, prior, out_schema):
    def gen():
        op.errors = []
        for b in it:
            out = op.batch(b)
            if op.can_error:
                _check_thresholds(op, prior)
            yield conform_batch(out, out_schema)
        op.ran = True
    return gen()




def conform_table(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` cast to `schema` with Glue's cast (missing columns null, extra dropped)."""
    cols = []
    for f in schema:
        if f.name in table.column_names:
            col = table.column(f.name)
            cols.append(col if col.type == f.type else glue_cast(col, gt.from_arrow_type(f.type)))
        else:
            cols.append(null_array(table.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


def concat_tables(tables: List[pa.Table]) -> pa.Table:
    """Concatenate tables whose schemas may differ: the Glue types are merged (disagreeing
    types become choices) and each table conformed to the merged schema."""
    tables = [t for t in tables if t is not None]
    if not tables:
        return pa.table({})
    merged: gt.DataType = gt.StructType([])
    for t in tables:
        merged = merge_types(merged, gt.from_arrow_schema(t.schema))
    schema = gt.to_arrow_schema(merged)
    parts = []
    for t in tables:
        if t.schema == schema:
            parts.append(t)
        else:
            parts.append(_conform_records(t, merged, schema))
    return pa.concat_tables(parts)


def _conform_records(t: pa.Table, merged: gt.StructType, schema: pa.Schema) -> pa.Table:
    cols = []
    for f, gf in zip(schema, merged.fields):
        if f.name not in t.column_names:
            cols.append(null_array(t.num_rows, f.type))
            continue
        col = t.column(f.name).combine_chunks() if t.num_rows else pa.array([], t.schema.field(f.name).type)
        if col.type == f.type:
            cols.append(col)
        elif isinstance(gf.dataType, gt.ChoiceType) or pa.types.is_nested(f.type):
            cols.append(values_to_arrow(col.to_pylist(), gf.dataType))
        else:
            cols.append(glue_cast(col, gf.dataType))
    return pa.Table.from_arrays(cols, schema=schema)


__all__ = ["Plan", "Op", "Source", "TableSource", "ScanSource", "ErrorThresholdExceeded",
           "conform_table", "conform_batch", "check_thresholds", "concat_tables", "empty_batch",
           "BATCH_ROWS"]
