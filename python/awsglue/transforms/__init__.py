"""The `awsglue.transforms` classes, one module per family as AWS's package has them
(`awsglue.transforms.apply_mapping`, `.field_transforms`, `.collection_transforms`, ...), all
importable from here. Each is used as Glue documents it:
`ApplyMapping.apply(frame=dyf, mappings=[...], transformation_ctx="m")`; `apply` builds the
transform and calls it with the same arguments, and the work is done by the DynamicFrame method.
`get_transforms()`, `get_transform(name)` and `describe_transform(name)` list and describe them.
"""
import json

from awsglue.transforms.transform import GlueTransform  # noqa: F401
from awsglue.transforms.apply_mapping import ApplyMapping  # noqa: F401
from awsglue.transforms.resolve_choice import ResolveChoice  # noqa: F401
from awsglue.transforms.drop_nulls import DropNullFields  # noqa: F401
from awsglue.transforms.relationalize import Relationalize  # noqa: F401
from awsglue.transforms.field_transforms import (RenameField, DropFields, SelectFields, SplitFields,  # noqa: F401
                                                 SplitRows, Join, Spigot)
from awsglue.transforms.collection_transforms import (SelectFromCollection, MapToCollection,  # noqa: F401
                                                      FlatMap)
from awsglue.transforms.dynamicframe_filter import Filter  # noqa: F401
from awsglue.transforms.dynamicframe_map import Map  # noqa: F401
from awsglue.transforms.errors_as_dynamicframe import ErrorsAsDynamicFrame  # noqa: F401
from awsglue.transforms.unbox import Unbox  # noqa: F401
from awsglue.transforms.unnest_frame import UnnestFrame  # noqa: F401
from awsglue.transforms.union import Union  # noqa: F401
from awsglue.transforms.merge import MergeDynamicFrame  # noqa: F401
from awsglue.transforms.repartition import Repartition  # noqa: F401
from awsglue.transforms.coalesce import Coalesce  # noqa: F401

ALL_TRANSFORMS = (ApplyMapping, ResolveChoice, DropNullFields, Relationalize, Join, Filter, Map,
                  SelectFields, DropFields, RenameField, SplitFields, SplitRows, Spigot, Unbox,
                  UnnestFrame, Union, MergeDynamicFrame, ErrorsAsDynamicFrame,
                  SelectFromCollection, MapToCollection, FlatMap, Repartition, Coalesce)

__all__ = ["GlueTransform"] + [t.__name__ for t in ALL_TRANSFORMS] + [
    "get_transforms", "get_transform", "describe_transform"]


def get_transforms():
    """One instance of every transform class."""
    return [t() for t in ALL_TRANSFORMS]


def get_transform(name: str):
    """The transform named `name` (case-insensitive), or None."""
    for transform in ALL_TRANSFORMS:
        if transform.name().lower() == str(name).lower():
            return transform()
    return None


def describe_transform(name: str) -> str:
    """The transform's description (`describe()`) as indented JSON; "{}" for an unknown name."""
    transform = get_transform(name)
    return json.dumps(transform.describe() if transform else {}, sort_keys=True, indent=4)
