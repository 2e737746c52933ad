"""Glue's type classes, as `awsglue.gluetypes` names them: what `DynamicFrame.schema()` returns
and what scripts build schemas and ApplyMapping targets from. The classes live in
openglue_runtime.types (the engines use them too), with their mapping onto Arrow types.
"""
from openglue_runtime.types import (ArrayType, AtomicType, BinaryType, BooleanType,  # noqa: F401
                                    ByteType, ChoiceType, DataType, DateType, DecimalType,
                                    DoubleType, EnumType, Field, FloatType, IntegerType, LongType,
                                    MapType, NullType, ShortType, StringType, StructType,
                                    TimestampType, UnknownType)

__all__ = ["DataType", "AtomicType", "NullType", "BooleanType", "ByteType", "ShortType",
           "IntegerType", "LongType", "FloatType", "DoubleType", "DecimalType", "StringType",
           "BinaryType", "DateType", "TimestampType", "ArrayType", "MapType", "StructType", "Field",
           "ChoiceType", "EnumType", "UnknownType"]
