"""UnnestFrame: flatten nested structs into top-level fields."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class UnnestFrame(GlueTransform):
    """Flattens nested structs into top-level `a.b` fields."""

    def __call__(self, frame: DynamicFrame, transformation_ctx="", info="", stageThreshold=0,
                 totalThreshold=0):
        return frame.unnest(transformation_ctx, info, stageThreshold, totalThreshold)
