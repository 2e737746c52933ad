"""Glue's type classes and their mapping onto Apache Arrow types (awsglue.gluetypes re-exports the
classes).

A DynamicFrame's `schema()` returns these objects. Every type has a class method `typeName()`
giving Glue's lower-case name (`int`, `long`, `string`, `choice`, ...). On the embedded engine
data lives in Arrow; `to_arrow_type` / `from_arrow_type` convert per the table in the project's
CONTRACT (choice <-> Arrow dense_union whose children are named by their Glue type name).
"""
from typing import Dict, Iterable, List, Optional

import pyarrow as pa

__all__ = [
    "DataType", "AtomicType", "NullType", "BooleanType", "ByteType", "ShortType", "IntegerType",
    "LongType", "FloatType", "DoubleType", "DecimalType", "StringType", "BinaryType", "DateType",
    "TimestampType", "ArrayType", "MapType", "StructType", "Field", "ChoiceType", "EnumType",
    "UnknownType", "to_arrow_type", "from_arrow_type", "to_arrow_schema", "from_arrow_schema",
    "type_from_name",
]


class DataType:
    """Base of every Glue type. `properties` is a free dict Glue attaches to a type."""

    def __init__(self, properties: Optional[dict] = None):
        self.properties = dict(properties or {})

    @classmethod
    def typeName(cls) -> str:
        name = cls.__name__
        if name.endswith("Type"):
            name = name[:-4]
        return name.lower()

    def jsonValue(self):
        return {"dataType": self.typeName(), "properties": self.properties}

    def simpleString(self) -> str:
        return self.typeName()

    def __repr__(self) -> str:
        return "{}({})".format(type(self).__name__, self.properties)

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._key() == other._key()

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self._key())))

    def _key(self):
        return ()


class AtomicType(DataType):
    pass


class UnknownType(AtomicType):
    pass


class NullType(AtomicType):
    pass


class BooleanType(AtomicType):
    pass


class ByteType(AtomicType):
    pass


class ShortType(AtomicType):
    pass


class IntegerType(AtomicType):
    @classmethod
    def typeName(cls) -> str:
        return "int"


class LongType(AtomicType):
    pass


class FloatType(AtomicType):
    pass


class DoubleType(AtomicType):
    pass


class StringType(AtomicType):
    pass


class BinaryType(AtomicType):
    pass


class DateType(AtomicType):
    pass


class TimestampType(AtomicType):
    pass


class DecimalType(AtomicType):
    """decimal(precision, scale); Glue's default is (10, 2)."""

    def __init__(self, precision: int = 10, scale: int = 2, properties: Optional[dict] = None):
        super().__init__(properties)
        self.precision = int(precision)
        self.scale = int(scale)

    def simpleString(self) -> str:
        return "decimal({},{})".format(self.precision, self.scale)

    def jsonValue(self):
        return dict(super().jsonValue(), precision=self.precision, scale=self.scale)

    def __repr__(self) -> str:
        return "DecimalType({}, {}, {})".format(self.precision, self.scale, self.properties)

    def _key(self):
        return (self.precision, self.scale)


class EnumType(AtomicType):
    """A string restricted to `options`; stored as a string on the embedded engine."""

    def __init__(self, options: Iterable[str] = (), properties: Optional[dict] = None):
        super().__init__(properties)
        self.options = list(options)

    def __repr__(self) -> str:
        return "EnumType({}, {})".format(self.options, self.properties)

    def jsonValue(self):
        return dict(super().jsonValue(), options=list(self.options))

    def _key(self):
        return tuple(self.options)


class ArrayType(DataType):
    def __init__(self, elementType: DataType = None, properties: Optional[dict] = None):
        super().__init__(properties)
        self.elementType = elementType if elementType is not None else NullType()

    def simpleString(self) -> str:
        return "array<{}>".format(self.elementType.simpleString())

    def jsonValue(self):
        return dict(super().jsonValue(), elementType=self.elementType.jsonValue())

    def __repr__(self) -> str:
        return "ArrayType({!r}, {})".format(self.elementType, self.properties)

    def _key(self):
        return (self.elementType,)


class MapType(DataType):
    """A map from string keys (Glue's maps have string keys) to `valueType`."""

    def __init__(self, valueType: DataType = None, properties: Optional[dict] = None,
                 keyType: Optional[DataType] = None):
        super().__init__(properties)
        self.valueType = valueType if valueType is not None else NullType()
        self.keyType = keyType if keyType is not None else StringType()

    def simpleString(self) -> str:
        return "map<{},{}>".format(self.keyType.simpleString(), self.valueType.simpleString())

    def jsonValue(self):
        return dict(super().jsonValue(), valueType=self.valueType.jsonValue())

    def __repr__(self) -> str:
        return "MapType({!r}, {})".format(self.valueType, self.properties)

    def _key(self):
        return (self.keyType, self.valueType)


class Field:
    """A named member of a StructType."""

    def __init__(self, name: str, dataType: DataType, properties: Optional[dict] = None):
        self.name = name
        self.dataType = dataType
        self.properties = dict(properties or {})

    def jsonValue(self):
        return {"name": self.name, "container": self.dataType.jsonValue(),
                "properties": self.properties}

    def __repr__(self) -> str:
        return "Field({}, {!r}, {})".format(self.name, self.dataType, self.properties)

    def __eq__(self, other) -> bool:
        return (isinstance(other, Field) and self.name == other.name
                and self.dataType == other.dataType)

    def __hash__(self) -> int:
        return hash((self.name, self.dataType))


class StructType(DataType):
    def __init__(self, fields: Optional[List[Field]] = None, properties: Optional[dict] = None):
        super().__init__(properties)
        self.fields: List[Field] = list(fields or [])
        self.field_map: Dict[str, Field] = {f.name: f for f in self.fields}

    def add(self, field: Field) -> "StructType":
        self.fields.append(field)
        self.field_map[field.name] = field
        return self

    def hasField(self, field) -> bool:
        name = field.name if isinstance(field, Field) else field
        return name in self.field_map

    def getField(self, field) -> Optional[Field]:
        name = field.name if isinstance(field, Field) else field
        return self.field_map.get(name)

    def names(self) -> List[str]:
        return [f.name for f in self.fields]

    def jsonValue(self):
        return dict(super().jsonValue(), fields=[f.jsonValue() for f in self.fields])

    def simpleString(self) -> str:
        return "struct<{}>".format(",".join(
            "{}:{}".format(f.name, f.dataType.simpleString()) for f in self.fields))

    def __iter__(self):
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def __repr__(self) -> str:
        return "StructType([{}], {})".format(", ".join(repr(f) for f in self.fields),
                                             self.properties)

    def _key(self):
        return tuple((f.name, f.dataType) for f in self.fields)


class ChoiceType(DataType):
    """A field whose records disagree on its type; `choices` maps type name -> type."""

    def __init__(self, choices: Optional[Iterable[DataType]] = None,
                 properties: Optional[dict] = None):
        super().__init__(properties)
        self.choices: Dict[str, DataType] = {}
        for c in choices or []:
            self.add(c)

    def add(self, new_choice: DataType) -> "ChoiceType":
        self.choices[new_choice.typeName()] = new_choice
        return self

    def merge(self, new_choices) -> "ChoiceType":
        items = new_choices.choices.values() if isinstance(new_choices, ChoiceType) else new_choices
        for c in items:
            self.add(c)
        return self

    def simpleString(self) -> str:
        return "choice<{}>".format(",".join(c.simpleString() for c in self.choices.values()))

    def jsonValue(self):
        return dict(super().jsonValue(), choices=[c.jsonValue() for c in self.choices.values()])

    def __repr__(self) -> str:
        return "ChoiceType([{}], {})".format(", ".join(repr(c) for c in self.choices.values()),
                                             self.properties)

    def _key(self):
        return tuple(self.choices.items())


_ATOMIC_BY_NAME = {
    "null": NullType, "boolean": BooleanType, "byte": ByteType, "short": ShortType,
    "int": IntegerType, "integer": IntegerType, "long": LongType, "bigint": LongType,
    "smallint": ShortType, "tinyint": ByteType, "float": FloatType, "double": DoubleType,
    "string": StringType, "varchar": StringType, "char": StringType, "binary": BinaryType,
    "date": DateType, "timestamp": TimestampType, "unknown": UnknownType,
}


def _split_top(text: str, sep: str = ",") -> List[str]:
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur or parts:
        parts.append("".join(cur))
    return parts


def from_json_value(value) -> DataType:
    """The DataType that `jsonValue()` describes (a dict, or its JSON text): the form Glue's
    `json.dumps(schema.jsonValue())` gives, e.g. the XML reader's `withSchema` option. Raises
    ValueError naming what is wrong."""
    import json
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as e:
            raise ValueError("not a JSON type description: {}".format(e)) from None
    if not isinstance(value, dict) or not isinstance(value.get("dataType"), str):
        raise ValueError("a type description is an object with a dataType, not {!r}"
                         .format(value)[:200])
    kind = value["dataType"].lower()
    props = value.get("properties") or {}
    if kind == "struct":
        fields = []
        for f in value.get("fields") or []:
            if not isinstance(f, dict) or not isinstance(f.get("name"), str) or "container" not in f:
                raise ValueError("a struct field is an object with name and container, not {!r}"
                                 .format(f)[:200])
            fields.append(Field(f["name"], from_json_value(f["container"]), f.get("properties")))
        return StructType(fields, props)
    if kind == "array":
        return ArrayType(from_json_value(value.get("elementType") or {"dataType": "null"}), props)
    if kind == "map":
        return MapType(from_json_value(value.get("valueType") or {"dataType": "null"}), props)
    if kind == "choice":
        return ChoiceType([from_json_value(c) for c in value.get("choices") or []], props)
    if kind == "decimal":
        return DecimalType(value.get("precision", 10), value.get("scale", 2), props)
    if kind == "enum":
        return EnumType(value.get("options") or [], props)
    if kind in _ATOMIC_BY_NAME:
        t = _ATOMIC_BY_NAME[kind]()
        t.properties = dict(props)
        return t
    raise ValueError("unknown Glue type name: {!r}".format(value["dataType"]))


def type_from_name(name: str) -> DataType:
    """A Glue/Hive type string (`int`, `decimal(12,3)`, `array<string>`, `struct<a:int>`,
    `map<string,int>`, `varchar(10)`) -> a DataType. Raises ValueError on an unknown name."""
    text = name.strip()
    low = text.lower()
    if low in _ATOMIC_BY_NAME:
        return _ATOMIC_BY_NAME[low]()
    if low.startswith("decimal"):
        rest = text[len("decimal"):].strip()
        if not rest:
            return DecimalType()
        if rest.startswith("(") and rest.endswith(")"):
            nums = [p.strip() for p in rest[1:-1].split(",")]
            if len(nums) == 2 and all(n.isdigit() for n in nums):
                return DecimalType(int(nums[0]), int(nums[1]))
            if len(nums) == 1 and nums[0].isdigit():
                return DecimalType(int(nums[0]), 0)
        raise ValueError("invalid decimal type: {!r}".format(name))
    if (low.startswith("varchar(") or low.startswith("char(")) and low.endswith(")"):
        return StringType()
    if low.startswith("array<") and low.endswith(">"):
        return ArrayType(type_from_name(text[6:-1]))
    if low.startswith("map<") and low.endswith(">"):
        parts = _split_top(text[4:-1])
        if len(parts) != 2:
            raise ValueError("invalid map type: {!r}".format(name))
        return MapType(type_from_name(parts[1]), keyType=type_from_name(parts[0]))
    if low.startswith("struct<") and low.endswith(">"):
        fields = []
        for part in _split_top(text[7:-1]):
            if not part.strip():
                continue
            fname, sep, ftype = part.partition(":")
            if not sep:
                raise ValueError("invalid struct member {!r} in {!r}".format(part, name))
            fields.append(Field(fname.strip(), type_from_name(ftype)))
        return StructType(fields)
    if low in ("array", "struct", "map", "choice"):
        return {"array": ArrayType, "struct": StructType, "map": MapType,
                "choice": ChoiceType}[low]()
    raise ValueError("unknown Glue type name: {!r}".format(name))


def to_arrow_type(dt: DataType) -> pa.DataType:
    """Glue type -> Arrow type per the project's table."""
    if isinstance(dt, (NullType, UnknownType)):
        return pa.null()
    if isinstance(dt, BooleanType):
        return pa.bool_()
    if isinstance(dt, ByteType):
        return pa.int8()
    if isinstance(dt, ShortType):
        return pa.int16()
    if isinstance(dt, IntegerType):
        return pa.int32()
    if isinstance(dt, LongType):
        return pa.int64()
    if isinstance(dt, FloatType):
        return pa.float32()
    if isinstance(dt, DoubleType):
        return pa.float64()
    if isinstance(dt, DecimalType):
        return pa.decimal128(dt.precision, dt.scale)
    if isinstance(dt, (StringType, EnumType)):
        return pa.string()
    if isinstance(dt, BinaryType):
        return pa.binary()
    if isinstance(dt, DateType):
        return pa.date32()
    if isinstance(dt, TimestampType):
        return pa.timestamp("us")
    if isinstance(dt, ArrayType):
        return pa.list_(to_arrow_type(dt.elementType))
    if isinstance(dt, MapType):
        return pa.map_(to_arrow_type(dt.keyType), to_arrow_type(dt.valueType))
    if isinstance(dt, StructType):
        return pa.struct([pa.field(f.name, to_arrow_type(f.dataType)) for f in dt.fields])
    if isinstance(dt, ChoiceType):
        members = list(dt.choices.values())
        return pa.dense_union([pa.field(m.typeName(), to_arrow_type(m)) for m in members],
                              type_codes=list(range(len(members))))
    raise TypeError("no Arrow type for {!r}".format(dt))


def from_arrow_type(at: pa.DataType) -> DataType:
    """Arrow type -> Glue type (a dense union is a ChoiceType)."""
    t = pa.types
    if t.is_null(at):
        return NullType()
    if t.is_boolean(at):
        return BooleanType()
    if t.is_int8(at) or t.is_uint8(at):
        return ByteType()
    if t.is_int16(at) or t.is_uint16(at):
        return ShortType()
    if t.is_int32(at):
        return IntegerType()
    if t.is_int64(at) or t.is_uint32(at) or t.is_uint64(at):
        return LongType()
    if t.is_float16(at) or t.is_float32(at):
        return FloatType()
    if t.is_float64(at):
        return DoubleType()
    if t.is_decimal(at):
        return DecimalType(at.precision, at.scale)
    if t.is_string(at) or t.is_large_string(at) or t.is_dictionary(at):
        return StringType()
    if t.is_binary(at) or t.is_large_binary(at) or t.is_fixed_size_binary(at):
        return BinaryType()
    if t.is_date(at):
        return DateType()
    if t.is_timestamp(at):
        return TimestampType()
    if t.is_map(at):
        return MapType(from_arrow_type(at.item_type), keyType=from_arrow_type(at.key_type))
    if t.is_list(at) or t.is_large_list(at) or t.is_fixed_size_list(at):
        return ArrayType(from_arrow_type(at.value_type))
    if t.is_struct(at):
        return StructType([Field(at.field(i).name, from_arrow_type(at.field(i).type))
                           for i in range(at.num_fields)])
    if t.is_union(at):
        return ChoiceType([from_arrow_type(at.field(i).type) for i in range(at.num_fields)])
    raise TypeError("Arrow type {} has no Glue equivalent".format(at))


def to_arrow_schema(st: StructType) -> pa.Schema:
    return pa.schema([pa.field(f.name, to_arrow_type(f.dataType)) for f in st.fields])


def from_arrow_schema(schema) -> StructType:
    schema = schema if isinstance(schema, pa.Schema) else pa.schema(schema)
    return StructType([Field(f.name, from_arrow_type(f.type)) for f in schema])
