"""Unbox: parse a string field holding JSON (or another format) into its structure."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class Unbox(GlueTransform):
    """Parses a string field holding JSON into its structure."""

    def __call__(self, frame: DynamicFrame, path, format, transformation_ctx="", info="",
                 stageThreshold=0, totalThreshold=0, **options):
        return frame.unbox(path, format, transformation_ctx, info, stageThreshold, totalThreshold,
                           **options)
