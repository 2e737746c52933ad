"""Filter: keep the records a function accepts."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class Filter(GlueTransform):
    """Keeps the records for which f(record) is true."""

    def __call__(self, frame: DynamicFrame, f, transformation_ctx="", info="", stageThreshold=0,
                 totalThreshold=0):
        return frame.filter(f, transformation_ctx, info, stageThreshold, totalThreshold)
