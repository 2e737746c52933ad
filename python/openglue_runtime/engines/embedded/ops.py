"""The operations of the embedded engine's plans: one class per Glue transform."""
import json
import random
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import pyarrow as pa
import pyarrow.compute as pc

from openglue_runtime import types as gt
from openglue_runtime.engines.embedded.cast import glue_cast
from openglue_runtime.engines.embedded.paths import (Columns, batch_of, columns_of, get_path,
                                                     insert_at, make_struct, parse_path, replace_at,
                                                     struct_children)
from openglue_runtime.engines.embedded.plan import Op, concat_tables
from openglue_runtime.engines.embedded.records import (infer_value, merge_types, null_array,
                                                       records_to_table, values_to_arrow)

_GENERIC = {"struct", "array", "map", "choice"}


class DynamicRecord(dict):
    """A record as Glue's map/filter callables see it: a dict of field -> value, nested
    structs as dicts and arrays as lists."""


# ---------------------------------------------------------------- projection and mapping


class ApplyMapping(Op):
    name = "ApplyMapping"

    def __init__(self, mappings, case_sensitive: bool = False, **kw):
        super().__init__(**kw)
        norm = []
        for m in mappings:
            m = tuple(m)
            if len(m) == 4:
                src, stype, tgt, ttype = m
            elif len(m) == 3:
                src, tgt, ttype = m
                stype = ttype
            else:
                raise ValueError("a mapping is (source, source_type, target, target_type): {!r}"
                                 .format(m))
            norm.append((str(src), str(stype), str(tgt), str(ttype)))
        self.mappings = norm
        self.case_sensitive = case_sensitive
        self._types = [None if t.lower() in _GENERIC else gt.type_from_name(t)
                       for _, _, _, t in norm]

    def read_schema(self) -> Optional[pa.Schema]:
        """The schema the scan under this mapping may read into directly (no inference pass),
        or None. A source field mapped once to a scalar target type is read straight into that
        type (the scan's cast from the file's text is Glue's cast, so the value is what casting
        via the source type would give, without a second pass over every column); a field
        mapped several times, or to a non-scalar type, is read as its declared source type.
        The scan matches these names in any case, so a case-sensitive mapping reads no schema."""
        if self.case_sensitive:
            return None
        uses: Dict[str, int] = {}
        for src, _, _, _ in self.mappings:
            parts = parse_path(src)
            if len(parts) == 1:
                uses[parts[0]] = uses.get(parts[0], 0) + 1
        fields, seen = [], set()
        for (src, stype, _, _), dt in zip(self.mappings, self._types):
            parts = parse_path(src)
            if len(parts) != 1 or stype.lower() in _GENERIC:
                return None
            if parts[0] in seen:
                continue
            seen.add(parts[0])
            try:
                read_type = gt.to_arrow_type(gt.type_from_name(stype))
                if uses[parts[0]] == 1 and dt is not None:
                    target = gt.to_arrow_type(dt)
                    if not (pa.types.is_nested(target) or pa.types.is_union(target)):
                        read_type = target
                fields.append(pa.field(parts[0], read_type))
            except ValueError:
                return None
        return pa.schema(fields) if fields else None

    def batch(self, batch):
        cols = columns_of(batch)
        n = batch.num_rows
        out: Columns = []
        for (src, _, tgt, ttype), dt in zip(self.mappings, self._types):
            arr = get_path(cols, parse_path(src), self.case_sensitive)
            if dt is None:
                if arr is None:
                    arr = null_array(n, pa.null())
            elif arr is None:
                arr = null_array(n, gt.to_arrow_type(dt))
            else:
                arr = glue_cast(arr, dt)
            out = insert_at(out, parse_path(tgt), arr, n)
        return batch_of(out, n)


class SelectFields(Op):
    name = "SelectFields"

    def __init__(self, paths: Sequence[str], **kw):
        super().__init__(**kw)
        self.paths = [parse_path(p) for p in paths]

    def batch(self, batch):
        cols = columns_of(batch)
        out: Columns = []
        for parts in self.paths:
            arr = get_path(cols, parts)
            if arr is not None:
                out = insert_at(out, parts, arr, batch.num_rows)
        return batch_of(out, batch.num_rows)


class DropFields(Op):
    name = "DropFields"

    def __init__(self, paths: Sequence[str], **kw):
        super().__init__(**kw)
        self.paths = [parse_path(p) for p in paths]

    def batch(self, batch):
        cols = columns_of(batch)
        for parts in self.paths:
            cols = replace_at(cols, parts, lambda n, a: [])
        return batch_of(cols, batch.num_rows)


class RenameField(Op):
    name = "RenameField"

    def __init__(self, old: str, new: str, **kw):
        super().__init__(**kw)
        self.old, self.new = parse_path(old), parse_path(new)

    def batch(self, batch):
        cols = columns_of(batch)
        if self.old[:-1] == self.new[:-1]:
            leaf = self.new[-1]
            cols = replace_at(cols, self.old, lambda n, a: [(leaf, a)])
        else:
            arr = get_path(cols, self.old)
            if arr is None:
                return batch
            cols = replace_at(cols, self.old, lambda n, a: [])
            cols = insert_at(cols, self.new, arr, batch.num_rows)
        return batch_of(cols, batch.num_rows)


class Unnest(Op):
    """Structs flattened into top-level `parent.child` fields; arrays are left as they are."""
    name = "Unnest"

    def batch(self, batch):
        out: Columns = []

        def walk(prefix, name, arr):
            full = prefix + name if not prefix else prefix + "." + name
            if pa.types.is_struct(arr.type) and arr.type.num_fields:
                for cn, ca in struct_children(arr):
                    walk(full, cn, ca)
            else:
                out.append((full, arr))
        for name, arr in columns_of(batch):
            walk("", name, arr)
        return batch_of(out, batch.num_rows)


# ---------------------------------------------------------------- choices


def _project(arr: pa.Array, member: str, dt: Optional[gt.DataType] = None) -> pa.Array:
    """The values of union member `member` (null elsewhere); a non-union is cast."""
    if not pa.types.is_union(arr.type):
        return glue_cast(arr, dt) if dt is not None else arr
    names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
    if member not in names:
        target = gt.to_arrow_type(dt) if dt is not None else pa.null()
        return null_array(len(arr), target)
    k = names.index(member)
    code = arr.type.type_codes[k]
    child = arr.field(k)
    codes = pa.array(arr.type_codes)
    offsets = pa.array(arr.offsets)
    mask = pc.equal(codes, pa.scalar(code, pa.int8()))
    idx = pc.if_else(mask, offsets, pa.scalar(None, pa.int32()))
    out = child.take(idx)
    if dt is not None:
        out = glue_cast(out, dt)
    return out


def _resolve(name: str, arr: pa.Array, action: str, catalog_types: Dict[str, gt.DataType],
             path_key: str) -> Columns:
    action = action.strip()
    low = action.lower()
    if low.startswith("cast:"):
        return [(name, glue_cast(arr, gt.type_from_name(action[5:])))]
    if low.startswith("project:"):
        dt = gt.type_from_name(action[8:])
        return [(name, _project(arr, dt.typeName(), dt))]
    if low == "make_cols":
        if not pa.types.is_union(arr.type):
            return [(name, arr)]
        # The first member's column takes the choice's place; the others go last in the
        # containing struct (_trailing_last), as Glue's make_cols gives them: its columns
        # appear in the order its records first show them, and a choice's members are in that
        # order (aws-glue-samples' resolve_choice.md: `provider id_long` in place,
        # `provider id_string` after every other column).
        return [("{}{}_{}".format(_TRAILING if i else "", name, arr.type.field(i).name),
                 _project(arr, arr.type.field(i).name)) for i in range(arr.type.num_fields)]
    if low == "make_struct":
        if not pa.types.is_union(arr.type):
            return [(name, arr)]
        kids = [(arr.type.field(i).name, _project(arr, arr.type.field(i).name))
                for i in range(arr.type.num_fields)]
        return [(name, make_struct(kids, len(arr)))]
    if low == "match_catalog":
        dt = catalog_types.get(path_key) or catalog_types.get(path_key.lower())
        if dt is None:
            return [(name, arr)]
        return [(name, glue_cast(arr, dt))]
    raise ValueError("unknown resolveChoice action {!r} (use cast:<type>, project:<type>, "
                     "make_cols, make_struct or match_catalog)".format(action))


_TRAILING = "\x00trailing:"  # a make_cols column that goes after its struct's other fields


def _trailing_last(cols: Columns) -> Columns:
    """Columns (and struct fields, at any depth) that make_cols marked as trailing moved after
    the other fields of their level, in their order, unmarked."""
    if not any(n.startswith(_TRAILING) or _has_trailing(a.type) for n, a in cols):
        return cols
    front: Columns = []
    back: Columns = []
    for name, arr in cols:
        arr = _trailing_inside(arr)
        if name.startswith(_TRAILING):
            back.append((name[len(_TRAILING):], arr))
        else:
            front.append((name, arr))
    return front + back


def _trailing_inside(arr: pa.Array) -> pa.Array:
    if not _has_trailing(arr.type):
        return arr
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(arr.type):
        return make_struct(_trailing_last(struct_children(arr)), len(arr), mask=mask)
    return type(arr).from_arrays(arr.offsets, _trailing_inside(arr.values), mask=mask)


def _has_trailing(t: pa.DataType) -> bool:
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_trailing(t.value_type)
    return pa.types.is_struct(t) and any(
        t.field(i).name.startswith(_TRAILING) or _has_trailing(t.field(i).type)
        for i in range(t.num_fields))


class ResolveChoice(Op):
    name = "ResolveChoice"

    def __init__(self, specs: Optional[Sequence[Tuple[str, str]]] = None,
                 choice: str = "", catalog_types: Optional[Dict[str, gt.DataType]] = None, **kw):
        super().__init__(**kw)
        if specs and choice:
            raise ValueError("resolveChoice takes either specs or choice, not both")
        if not specs and not choice:
            raise ValueError("resolveChoice needs specs or choice")
        self.specs = [(parse_path(p), a) for p, a in (specs or [])]
        self.choice = choice
        self.catalog_types = catalog_types or {}

    def batch(self, batch):
        cols = columns_of(batch)
        if self.specs:
            for parts, action in self.specs:
                key = ".".join(parts)
                cols = replace_at(cols, parts,
                                  lambda n, a, act=action, k=key: _resolve(n, a, act, self.catalog_types, k))
            return batch_of(_trailing_last(cols), batch.num_rows)
        return batch_of(_trailing_last(self._all(cols, "")), batch.num_rows)

    def _all(self, cols: Columns, prefix: str) -> Columns:
        out: Columns = []
        for name, arr in cols:
            key = name if not prefix else prefix + "." + name
            if pa.types.is_union(arr.type):
                out.extend(_resolve(name, arr, self.choice, self.catalog_types, key))
            elif pa.types.is_struct(arr.type) and _has_union(arr.type):
                kids = self._all(struct_children(arr), key)
                out.append((name, make_struct(kids, len(arr),
                                              mask=arr.is_null() if arr.null_count else None)))
            else:
                out.append((name, arr))
        return out


def _has_union(t: pa.DataType) -> bool:
    if pa.types.is_union(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_union(t.field(i).type) for i in range(t.num_fields))
    return False


# ---------------------------------------------------------------- callables


class Filter(Op):
    name = "Filter"
    can_error = True

    def __init__(self, f: Callable, **kw):
        super().__init__(**kw)
        self.f = f

    def batch(self, batch):
        keep = []
        for rec in batch.to_pylist():
            try:
                keep.append(bool(self.f(DynamicRecord(rec))))
            except Exception as e:  # noqa: BLE001 - a failing record becomes an error record
                self.record_error(rec, e)
                keep.append(False)
        return batch.filter(pa.array(keep, pa.bool_())) if keep else batch


class Map(Op):
    name = "Map"
    can_error = True
    streamable = False

    def __init__(self, f: Callable, **kw):
        super().__init__(**kw)
        self.f = f

    def table(self, table):
        parts = []
        for batch in table.to_batches():
            out = []
            for rec in batch.to_pylist():
                try:
                    res = self.f(DynamicRecord(rec))
                except Exception as e:  # noqa: BLE001
                    self.record_error(rec, e)
                    continue
                if res is None:
                    continue
                if not isinstance(res, dict):
                    self.record_error(rec, TypeError(
                        "map function returned {} instead of a record".format(type(res).__name__)))
                    continue
                out.append(dict(res))
            if out:
                parts.append(records_to_table(out))
        if not parts:
            return pa.table({})
        return concat_tables(parts)


class SplitRowsOp(Op):
    """Rows matching every comparison (`keep=True`) or the others (`keep=False`)."""
    name = "SplitRows"
    _OPS = {">": pc.greater, "<": pc.less, ">=": pc.greater_equal, "<=": pc.less_equal,
            "=": pc.equal, "==": pc.equal, "!=": pc.not_equal}

    def __init__(self, comparison_dict: Dict[str, Dict[str, object]], keep: bool, **kw):
        super().__init__(**kw)
        self.comparisons = comparison_dict
        self.keep = keep

    def batch(self, batch):
        cols = columns_of(batch)
        mask = pa.array([True] * batch.num_rows, pa.bool_())
        for path, conds in self.comparisons.items():
            arr = get_path(cols, parse_path(path))
            for op, value in conds.items():
                if op not in self._OPS:
                    raise ValueError("split_rows: unknown comparison {!r}".format(op))
                if arr is None:
                    m = pa.array([False] * batch.num_rows, pa.bool_())
                else:
                    target = arr.type
                    if pa.types.is_union(target):
                        arr = glue_cast(arr, infer_value(value))
                    m = self._OPS[op](arr, pa.scalar(value).cast(arr.type)
                                      if not pa.types.is_null(arr.type) else pa.scalar(value))
                mask = pc.and_kleene(mask, m)
        mask = pc.fill_null(mask, False)
        if not self.keep:
            mask = pc.invert(mask)
        return batch.filter(mask)


# ---------------------------------------------------------------- whole-table steps


class DropNullFields(Op):
    name = "DropNullFields"
    streamable = False

    def table(self, table):
        table = table.combine_chunks()
        cols = [(n, table.column(n).combine_chunks() if table.num_rows else
                 pa.array([], table.schema.field(n).type)) for n in table.column_names]
        kept = self._drop(cols, table.num_rows)
        if not kept:
            return pa.table({})
        return pa.Table.from_batches([batch_of(kept, table.num_rows)]) if table.num_rows else \
            pa.Table.from_arrays([a for _, a in kept], names=[n for n, _ in kept])

    def _drop(self, cols: Columns, n: int) -> Columns:
        out: Columns = []
        for name, arr in cols:
            if pa.types.is_null(arr.type) or (n and arr.null_count == len(arr)):
                continue
            if pa.types.is_struct(arr.type) and arr.type.num_fields:
                kids = self._drop(struct_children(arr), n)
                if not kids:
                    continue
                arr = make_struct(kids, len(arr), mask=arr.is_null() if arr.null_count else None)
            out.append((name, arr))
        return out


class Join(Op):
    """Inner equi-join; the output has every field of both frames (both key columns kept)."""
    name = "Join"
    streamable = False

    def __init__(self, keys1: Sequence[str], keys2: Sequence[str], other, **kw):
        super().__init__(**kw)
        if len(keys1) != len(keys2) or not keys1:
            raise ValueError("join needs the same, non-zero number of keys on both sides")
        self.keys1, self.keys2, self.other = list(keys1), list(keys2), other

    def table(self, left):
        right = self.other.to_table()
        lk = [pa.chunked_array(_key_col(left, k)) for k in self.keys1]
        rk = [pa.chunked_array(_key_col(right, k)) for k in self.keys2]
        for i, (a, b) in enumerate(zip(lk, rk)):
            if a.type != b.type:
                common = merge_types(gt.from_arrow_type(a.type), gt.from_arrow_type(b.type))
                if isinstance(common, gt.ChoiceType):
                    common = gt.StringType()
                lk[i], rk[i] = glue_cast(a, common), glue_cast(b, common)
        lt = pa.table({"k%d" % i: c for i, c in enumerate(lk)}).append_column(
            "__l", pa.array(range(left.num_rows), pa.int64()))
        rt = pa.table({"k%d" % i: c for i, c in enumerate(rk)}).append_column(
            "__r", pa.array(range(right.num_rows), pa.int64()))
        keys = ["k%d" % i for i in range(len(lk))]
        joined = lt.join(rt, keys=keys, join_type="inner").sort_by([("__l", "ascending"),
                                                                    ("__r", "ascending")])
        li, ri = joined.column("__l"), joined.column("__r")
        lt2, rt2 = left.take(li), right.take(ri)
        arrays, names = [], []
        for n in lt2.column_names:
            arrays.append(lt2.column(n))
            names.append(n)
        for n in rt2.column_names:
            if n in names:
                if n in self.keys2 and n in self.keys1 and self.keys1.index(n) == self.keys2.index(n):
                    continue  # the same key on both sides: one column
                name = n
                while name in names:
                    name = "." + name  # Glue-style disambiguation of a colliding field
                arrays.append(rt2.column(n))
                names.append(name)
            else:
                arrays.append(rt2.column(n))
                names.append(n)
        return pa.Table.from_arrays(arrays, names=names)


def _key_col(table: pa.Table, path: str) -> pa.Array:
    parts = parse_path(path)
    if parts[0] not in table.column_names:
        raise KeyError("join key {!r} is not a field of the frame".format(path))
    arr = table.column(parts[0]).combine_chunks() if table.num_rows else \
        pa.array([], table.schema.field(parts[0]).type)
    if len(parts) > 1:
        arr = get_path([(parts[0], arr)], parts)
        if arr is None:
            raise KeyError("join key {!r} is not a field of the frame".format(path))
    return arr


class Union(Op):
    name = "Union"
    streamable = False

    def __init__(self, others, **kw):
        super().__init__(**kw)
        self.others = list(others)

    def table(self, table):
        return concat_tables([table] + [o.to_table() for o in self.others])


class MergeFrames(Op):
    """Records of the staging frame replace source records with the same primary keys;
    staging records with new keys are added; other source records stay."""
    name = "MergeDynamicFrame"
    streamable = False

    def __init__(self, stage, primary_keys: Sequence[str], **kw):
        super().__init__(**kw)
        if not primary_keys:
            raise ValueError("mergeDynamicFrame needs primary_keys")
        self.stage, self.keys = stage, list(primary_keys)

    def table(self, table):
        stage = self.stage.to_table()
        skeys = set(zip(*[_key_col(stage, k).to_pylist() for k in self.keys])) if stage.num_rows else set()
        if table.num_rows:
            src_keys = list(zip(*[_key_col(table, k).to_pylist() for k in self.keys]))
            keep = pa.array([k not in skeys for k in src_keys], pa.bool_())
            table = table.filter(keep)
        return concat_tables([table, stage])


class Unbox(Op):
    """A string field holding JSON parsed into its structure (types inferred over all rows)."""
    name = "Unbox"
    streamable = False

    def __init__(self, path: str, fmt: str = "json", **kw):
        super().__init__(**kw)
        if fmt.lower() != "json":
            raise ValueError("unbox supports format json on the embedded engine, not {!r}".format(fmt))
        self.path = parse_path(path)

    def table(self, table):
        if table.num_rows == 0:
            return table
        table = table.combine_chunks()
        cols = [(n, table.column(n).chunk(0) if table.column(n).num_chunks else
                 pa.array([], table.schema.field(n).type)) for n in table.column_names]

        def parse(name, arr):
            values = []
            for v in arr.to_pylist():
                if isinstance(v, str):
                    try:
                        values.append(json.loads(v))
                    except ValueError:
                        values.append(None)
                else:
                    values.append(None)
            dt: gt.DataType = gt.NullType()
            for v in values:
                dt = merge_types(dt, infer_value(v))
            return [(name, values_to_arrow(values, dt))]
        cols = replace_at(cols, self.path, parse)
        return pa.Table.from_batches([batch_of(cols, table.num_rows)])


class Repartition(Op):
    name = "Repartition"

    def __init__(self, n: int, **kw):
        super().__init__(**kw)
        self.n = int(n)

    def batch(self, batch):
        return batch


class Spigot(Op):
    """Passes rows through; samples them (`topk` first records, or each with probability
    `prob`) into `sample`, which the frame then writes as JSON to the spigot path."""
    name = "Spigot"
    streamable = False

    def __init__(self, options: Optional[dict] = None, **kw):
        super().__init__(**kw)
        options = options or {}
        self.topk = int(options.get("topk", 100)) if "prob" not in options or "topk" in options else None
        self.prob = float(options["prob"]) if "prob" in options else None
        self.seed = options.get("seed")
        self.sample: Optional[pa.Table] = None

    def table(self, table):
        sample = table
        if self.prob is not None:
            rng = random.Random(self.seed)
            sample = table.filter(pa.array([rng.random() < self.prob for _ in range(table.num_rows)],
                                           pa.bool_()))
        if self.topk is not None:
            sample = sample.slice(0, self.topk)
        self.sample = sample
        return table


# ---------------------------------------------------------------- relationalize


def relationalize(table: pa.Table, root_name: str) -> Dict[str, pa.Table]:
    """Glue's relationalize: the root table with nested structs flattened into `a.b` columns and
    each array replaced by a long id; one table per array path named `<root>_<path>` with columns
    `id` (the parent's id), `index` (position in the array) and `<path>.val` (scalars) or
    `<path>.val.<field>` (structs flattened), recursively for arrays of arrays."""
    out: Dict[str, pa.Table] = {}
    _relationalize(table.to_pylist(), gt.from_arrow_schema(table.schema), root_name, root_name,
                   "", out, None)
    return out


def _flatten_record(rec, dt: gt.StructType, prefix: str, row: dict, arrays: List[tuple]):
    for f in dt.fields:
        key = f.name if not prefix else prefix + "." + f.name
        v = rec.get(f.name) if isinstance(rec, dict) else None
        if isinstance(f.dataType, gt.StructType):
            _flatten_record(v, f.dataType, key, row, arrays)
        elif isinstance(f.dataType, gt.ArrayType):
            arrays.append((key, v, f.dataType.elementType))
            row[key] = None
        else:
            row[key] = v


def _flat_types(dt: gt.StructType, prefix: str, out: List[tuple]):
    for f in dt.fields:
        key = f.name if not prefix else prefix + "." + f.name
        if isinstance(f.dataType, gt.StructType):
            _flat_types(f.dataType, key, out)
        elif isinstance(f.dataType, gt.ArrayType):
            out.append((key, gt.LongType()))
        else:
            out.append((key, f.dataType))


def _relationalize(records, dt: gt.StructType, root_name: str, table_name: str, path_prefix: str,
                   out: Dict[str, pa.Table], _unused=None):
    rows = []
    pending: Dict[str, List] = {}
    elem_types: Dict[str, gt.DataType] = {}
    counters: Dict[str, int] = {}
    for rec in records:
        row: dict = {}
        arrays: List[tuple] = []
        _flatten_record(rec, dt, "", row, arrays)
        for key, value, et in arrays:
            elem_types[key] = et
            if value is None:
                row[key] = None
                continue
            counters[key] = counters.get(key, 0) + 1
            ident = counters[key]
            row[key] = ident
            pending.setdefault(key, []).append((ident, value))
        rows.append(row)
    types: List[tuple] = []
    _flat_types(dt, "", types)
    schema = gt.StructType([gt.Field(n, t) for n, t in types])
    out[table_name] = records_to_table(rows, schema)
    for key, et in elem_types.items():
        full_path = key if not path_prefix else path_prefix + "." + key
        child_name = root_name + "_" + full_path
        child_rows = []
        ctypes: List[tuple] = [("id", gt.LongType()), ("index", gt.IntegerType())]
        val = full_path + ".val"
        if isinstance(et, gt.StructType):
            sub: List[tuple] = []
            _flat_types(et, "", sub)
            ctypes += [(val + "." + n, t) for n, t in sub]
        elif isinstance(et, gt.ArrayType):
            ctypes.append((val, gt.LongType()))
        else:
            ctypes.append((val, et))
        nested_counter = 0
        grand: List = []
        for ident, values in pending.get(key, []):
            for i, v in enumerate(values):
                row = {"id": ident, "index": i}
                if isinstance(et, gt.StructType):
                    flat: dict = {}
                    arrs: List[tuple] = []
                    _flatten_record(v, et, "", flat, arrs)
                    for n, x in flat.items():
                        row[val + "." + n] = x
                    for n, x, sub_et in arrs:
                        if x is None:
                            row[val + "." + n] = None
                        else:
                            nested_counter += 1
                            row[val + "." + n] = nested_counter
                            grand.append((val + "." + n, nested_counter, x, sub_et))
                elif isinstance(et, gt.ArrayType):
                    if v is None:
                        row[val] = None
                    else:
                        nested_counter += 1
                        row[val] = nested_counter
                        grand.append((val, nested_counter, v, et.elementType))
                else:
                    row[val] = v
                child_rows.append(row)
        schema_c = gt.StructType([gt.Field(n, t) for n, t in ctypes])
        out[child_name] = records_to_table(child_rows, schema_c)
        by_path: Dict[str, list] = {}
        for p, ident, values, sub_et in grand:
            by_path.setdefault(p, []).append((ident, values, sub_et))
        for p, items in by_path.items():
            wrapper = gt.StructType([gt.Field("v", gt.ArrayType(items[0][2]))])
            recs = [{"v": values} for _, values, _ in items]
            sub_out: Dict[str, pa.Table] = {}
            _relationalize(recs, wrapper, root_name, "__discard", "", sub_out, None)
            # re-key the sub tables: their ids were assigned 1..n in the same order as ours
            for name, t in sub_out.items():
                if name == "__discard":
                    continue
                suffix = name[len(root_name) + 1 + 1:]  # strip "<root>_v"
                new_name = root_name + "_" + p + suffix
                renamed = [c if c in ("id", "index") else p + c[1:] for c in t.column_names]
                out[new_name] = t.rename_columns(renamed)
