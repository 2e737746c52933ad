"""Python records <-> Arrow with Glue's type rules.

Used where data passes through Python callables (map, filter), where records are parsed from
JSON (unbox) and where a DynamicFrame is built from Python data. Inference follows the project's
CONTRACT: an int that fits 32 bits is `int`, else `long`; int+long -> long; int/long+double ->
double; anything else that disagrees becomes a choice whose members appear in order of first
appearance; nulls take no part.
"""
import datetime
import decimal
import json
import math
from typing import Any, Iterable, List

import pyarrow as pa

from openglue_runtime import types as gt

_NUMERIC_RANK = {"byte": 0, "short": 1, "int": 2, "long": 3, "float": 4, "double": 5}


def to_string_py(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        return repr(v)
    if isinstance(v, datetime.datetime):
        return v.isoformat(sep=" ")
    if isinstance(v, (dict, list)):
        return json.dumps(v, default=str, separators=(",", ":"))
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    return str(v)


def infer_value(v: Any) -> gt.DataType:
    if v is None:
        return gt.NullType()
    if isinstance(v, bool):
        return gt.BooleanType()
    if isinstance(v, int):
        return gt.IntegerType() if -2**31 <= v < 2**31 else gt.LongType()
    if isinstance(v, float):
        return gt.DoubleType()
    if isinstance(v, decimal.Decimal):
        exp = v.as_tuple().exponent
        scale = -exp if isinstance(exp, int) and exp < 0 else 0
        return gt.DecimalType(38, min(scale, 18))
    if isinstance(v, str):
        return gt.StringType()
    if isinstance(v, (bytes, bytearray)):
        return gt.BinaryType()
    if isinstance(v, datetime.datetime):
        return gt.TimestampType()
    if isinstance(v, datetime.date):
        return gt.DateType()
    if isinstance(v, dict):
        return gt.StructType([gt.Field(str(k), infer_value(x)) for k, x in v.items()])
    if isinstance(v, (list, tuple)):
        el = gt.NullType()
        for x in v:
            el = merge_types(el, infer_value(x))
        return gt.ArrayType(el)
    return gt.StringType()


def merge_types(a: gt.DataType, b: gt.DataType) -> gt.DataType:
    """The type of a field holding values of type a and of type b."""
    if isinstance(a, gt.NullType):
        return b
    if isinstance(b, gt.NullType):
        return a
    if isinstance(a, gt.ChoiceType):
        out = gt.ChoiceType(list(a.choices.values()))
        members = [b] if not isinstance(b, gt.ChoiceType) else list(b.choices.values())
        for m in members:
            _choice_add(out, m)
        return out if len(out.choices) > 1 else next(iter(out.choices.values()))
    if isinstance(b, gt.ChoiceType):
        out = gt.ChoiceType([a])
        for m in b.choices.values():
            _choice_add(out, m)
        return out if len(out.choices) > 1 else next(iter(out.choices.values()))
    if a == b:
        return a
    na, nb = a.typeName(), b.typeName()
    if na in _NUMERIC_RANK and nb in _NUMERIC_RANK:
        return a if _NUMERIC_RANK[na] >= _NUMERIC_RANK[nb] else b
    if isinstance(a, gt.DecimalType) and isinstance(b, gt.DecimalType):
        scale = max(a.scale, b.scale)
        ints = max(a.precision - a.scale, b.precision - b.scale)
        return gt.DecimalType(min(38, ints + scale), scale)
    if isinstance(a, gt.StructType) and isinstance(b, gt.StructType):
        fields = [gt.Field(f.name, f.dataType) for f in a.fields]
        index = {f.name: i for i, f in enumerate(fields)}
        for f in b.fields:
            if f.name in index:
                i = index[f.name]
                fields[i] = gt.Field(f.name, merge_types(fields[i].dataType, f.dataType))
            else:
                index[f.name] = len(fields)
                fields.append(gt.Field(f.name, f.dataType))
        return gt.StructType(fields)
    if isinstance(a, gt.ArrayType) and isinstance(b, gt.ArrayType):
        return gt.ArrayType(merge_types(a.elementType, b.elementType))
    if isinstance(a, gt.MapType) and isinstance(b, gt.MapType):
        return gt.MapType(merge_types(a.valueType, b.valueType))
    return gt.ChoiceType([a, b])


def _choice_add(choice: gt.ChoiceType, m: gt.DataType) -> None:
    name = m.typeName()
    if name in choice.choices:
        choice.choices[name] = merge_types(choice.choices[name], m)
        return
    # int joins an existing long (and vice versa), int/long join double: numeric widening.
    if name in _NUMERIC_RANK:
        for existing in list(choice.choices):
            if existing in _NUMERIC_RANK:
                wider = merge_types(choice.choices[existing], m)
                if wider.typeName() != existing:
                    choice.choices = {(wider.typeName() if k == existing else k): (wider if k == existing else v)
                                      for k, v in choice.choices.items()}
                return
    choice.choices[name] = m


def infer_records(records: Iterable[dict]) -> gt.StructType:
    st: gt.DataType = gt.StructType([])
    for r in records:
        st = merge_types(st, infer_value(r))
    return st if isinstance(st, gt.StructType) else gt.StructType([])


def _member_for(choice: gt.ChoiceType, v: Any) -> str:
    name = infer_value(v).typeName()
    if name in choice.choices:
        return name
    if name in _NUMERIC_RANK:
        for k in choice.choices:
            if k in _NUMERIC_RANK:
                return k
    if name == "struct" and "struct" in choice.choices:
        return "struct"
    return next(iter(choice.choices))


def _coerce_atomic(v: Any, dt: gt.DataType) -> Any:
    if v is None:
        return None
    if isinstance(dt, (gt.StringType, gt.EnumType)) and not isinstance(v, str):
        return to_string_py(v)
    if isinstance(dt, (gt.DoubleType, gt.FloatType)) and isinstance(v, (int, decimal.Decimal)) \
            and not isinstance(v, bool):
        return float(v)
    if isinstance(dt, gt.DecimalType) and isinstance(v, (int, float)) and not isinstance(v, bool):
        return decimal.Decimal(str(v))
    return v


def values_to_arrow(values: List[Any], dt: gt.DataType) -> pa.Array:
    """Python values -> an Arrow array of the Arrow type of `dt` (values must fit `dt`)."""
    at = gt.to_arrow_type(dt)
    if isinstance(dt, gt.ChoiceType):
        names = list(dt.choices)
        buckets: List[List[Any]] = [[] for _ in names]
        codes, offsets = [], []
        for v in values:
            i = names.index(_member_for(dt, v)) if v is not None else 0
            codes.append(i)
            offsets.append(len(buckets[i]))
            buckets[i].append(v)
        children = [values_to_arrow(buckets[i], dt.choices[n]) for i, n in enumerate(names)]
        return pa.UnionArray.from_dense(pa.array(codes, pa.int8()), pa.array(offsets, pa.int32()),
                                        children, names, list(range(len(names))))
    if isinstance(dt, gt.StructType):
        nulls = [not isinstance(v, dict) for v in values]
        mask = pa.array(nulls, pa.bool_()) if any(nulls) else None
        children = []
        for f in dt.fields:
            children.append(values_to_arrow(
                [v.get(f.name) if isinstance(v, dict) else None for v in values], f.dataType))
        if not dt.fields:
            return pa.array([{} if isinstance(v, dict) else None for v in values], pa.struct([]))
        return pa.StructArray.from_arrays(children, fields=list(at), mask=mask)
    if isinstance(dt, gt.ArrayType):
        offsets, flat, nulls = [0], [], []
        for v in values:
            if isinstance(v, (list, tuple)):
                flat.extend(v)
                nulls.append(False)
            else:
                nulls.append(True)
            offsets.append(len(flat))
        child = values_to_arrow(flat, dt.elementType)
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), child, type=at,
                                        mask=pa.array(nulls, pa.bool_()))
    if isinstance(dt, gt.MapType):
        rows = [None if not isinstance(v, dict) else
                [(k, _coerce_atomic(x, dt.valueType)) for k, x in v.items()] for v in values]
        return pa.array(rows, type=at)
    return pa.array([_coerce_atomic(v, dt) for v in values], type=at)


def records_to_table(records: List[dict], schema: gt.StructType = None) -> pa.Table:
    if schema is None:
        schema = infer_records(records)
    cols = [values_to_arrow([r.get(f.name) if isinstance(r, dict) else None for r in records],
                            f.dataType) for f in schema.fields]
    return pa.Table.from_arrays(cols, schema=gt.to_arrow_schema(schema))


def table_to_records(data) -> List[dict]:
    return data.to_pylist()


def empty_array(at: pa.DataType) -> pa.Array:
    """A zero-length array of any Arrow type (pyarrow cannot build empty unions itself)."""
    if pa.types.is_union(at):
        kids = [empty_array(at.field(i).type) for i in range(at.num_fields)]
        return pa.UnionArray.from_dense(pa.array([], pa.int8()), pa.array([], pa.int32()), kids,
                                        [at.field(i).name for i in range(at.num_fields)],
                                        list(at.type_codes))
    if pa.types.is_struct(at) and at.num_fields:
        return pa.StructArray.from_arrays([empty_array(at.field(i).type)
                                           for i in range(at.num_fields)], fields=list(at))
    if pa.types.is_list(at):
        return pa.ListArray.from_arrays(pa.array([0], pa.int32()), empty_array(at.value_type),
                                        type=at)
    return pa.array([], at)


def empty_batch(schema: pa.Schema) -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([empty_array(f.type) for f in schema], schema=schema)


def null_array(n: int, at: pa.DataType) -> pa.Array:
    """n nulls of any Arrow type (a union's nulls live in its first member)."""
    if pa.types.is_union(at):
        kids = [null_array(n if i == 0 else 0, at.field(i).type) for i in range(at.num_fields)]
        return pa.UnionArray.from_dense(pa.array([at.type_codes[0]] * n, pa.int8()),
                                        pa.array(range(n), pa.int32()), kids,
                                        [at.field(i).name for i in range(at.num_fields)],
                                        list(at.type_codes))
    if n == 0:
        return empty_array(at)
    return pa.nulls(n, at)
