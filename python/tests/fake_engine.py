"""A pure-pyarrow stand-in for the C++ extension `openglue_runtime.engines.embedded._engine`, implementing the CONTRACT's
interface (list_files, scan, write, delete_prefix) closely enough to test the Python layer's use
of it before the engine is merged. Test scaffolding only: slow, in-memory, embedded store only.
It records its calls in `CALLS` so tests can check what the adapter asked for.
"""
import fnmatch
import json
import os
import re
import uuid

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.orc as porc
import pyarrow.parquet as pq

from openglue_runtime import types as gt
from openglue_runtime.engines.embedded.cast import glue_cast as _glue_cast
from openglue_runtime.engines.embedded.records import (infer_records, merge_types, records_to_table,
                                                       values_to_arrow)

CALLS = []


class EngineError(RuntimeError):
    pass


def _local(uri: str, storage: dict) -> str:
    if uri.startswith("s3://"):
        root = storage.get("s3_root")
        if not root:
            raise EngineError("{}: fake engine needs s3_root".format(uri))
        return os.path.join(root, uri[5:])
    if uri.startswith("file://"):
        return uri[7:]
    return uri


def list_files(paths, options, storage):
    CALLS.append(("list_files", list(paths), dict(options)))
    recurse = options.get("recurse", "true") != "false"
    excl = json.loads(options.get("exclusions", "[]"))
    out = []
    for p in paths:
        lp = _local(p, storage)
        found = []
        if os.path.isfile(lp):
            found.append((p, lp))
        elif os.path.isdir(lp):
            for dirpath, dirnames, filenames in os.walk(lp):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_"))) if recurse else []
                for fn in sorted(filenames):
                    if fn.startswith((".", "_")):
                        continue
                    full = os.path.join(dirpath, fn)
                    rel = os.path.relpath(full, lp)
                    found.append((p.rstrip("/") + "/" + rel, full))
        for uri, full in found:
            if any(fnmatch.fnmatch(uri, g.replace("**", "*")) for g in excl):
                continue
            st = os.stat(full)
            out.append((uri, st.st_size, int(st.st_mtime * 1000)))
    return out


_INT = re.compile(r"^[+-]?\d+$")
_NUM = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _csv_value(s):
    if s is None or s == "":
        return None
    if _INT.match(s):
        return int(s)
    if _NUM.match(s):
        return float(s)
    return s


class Scan:
    def __init__(self, files, fmt, options, storage):
        CALLS.append(("scan", list(files), fmt, dict(options)))
        self.files, self.fmt, self.options, self.storage = list(files), fmt, dict(options), storage
        self._typed = None

    def _raw(self) -> pa.Table:
        tables = []
        for f in self.files:
            lp = _local(f, self.storage)
            if self.fmt == "csv":
                header = self.options.get("withHeader", "false") == "true"
                skip = 1 if self.options.get("skipFirst", "false") == "true" else 0
                ro = pcsv.ReadOptions(autogenerate_column_names=not header, skip_rows=skip)
                po = pcsv.ParseOptions(delimiter=self.options.get("separator", ","),
                                       quote_char=self.options.get("quoteChar", '"'))
                t = pcsv.read_csv(lp, read_options=ro, parse_options=po,
                                  convert_options=pcsv.ConvertOptions(
                                      check_utf8=False, strings_can_be_null=False,
                                      column_types={}, auto_dict_encode=False))
                t = t.cast(pa.schema([pa.field(n, pa.string()) for n in t.column_names]))
                if not header:
                    t = t.rename_columns(["col%d" % i for i in range(t.num_columns)])
                tables.append(t)
            elif self.fmt == "json":
                with open(lp) as fh:
                    recs = [json.loads(line) for line in fh if line.strip()]
                tables.append(records_to_table(recs))
            elif self.fmt in ("parquet", "glueparquet"):
                tables.append(pq.read_table(lp))
            elif self.fmt == "orc":
                tables.append(porc.read_table(lp))
            else:
                raise EngineError("format {} is not supported by the embedded engine".format(self.fmt))
        if not tables:
            return pa.table({})
        if len(tables) == 1:
            return tables[0]
        return pa.concat_tables(tables, promote_options="permissive")

    def _typed_table(self) -> pa.Table:
        if self._typed is None:
            raw = self._raw()
            if self.fmt != "csv":
                self._typed = raw
            else:
                cols, fields = [], []
                for name in raw.column_names:
                    values = [_csv_value(v) for v in raw.column(name).to_pylist()]
                    dt = gt.NullType()
                    for v in values:
                        dt = merge_types(dt, infer_records([{"v": v}]).fields[0].dataType)
                    if isinstance(dt, gt.NullType):
                        dt = gt.StringType()
                    cols.append(values_to_arrow(values, dt))
                    fields.append(pa.field(name, gt.to_arrow_type(dt)))
                self._typed = pa.Table.from_arrays(cols, schema=pa.schema(fields))
        return self._typed

    def schema(self):
        return self._typed_table().schema

    def raw_schema(self):
        return self._raw().schema

    def stream(self, schema=None, batch_rows=65536):
        CALLS.append(("stream", None if schema is None else pa.schema(schema)))
        if schema is None:
            t = self._typed_table()
        else:
            schema = pa.schema(schema)
            raw = self._raw()
            cols = []
            for f in schema:
                if f.name in raw.column_names and _text_choice(f.type, raw.column(f.name).type):
                    cols.append(_per_value(raw.column(f.name), f.type))
                elif f.name in raw.column_names:
                    cols.append(_glue_cast(raw.column(f.name), gt.from_arrow_type(f.type)))
                else:
                    cols.append(pa.nulls(raw.num_rows, f.type))
            t = pa.Table.from_arrays(cols, schema=schema)
        return pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=batch_rows))


    def text_losses(self, schema):
        raw = self._raw()
        out = []
        for f in pa.schema(schema):
            if f.name not in raw.column_names or pa.types.is_string(f.type):
                continue
            text = raw.column(f.name).to_pylist()
            cast = _glue_cast(raw.column(f.name), gt.from_arrow_type(f.type)).to_pylist()
            if any(t not in (None, "") and c is None for t, c in zip(text, cast)):
                out.append(f.name)
        return out


def _text_choice(t, source):
    return (pa.types.is_union(t) and t.num_fields == 2 and pa.types.is_string(source)
            and pa.types.is_string(t.field(1).type))


def _per_value(column, t):
    """Text into choice(T, string) as the engine's CastTextPerValue: cast to T, the lost cells
    kept as strings."""
    text = column.to_pylist()
    cast = _glue_cast(column, gt.from_arrow_type(t.field(0).type)).to_pylist()
    ids, offsets, members, strings = [], [], [], []
    for x, c in zip(text, cast):
        lost = x not in (None, "") and c is None
        ids.append(1 if lost else 0)
        offsets.append(len(strings) if lost else len(members))
        (strings if lost else members).append(x if lost else c)
    return pa.UnionArray.from_dense(
        pa.array(ids, pa.int8()), pa.array(offsets, pa.int32()),
        [pa.array(members, t.field(0).type), pa.array(strings, pa.string())],
        [t.field(0).name, t.field(1).name], list(t.type_codes))


def scan(files, fmt, options, storage):
    return Scan(files, fmt, options, storage)


def _hive(v):
    if v is None:
        return "__HIVE_DEFAULT_PARTITION__"
    return re.sub(r"[/=%:#?\\]", lambda m: "%{:02X}".format(ord(m.group(0))), str(v))


def write(stream, path, fmt, options, partition_keys, storage):
    CALLS.append(("write", path, fmt, dict(options), list(partition_keys)))
    table = pa.RecordBatchReader.from_stream(stream).read_all()
    run = uuid.uuid4().hex
    groups = {}
    if partition_keys:
        keys = list(zip(*[table.column(k).to_pylist() for k in partition_keys])) if table.num_rows else []
        for i, k in enumerate(keys):
            groups.setdefault(k, []).append(i)
    else:
        groups[()] = list(range(table.num_rows))
    data = table.drop_columns(list(partition_keys)) if partition_keys else table
    uris = []
    for n, (key, rows) in enumerate(sorted(groups.items(), key=lambda kv: str(kv[0]))):
        sub = data.take(pa.array(rows, pa.int64()))
        folder = "/".join("{}={}".format(k, _hive(v)) for k, v in zip(partition_keys, key))
        codec = options.get("compression", "snappy") if fmt in ("parquet", "glueparquet") else None
        ext = {"csv": "csv", "json": "json", "parquet": "parquet", "glueparquet": "parquet", "orc": "orc"}[fmt]
        name = "part-{:05d}-{}.{}{}".format(n, run, codec + "." if codec else "", ext)
        rel = (folder + "/" if folder else "") + name
        uri = path.rstrip("/") + "/" + rel
        lp = _local(uri, storage)
        os.makedirs(os.path.dirname(lp), exist_ok=True)
        tmp = os.path.join(os.path.dirname(lp), "." + name + ".tmp")
        if fmt in ("parquet", "glueparquet"):
            pq.write_table(sub, tmp, compression=codec)
        elif fmt == "orc":
            porc.write_table(sub, tmp)
        elif fmt == "csv":
            pcsv.write_csv(sub, tmp, write_options=pcsv.WriteOptions(
                include_header=options.get("writeHeader", "true") == "true",
                delimiter=options.get("separator", ",")))
        else:
            with open(tmp, "w") as fh:
                for rec in sub.to_pylist():
                    fh.write(json.dumps(rec, default=str) + "\n")
        os.replace(tmp, lp)
        uris.append(uri)
    return uris


def _glob_regex(pattern):
    """A Glue glob without classes or groups (`**`, `*`, `?`, `\\` escapes) as a regex."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append({"*": "[^/]*", "?": "[^/]"}.get(c, re.escape(c)))
        i += 1
    return re.compile("".join(out) + r"\Z")


def delete_prefix(path, storage, older_than_ms=None, exclusions=None):
    CALLS.append(("delete_prefix", path, older_than_ms, exclusions))
    keep = [_glob_regex(p) for p in exclusions or []]
    out = []
    for uri, size, mtime in list_files([path], {}, storage):
        if older_than_ms is not None and mtime >= older_than_ms:
            continue
        if any(k.match(uri) for k in keep):
            continue
        os.remove(_local(uri, storage))
        out.append(uri)
    return out
