"""Relationalize: flatten a frame into a root table and one table per array."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class Relationalize(GlueTransform):
    """Flattens a frame into a root table and one table per array."""

    def __call__(self, frame: DynamicFrame, staging_path=None, name="roottable", options=None,
                 transformation_ctx="", info="", stageThreshold=0, totalThreshold=0):
        return frame.relationalize(name, staging_path or "", options, transformation_ctx, info,
                                   stageThreshold, totalThreshold)
