"""Dotted field paths (`a.b.c`, with back-quotes around names holding dots: `` `a.b`.c ``) and
the column surgery the transforms share: read a path, replace a leaf, insert into nested structs.

Columns are handled as an ordered list of (name, pa.Array) pairs.
"""
from typing import Callable, List, Optional, Tuple

import pyarrow as pa
import pyarrow.compute as pc

Columns = List[Tuple[str, pa.Array]]


def parse_path(path: str) -> List[str]:
    parts, cur, quoted = [], [], False
    for ch in path:
        if ch == "`":
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def join_path(parts: List[str]) -> str:
    return ".".join("`{}`".format(p) if "." in p else p for p in parts)


def columns_of(batch) -> Columns:
    cols = []
    for i, f in enumerate(batch.schema):
        c = batch.column(i)
        if isinstance(c, pa.ChunkedArray):
            c = c.combine_chunks()
        cols.append((f.name, c))
    return cols


def batch_of(cols: Columns, num_rows: int) -> pa.RecordBatch:
    if not cols:
        return pa.RecordBatch.from_pydict({}).slice(0, 0) if num_rows == 0 else \
            pa.RecordBatch.from_arrays([], schema=pa.schema([]))
    return pa.RecordBatch.from_arrays([c for _, c in cols], names=[n for n, _ in cols])


def struct_children(arr: pa.Array) -> Columns:
    """The children of a struct array with the parent's nulls applied."""
    names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
    if arr.null_count == 0:
        return [(n, arr.field(i)) for i, n in enumerate(names)]
    if not any(_has_union(arr.type.field(i).type) for i in range(arr.type.num_fields)):
        flat = arr.flatten()
        return [(n, flat[i]) for i, n in enumerate(names)]
    # Arrow cannot apply a parent's validity to a union (it has none): rebuild those children.
    from openglue_runtime.engines.embedded.records import values_to_arrow
    from openglue_runtime import types as gt
    valid = arr.is_valid().to_pylist()
    out = []
    for i, n in enumerate(names):
        child = arr.field(i)
        if _has_union(child.type):
            values = [v if ok else None for v, ok in zip(child.to_pylist(), valid)]
            out.append((n, values_to_arrow(values, gt.from_arrow_type(child.type))))
        else:
            out.append((n, pa.StructArray.from_arrays([child], names=[n],
                                                      mask=arr.is_null()).flatten()[0]))
    return out


def _has_union(t: pa.DataType) -> bool:
    if pa.types.is_union(t):
        return True
    if pa.types.is_struct(t) or pa.types.is_list(t) or pa.types.is_map(t):
        return any(_has_union(t.field(i).type) for i in range(t.num_fields))
    return False


def make_struct(cols: Columns, length: int, mask: Optional[pa.Array] = None) -> pa.Array:
    if mask is not None and (mask.null_count == 0 and not pc.any(mask).as_py()):
        mask = None
    if not cols:
        return pa.array([{}] * length, pa.struct([]))
    return pa.StructArray.from_arrays([c for _, c in cols], names=[n for n, _ in cols], mask=mask)


def _find(cols: Columns, name: str, case_sensitive: bool = True) -> int:
    for i, (n, _) in enumerate(cols):
        if n == name:
            return i
    if not case_sensitive:
        low = name.lower()
        for i, (n, _) in enumerate(cols):
            if n.lower() == low:
                return i
    return -1


def get_path(cols: Columns, parts: List[str], case_sensitive: bool = True) -> Optional[pa.Array]:
    i = _find(cols, parts[0], case_sensitive)
    if i < 0:
        return None
    arr = cols[i][1]
    if len(parts) == 1:
        return arr
    if not pa.types.is_struct(arr.type):
        return None
    return get_path(struct_children(arr), parts[1:], case_sensitive)


def replace_at(cols: Columns, parts: List[str],
               fn: Callable[[str, pa.Array], Columns]) -> Columns:
    """Replace the leaf at `parts` by fn(name, array) (zero or more columns); nested structs
    on the way are rebuilt keeping their nulls. A missing path leaves the columns unchanged."""
    i = _find(cols, parts[0])
    if i < 0:
        return cols
    name, arr = cols[i]
    if len(parts) == 1:
        return cols[:i] + fn(name, arr) + cols[i + 1:]
    new = _replace_inside(arr, parts[1:], fn)
    return cols if new is None else cols[:i] + [(name, new)] + cols[i + 1:]


def _replace_inside(arr: pa.Array, parts: List[str],
                    fn: Callable[[str, pa.Array], Columns]) -> Optional[pa.Array]:
    """`arr` with the field at `parts` below it replaced: through a struct's fields, and through
    every element of an array (Glue's paths name the members of an array's structs without an
    index: `friends.age` is the age in each of `friends`). None when the path does not apply."""
    if pa.types.is_struct(arr.type):
        children = replace_at(struct_children(arr), parts, fn)
        return make_struct(children, len(arr), mask=arr.is_null() if arr.null_count else None)
    if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
        values = _replace_inside(arr.values, parts, fn)
        if values is None:
            return None
        return type(arr).from_arrays(arr.offsets, values,
                                     mask=arr.is_null() if arr.null_count else None)
    return None


def insert_at(cols: Columns, parts: List[str], arr: pa.Array, length: int) -> Columns:
    """Put `arr` at `parts`, creating (or extending) structs on the way."""
    i = _find(cols, parts[0])
    if len(parts) == 1:
        if i >= 0:
            return cols[:i] + [(parts[0], arr)] + cols[i + 1:]
        return cols + [(parts[0], arr)]
    if i >= 0 and pa.types.is_struct(cols[i][1].type):
        parent = cols[i][1]
        children = insert_at(struct_children(parent), parts[1:], arr, length)
        new = make_struct(children, length)
        return cols[:i] + [(parts[0], new)] + cols[i + 1:]
    new = make_struct(insert_at([], parts[1:], arr, length), length)
    if i >= 0:
        return cols[:i] + [(parts[0], new)] + cols[i + 1:]
    return cols + [(parts[0], new)]
