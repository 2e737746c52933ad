"""Map: apply a function to every record."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class Map(GlueTransform):
    """Applies f to every record."""

    def __call__(self, frame: DynamicFrame, f, transformation_ctx="", info="", stageThreshold=0,
                 totalThreshold=0):
        return frame.map(f, False, transformation_ctx, info, stageThreshold, totalThreshold)
