"""Glue's cast semantics on Arrow arrays: a value that does not convert becomes null, never an
error; a choice casts each member; numbers -> string.

`glue_cast` uses the engine's C++ kernel (`_engine.glue_cast`) when the extension module is
present. The pure pyarrow/Python implementation below is the adapter's temporary fallback until
the engine is merged (and stays as the reference for tests): it is correct but per-element for
anything pyarrow's own cast refuses.
"""
import datetime
import decimal
import math
import re
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from openglue_runtime import types as gt
from openglue_runtime.engines.embedded import native
from openglue_runtime.engines.embedded.records import (null_array, to_string_py, values_to_arrow)  # noqa: F401

_INT_RANGES = {"byte": (-2**7, 2**7), "short": (-2**15, 2**15), "int": (-2**31, 2**31),
               "long": (-2**63, 2**63)}
_NUM_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def _parse_number(v: Any):
    if isinstance(v, bool):
        return 1 if v else 0
    if isinstance(v, (int, float, decimal.Decimal)):
        return v
    if isinstance(v, str):
        s = v.strip()
        if _NUM_RE.match(s):
            try:
                return decimal.Decimal(s)
            except decimal.InvalidOperation:
                return None
        if s.lower() in ("nan", "infinity", "-infinity", "inf", "-inf"):
            return float(s.replace("inity", ""))
    return None


def convert_py(v: Any, dt: gt.DataType) -> Any:
    """One Python value -> the Python value of Glue type `dt`, or None if it does not convert."""
    if v is None:
        return None
    name = dt.typeName()
    try:
        if isinstance(dt, (gt.StringType, gt.EnumType)):
            return to_string_py(v)
        if name in _INT_RANGES:
            n = _parse_number(v)
            if n is None or (isinstance(n, float) and (math.isnan(n) or math.isinf(n))):
                return None
            n = int(n)
            lo, hi = _INT_RANGES[name]
            return n if lo <= n < hi else None
        if isinstance(dt, (gt.DoubleType, gt.FloatType)):
            n = _parse_number(v)
            return None if n is None else float(n)
        if isinstance(dt, gt.DecimalType):
            n = _parse_number(v)
            if n is None or (isinstance(n, float) and (math.isnan(n) or math.isinf(n))):
                return None
            q = decimal.Decimal(str(n)).quantize(decimal.Decimal(1).scaleb(-dt.scale),
                                                 rounding=decimal.ROUND_HALF_UP)
            return q if len(q.as_tuple().digits) <= dt.precision else None
        if isinstance(dt, gt.BooleanType):
            if isinstance(v, bool):
                return v
            if isinstance(v, (int, float)):
                return v != 0
            s = str(v).strip().lower()
            return {"true": True, "false": False, "t": True, "f": False, "1": True,
                    "0": False, "yes": True, "no": False}.get(s)
        if isinstance(dt, gt.DateType):
            if isinstance(v, datetime.datetime):
                return v.date()
            if isinstance(v, datetime.date):
                return v
            s = str(v).strip()
            return datetime.date.fromisoformat(s[:10]) if len(s) >= 10 else None
        if isinstance(dt, gt.TimestampType):
            if isinstance(v, datetime.datetime):
                return v.replace(tzinfo=None)
            if isinstance(v, datetime.date):
                return datetime.datetime(v.year, v.month, v.day)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=v)
            s = str(v).strip().replace("T", " ")
            if s.endswith("Z"):
                s = s[:-1]
            ts = datetime.datetime.fromisoformat(s)
            return ts.replace(tzinfo=None) if ts.tzinfo is None else \
                ts.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        if isinstance(dt, gt.BinaryType):
            return v.encode("utf-8") if isinstance(v, str) else bytes(v)
        if isinstance(dt, gt.NullType):
            return None
        if isinstance(dt, gt.StructType):
            if not isinstance(v, dict):
                return None
            return {f.name: convert_py(v.get(f.name), f.dataType) for f in dt.fields}
        if isinstance(dt, gt.ArrayType):
            if not isinstance(v, (list, tuple)):
                return None
            return [convert_py(x, dt.elementType) for x in v]
        if isinstance(dt, gt.MapType):
            if isinstance(v, list):
                v = dict(v)
            if not isinstance(v, dict):
                return None
            return {str(k): convert_py(x, dt.valueType) for k, x in v.items()}
        if isinstance(dt, gt.ChoiceType):
            return v
    except (ValueError, TypeError, OverflowError, decimal.InvalidOperation):
        return None
    return None


def _python_cast(arr: pa.Array, dt: gt.DataType) -> pa.Array:
    return values_to_arrow([convert_py(v, dt) for v in arr.to_pylist()], dt)


def glue_cast(arr, dt: gt.DataType) -> pa.Array:
    """Cast an Arrow array (or chunked array) to Glue type `dt` with Glue's semantics."""
    if isinstance(arr, pa.ChunkedArray):
        chunks = [glue_cast(c, dt) for c in arr.chunks]
        return pa.chunked_array(chunks, type=gt.to_arrow_type(dt))
    target = gt.to_arrow_type(dt)
    if arr.type == target:
        return arr
    engine_result = native.glue_cast(arr, target)
    if engine_result is not None:
        return engine_result
    src = arr.type
    if pa.types.is_null(src):
        return null_array(len(arr), target)
    if pa.types.is_union(src) or pa.types.is_union(target):
        return _python_cast(arr, dt)
    if pa.types.is_struct(src) and isinstance(dt, gt.StructType):
        flat = arr.flatten()
        names = [src.field(i).name for i in range(src.num_fields)]
        children = []
        for f in dt.fields:
            if f.name in names:
                children.append(glue_cast(flat[names.index(f.name)], f.dataType))
            else:
                children.append(null_array(len(arr), gt.to_arrow_type(f.dataType)))
        if not dt.fields:
            return _python_cast(arr, dt)
        return pa.StructArray.from_arrays(children, fields=list(target), mask=arr.is_null())
    if pa.types.is_list(src) and isinstance(dt, gt.ArrayType):
        values = glue_cast(arr.values, dt.elementType)
        return pa.ListArray.from_arrays(arr.offsets, values, type=target, mask=arr.is_null())
    simple = not (pa.types.is_nested(src) or pa.types.is_nested(target))
    if simple and pa.types.is_integer(target) and (pa.types.is_integer(src) or pa.types.is_floating(src)):
        # Out of range (and NaN) -> null; fractions truncated toward zero.
        lo, hi = _INT_RANGES[dt.typeName()]
        ok = _in_range(arr, src, lo, hi)
        kept = arr if ok is None else pc.if_else(pc.fill_null(ok, False), arr, pa.scalar(None, src))
        if pa.types.is_floating(src):
            kept = pc.trunc(kept)
        return pc.cast(kept, target, safe=False)
    if simple and not (pa.types.is_floating(src) and pa.types.is_string(target)) \
            and not (pa.types.is_string(src) and isinstance(dt, gt.DecimalType)):
        try:
            return pc.cast(arr, target, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            pass
    return _python_cast(arr, dt)


def _in_range(arr, src: pa.DataType, lo: int, hi: int):
    """A mask of lo <= arr < hi (None: always true), compared in the source's own type."""
    if pa.types.is_floating(src):
        return pc.and_(pc.greater_equal(arr, pa.scalar(float(lo))), pc.less(arr, pa.scalar(float(hi))))
    bits = src.bit_width
    smin, smax = (0, 2 ** bits - 1) if pa.types.is_unsigned_integer(src) else \
        (-2 ** (bits - 1), 2 ** (bits - 1) - 1)
    conds = []
    if lo > smin:
        conds.append(pc.greater_equal(arr, pa.scalar(lo, src)))
    if hi <= smax:
        conds.append(pc.less(arr, pa.scalar(hi, src)))
    if not conds:
        return None
    return conds[0] if len(conds) == 1 else pc.and_(conds[0], conds[1])
