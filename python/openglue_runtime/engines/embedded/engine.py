"""EmbeddedEngine: the engine object GlueContext and DynamicFrame call.

This is the engine boundary. DynamicFrame and GlueContext never touch Arrow or the extension
themselves: they hold an opaque plan and call `engine.<method>(plan, ...)`. A Spark engine
(issue 10) implements the same methods over Spark DataFrames:

  reading   from_arrow(table), from_records(records), read_files(...), read_catalog(...)
  steps     transform(plan, name, **args) -> plan   (names: see TRANSFORMS)
            split_rows(plan, comparisons) -> (plan, plan), relationalize(plan, root) -> {name: plan}
  actions   count, schema (gluetypes.StructType), head(plan, n) -> records, to_arrow,
            errors(plan) -> (all error dicts, last stage's error dicts), num_partitions
  writing   write(plan, path, format, format_options, partition_keys) -> uris written,
            write_sample(plan, path, options), purge(path, retention_ms, exclusions)
"""
import json
from typing import Dict, List, Optional, Sequence, Tuple

import pyarrow as pa

from openglue_runtime import types as gt
from openglue_runtime.engines.embedded import native, ops, pyformats
from openglue_runtime.engines.embedded.plan import Plan, ScanSource, TableSource
from openglue_runtime.engines.embedded.records import records_to_table

TRANSFORMS = {
    "apply_mapping": ops.ApplyMapping, "select_fields": ops.SelectFields,
    "drop_fields": ops.DropFields, "rename_field": ops.RenameField, "unnest": ops.Unnest,
    "resolve_choice": ops.ResolveChoice, "filter": ops.Filter, "map": ops.Map,
    "drop_null_fields": ops.DropNullFields, "join": ops.Join, "union": ops.Union,
    "merge": ops.MergeFrames, "unbox": ops.Unbox, "repartition": ops.Repartition,
    "spigot": ops.Spigot,
}

FORMATS = {"csv", "json", "parquet", "glueparquet", "orc"} | pyformats.FORMATS



def _collecting(fmt: str, options: dict) -> dict:
    """JSON sources keep their malformed records as the frame's error records, as Glue's reader
    does, instead of failing the read (plan.ScanSource.errors)."""
    if fmt != "json":
        return dict(options)
    return {**options, "openglue.badRecords": "collect"}

class EmbeddedEngine:
    name = "embedded"

    # ---------------------------------------------------------------- sources

    def from_arrow(self, table) -> Plan:
        return Plan(TableSource(glue_table(table)))

    def from_records(self, records: List[dict], schema: Optional[gt.StructType] = None) -> Plan:
        return Plan(TableSource(records_to_table(list(records), schema)))

    def list_files(self, paths: Sequence[str], connection_options: dict) -> List[Tuple[str, int, int]]:
        opts = {}
        if "recurse" in connection_options:
            opts["recurse"] = connection_options["recurse"]
        if connection_options.get("exclusions"):
            excl = connection_options["exclusions"]
            opts["exclusions"] = excl if isinstance(excl, str) else json.dumps(list(excl))
        return native.list_files(list(paths), opts)

    def read_files(self, listing: List[Tuple[str, int, int]], fmt: str, format_options: dict,
                   connection_options: dict) -> Plan:
        fmt = _check_format(fmt)
        options = dict(format_options or {})
        if connection_options.get("compressionType") and "compressionType" not in options:
            options["compressionType"] = connection_options["compressionType"]
        files = [u for u, _, _ in listing]
        if fmt == "csv":
            options["openglue.csvStrings"] = "true"
        return Plan(ScanSource([(files, {})], fmt, _collecting(fmt, options), listing))

    def read_catalog(self, parts: Sequence[Tuple[List[str], Dict[str, str]]],
                     listing: List[Tuple[str, int, int]], fmt: str, format_options: dict,
                     columns: Sequence[Tuple[str, str]],
                     partition_keys: Sequence[Tuple[str, str]]) -> Plan:
        fmt = _check_format(fmt)
        declared = None
        part_names = {n for n, _ in partition_keys}
        data_cols = [(n, t) for n, t in columns if n not in part_names]
        if data_cols:
            declared = pa.schema([pa.field(n, gt.to_arrow_type(gt.type_from_name(t)))
                                  for n, t in data_cols])
        pcols = [(n, gt.type_from_name(t)) for n, t in partition_keys]
        options = dict(format_options or {})
        if fmt == "csv" and declared is not None:
            # A catalog CSV table's columns are its files' fields by position, as in Glue: the
            # header the table skips (skip.header.line.count) never names or drops a column.
            header = str(options.get("withHeader", "false")).lower() == "true"
            options["withHeader"] = "false"
            if header:
                options["skipFirst"] = "true"
            options["openglue.csvByPosition"] = "true"
        return Plan(ScanSource(parts, fmt, _collecting(fmt, options), listing, pcols, declared))

    # ---------------------------------------------------------------- steps

    def transform(self, plan: Plan, name: str, **args) -> Plan:
        cls = TRANSFORMS[name]
        return plan.then(cls(**args))

    def split_rows(self, plan: Plan, comparisons, **kw) -> Tuple[Plan, Plan]:
        return (plan.then(ops.SplitRowsOp(comparisons, True, **kw)),
                plan.then(ops.SplitRowsOp(comparisons, False, **kw)))

    def relationalize(self, plan: Plan, root_name: str) -> Dict[str, Plan]:
        tables = ops.relationalize(plan.to_table(), root_name)
        return {name: Plan(TableSource(t)) for name, t in tables.items()}

    # ---------------------------------------------------------------- actions

    def count(self, plan: Plan) -> int:
        return plan.count()

    def schema(self, plan: Plan) -> gt.StructType:
        return gt.from_arrow_schema(plan.schema())

    def head(self, plan: Plan, n: int) -> List[dict]:
        return plan.head(n).to_pylist()

    def to_arrow(self, plan: Plan) -> pa.Table:
        return plan.to_table()

    def errors(self, plan: Plan) -> Tuple[List[dict], List[dict]]:
        plan.ensure_ran()
        last = plan.ops[-1].errors if plan.ops else getattr(plan.source, "errors", [])
        return plan.all_errors(), list(last)

    def num_partitions(self, plan: Plan) -> int:
        for op in reversed(plan.ops):
            if isinstance(op, ops.Repartition):
                return op.n
        return plan.source.num_partitions()

    def listing(self, plan: Plan) -> List[Tuple[str, int, int]]:
        return list(plan.source.listing)

    # ---------------------------------------------------------------- sinks

    def write(self, plan: Plan, path: str, fmt: str, format_options: dict,
              partition_keys: Sequence[str]) -> List[str]:
        fmt = _check_format(fmt)
        reader = plan.reader()
        if len(reader.schema) == 0:
            # No fields at all: the source listed no file (e.g. a bookmarked run with nothing
            # new). Nothing to write, and no partition key to look for.
            return []
        return pyformats.write(reader, path, fmt, format_options or {}, partition_keys)

    def write_sample(self, plan: Plan, path: str) -> List[str]:
        op = plan.ops[-1]
        if op._cache is None:
            plan.to_table()
        sample = op.sample if op.sample is not None else pa.table({})
        return native.write(pa.RecordBatchReader.from_batches(sample.schema, sample.to_batches()),
                            path, "json", {}, [])

    def purge(self, path: str, retention_ms: Optional[int], exclusions) -> List[str]:
        return native.delete_prefix(path, retention_ms, exclusions)


def glue_table(table) -> pa.Table:
    """A pyarrow Table (or RecordBatch, or what pa.table takes) with Glue types only: a schema
    pyarrow produced with other types (unsigned, large strings...) is normalized here."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    elif not isinstance(table, pa.Table):
        table = pa.table(table)
    schema = gt.to_arrow_schema(gt.from_arrow_schema(table.schema))
    if schema != table.schema:
        from openglue_runtime.engines.embedded.plan import conform_table
        table = conform_table(table, schema)
    return table


def _check_format(fmt: str) -> str:
    """The format's name; ValueError for one OpenGlue's file sources and sinks do not read or
    write (on either engine: the Spark engine runs these readers and writers in its tasks)."""
    f = (fmt or "").lower()
    if f not in FORMATS:
        raise ValueError("format {!r} is not supported by OpenGlue's file sources and sinks "
                         "(supported: csv, json, parquet, glueparquet, orc, avro; xml to read)".format(fmt))
    return f
