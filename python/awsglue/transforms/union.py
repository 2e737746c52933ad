"""Union: all records of two frames."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class Union(GlueTransform):
    """All records of both frames (types merged as Glue does)."""

    def __call__(self, frame1: DynamicFrame, frame2: DynamicFrame, transformation_ctx="", info="",
                 stageThreshold=0, totalThreshold=0):
        return frame1.union(frame2, transformation_ctx, info, stageThreshold, totalThreshold)
