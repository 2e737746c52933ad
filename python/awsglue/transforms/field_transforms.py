"""The field and row transforms: RenameField, DropFields, SelectFields, SplitFields, SplitRows,
Join and Spigot."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class RenameField(GlueTransform):
    """Renames a field (dotted paths for nested fields)."""

    def __call__(self, frame: DynamicFrame, old_name, new_name, transformation_ctx="", info="",
                 stageThreshold=0, totalThreshold=0):
        return frame.rename_field(old_name, new_name, transformation_ctx, info, stageThreshold,
                                  totalThreshold)


class DropFields(GlueTransform):
    """Drops the given fields."""

    def __call__(self, frame: DynamicFrame, paths, transformation_ctx="", info="", stageThreshold=0,
                 totalThreshold=0):
        return frame.drop_fields(paths, transformation_ctx, info, stageThreshold, totalThreshold)


class SelectFields(GlueTransform):
    """Keeps only the given fields."""

    def __call__(self, frame: DynamicFrame, paths, transformation_ctx="", info="", stageThreshold=0,
                 totalThreshold=0):
        return frame.select_fields(paths, transformation_ctx, info, stageThreshold, totalThreshold)


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


class Join(GlueTransform):
    """Equality join of two frames on keys1 = keys2 (both key fields kept)."""

    def __call__(self, frame1: DynamicFrame, frame2: DynamicFrame, keys1, keys2,
                 transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return frame1.join(keys1, keys2, frame2, transformation_ctx, info, stageThreshold,
                           totalThreshold)


class Spigot(GlueTransform):
    """Writes a sample of the frame's records (JSON) to a path; returns the frame."""

    def __call__(self, frame: DynamicFrame, path, options=None, transformation_ctx="", info="",
                 stageThreshold=0, totalThreshold=0):
        return frame.spigot(path, options, transformation_ctx, info, stageThreshold, totalThreshold)
