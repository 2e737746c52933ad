"""DropNullFields: drop the fields that are null in every record."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class DropNullFields(GlueTransform):
    """Drops the fields that are null in every record."""

    def __call__(self, frame: DynamicFrame, transformation_ctx="", info="", stageThreshold=0,
                 totalThreshold=0):
        return frame.drop_null_fields(transformation_ctx, info, stageThreshold, totalThreshold)
