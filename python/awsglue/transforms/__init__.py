"""The `awsglue.transforms` classes. Each is used as Glue documents it:
`ApplyMapping.apply(frame=dyf, mappings=[...], transformation_ctx="m")`; `apply` builds the
transform and calls it with the same arguments, and the work is done by the DynamicFrame method.
"""
from ..dynamicframe import DynamicFrame, DynamicFrameCollection

__all__ = ["GlueTransform", "ApplyMapping", "ResolveChoice", "DropNullFields", "Relationalize",
           "Join", "Filter", "Map", "SelectFields", "DropFields", "RenameField", "SplitFields",
           "SplitRows", "Spigot", "Unbox", "UnnestFrame", "Union", "MergeDynamicFrame",
           "ErrorsAsDynamicFrame", "SelectFromCollection", "MapToCollection", "FlatMap",
           "Repartition", "Coalesce"]


class GlueTransform:
    """Base class: `Cls.apply(*args, **kwargs)` == `Cls()(*args, **kwargs)`."""

    @classmethod
    def apply(cls, *args, **kwargs):
        return cls()(*args, **kwargs)

    @classmethod
    def name(cls) -> str:
        return cls.__name__

    @classmethod
    def describeArgs(cls):
        return []

    @classmethod
    def describeReturn(cls):
        return {"type": "DynamicFrame"}

    @classmethod
    def describeTransform(cls):
        return (cls.__doc__ or "").strip()

    @classmethod
    def describeErrors(cls):
        return []

    @classmethod
    def describe(cls):
        return {"transform": {"name": cls.name(), "description": cls.describeTransform()},
                "args": cls.describeArgs(), "returns": cls.describeReturn(),
                "raises": cls.describeErrors()}


class ApplyMapping(GlueTransform):
    """Selects, renames and casts fields: (source, source_type, target, target_type) tuples."""

    def __call__(self, frame: DynamicFrame, mappings, case_sensitive=False, transformation_ctx="",
                 info="", stageThreshold=0, totalThreshold=0):
        return frame.apply_mapping(mappings, case_sensitive, transformation_ctx, info,
                                   stageThreshold, totalThreshold)


class ResolveChoice(GlueTransform):
    """Resolves choice types: cast:<type>, project:<type>, make_cols, make_struct, match_catalog."""

    def __call__(self, frame: DynamicFrame, specs=None, choice="", database=None, table_name=None,
                 transformation_ctx="", info="", stageThreshold=0, totalThreshold=0,
                 catalog_id=None):
        return frame.resolveChoice(specs, choice, database, table_name, transformation_ctx, info,
                                   stageThreshold, totalThreshold, catalog_id)


class DropNullFields(GlueTransform):
    """Drops the fields that are null in every record."""

    def __call__(self, frame: DynamicFrame, transformation_ctx="", info="", stageThreshold=0,
                 totalThreshold=0):
        return frame.drop_null_fields(transformation_ctx, info, stageThreshold, totalThreshold)


class Relationalize(GlueTransform):
    """Flattens a frame into a root table and one table per array."""

    def __call__(self, frame: DynamicFrame, staging_path=None, name="roottable", options=None,
                 transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return frame.relationalize(name, staging_path or "", options, transformation_ctx, info,
                                   stageThreshold, totalThreshold)


class Join(GlueTransform):
    """Equality join of two frames on keys1 = keys2 (both key fields kept)."""

    def __call__(self, frame1: DynamicFrame, frame2: DynamicFrame, keys1, keys2,
                 transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return frame1.join(keys1, keys2, frame2, transformation_ctx, info, stageThreshold,
                           totalThreshold)


class Filter(GlueTransform):
    """Keeps the records for which f(record) is true."""

    def __call__(self, frame: DynamicFrame, f, transformation_ctx="", info="", stageThreshold=0,
                 totalThreshold=0):
        return frame.filter(f, transformation_ctx, info, stageThreshold, totalThreshold)


class Map(GlueTransform):
    """Applies f to every record."""

    def __call__(self, frame: DynamicFrame, f, transformation_ctx="", info="", stageThreshold=0,
                 totalThreshold=0):
        return frame.map(f, False, transformation_ctx, info, stageThreshold, totalThreshold)


class SelectFields(GlueTransform):
    """Keeps only the given fields."""

    def __call__(self, frame: DynamicFrame, paths, transformation_ctx="", info="", stageThreshold=0,
                 totalThreshold=0):
        return frame.select_fields(paths, transformation_ctx, info, stageThreshold, totalThreshold)


class DropFields(GlueTransform):
    """Drops the given fields."""

    def __call__(self, frame: DynamicFrame, paths, transformation_ctx="", info="", stageThreshold=0,
                 totalThreshold=0):
        return frame.drop_fields(paths, transformation_ctx, info, stageThreshold, totalThreshold)


class RenameField(GlueTransform):
    """Renames a field (dotted paths for nested fields)."""

    def __call__(self, frame: DynamicFrame, old_name, new_name, transformation_ctx="", info="",
                 stageThreshold=0, totalThreshold=0):
        return frame.rename_field(old_name, new_name, transformation_ctx, info, stageThreshold,
                                  totalThreshold)


class SplitFields(GlueTransform):
    """Two frames: the given fields, and the rest."""

    def __call__(self, frame: DynamicFrame, paths, name1=None, name2=None, transformation_ctx="",
                 info="", stageThreshold=0, totalThreshold=0):
        name1 = name1 or frame.name + "1"
        name2 = name2 or frame.name + "2"
        return frame.split_fields(paths, name1, name2, transformation_ctx, info, stageThreshold,
                                  totalThreshold)


class SplitRows(GlueTransform):
    """Two frames: the rows matching every comparison, and the others."""

    def __call__(self, frame: DynamicFrame, comparison_dict, name1="frame1", name2="frame2",
                 transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return frame.split_rows(comparison_dict, name1, name2, transformation_ctx, info,
                                stageThreshold, totalThreshold)


class Spigot(GlueTransform):
    """Writes a sample of the frame's records (JSON) to a path; returns the frame."""

    def __call__(self, frame: DynamicFrame, path, options=None, transformation_ctx="", info="",
                 stageThreshold=0, totalThreshold=0):
        return frame.spigot(path, options, transformation_ctx, info, stageThreshold, totalThreshold)


class Unbox(GlueTransform):
    """Parses a string field holding JSON into its structure."""

    def __call__(self, frame: DynamicFrame, path, format, transformation_ctx="", info="",
                 stageThreshold=0, totalThreshold=0, **options):
        return frame.unbox(path, format, transformation_ctx, info, stageThreshold, totalThreshold,
                           **options)


class UnnestFrame(GlueTransform):
    """Flattens nested structs into top-level `a.b` fields."""

    def __call__(self, frame: DynamicFrame, transformation_ctx="", info="", stageThreshold=0,
                 totalThreshold=0):
        return frame.unnest(transformation_ctx, info, stageThreshold, totalThreshold)


class Union(GlueTransform):
    """All records of both frames (types merged as Glue does)."""

    def __call__(self, frame1: DynamicFrame, frame2: DynamicFrame, transformation_ctx="", info="",
                 stageThreshold=0, totalThreshold=0):
        return frame1.union(frame2, transformation_ctx, info, stageThreshold, totalThreshold)


class MergeDynamicFrame(GlueTransform):
    """Staging records replace source records with the same primary keys."""

    def __call__(self, source: DynamicFrame, stage: DynamicFrame, primary_keys,
                 transformation_ctx="", options=None, info="", stageThreshold=0, totalThreshold=0):
        return source.mergeDynamicFrame(stage, primary_keys, transformation_ctx, options, info,
                                        stageThreshold, totalThreshold)


class ErrorsAsDynamicFrame(GlueTransform):
    """The error records of a frame, as a frame."""

    def __call__(self, frame: DynamicFrame):
        return frame.errorsAsDynamicFrame()


class SelectFromCollection(GlueTransform):
    """One frame of a DynamicFrameCollection."""

    def __call__(self, dfc: DynamicFrameCollection, key, transformation_ctx=""):
        return dfc.select(key, transformation_ctx)


class MapToCollection(GlueTransform):
    """Applies `callable(frame, transformation_ctx)` to every frame of a collection; returns the
    collection of the results under the same keys (DynamicFrameCollection.map)."""

    def __call__(self, dfc: DynamicFrameCollection, callable, transformation_ctx=""):
        return dfc.map(callable, transformation_ctx)

    @classmethod
    def describeReturn(cls):
        return {"type": "DynamicFrameCollection"}


class FlatMap(GlueTransform):
    """Applies a transform (a GlueTransform class or any function taking `frame=`) with the
    given keyword arguments to every frame of a collection. The results stay a collection: a
    frame result keeps its key; a collection result (e.g. SplitFields) adds its frames as
    `<key>_<sub key>` (DynamicFrameCollection.flatMap)."""

    def __call__(self, dfc: DynamicFrameCollection, BatchTransform, transformation_ctx="",
                 **base_kwargs):
        run = getattr(BatchTransform, "apply", BatchTransform)

        def each(frame, ctx):
            return run(frame=frame, transformation_ctx=ctx, **base_kwargs)
        return dfc.flatMap(each, transformation_ctx)

    @classmethod
    def describeReturn(cls):
        return {"type": "DynamicFrameCollection"}


class Repartition(GlueTransform):
    def __call__(self, frame: DynamicFrame, num_partitions, transformation_ctx="", info="",
                 stageThreshold=0, totalThreshold=0):
        return frame.repartition(num_partitions, transformation_ctx, info, stageThreshold,
                                 totalThreshold)


class Coalesce(GlueTransform):
    def __call__(self, frame: DynamicFrame, num_partitions, shuffle=False, transformation_ctx="",
                 info="", stageThreshold=0, totalThreshold=0):
        return frame.coalesce(num_partitions, shuffle, transformation_ctx, info, stageThreshold,
                              totalThreshold)
