"""Coalesce: the frame in fewer partitions."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class Coalesce(GlueTransform):
    def __call__(self, frame: DynamicFrame, num_partitions, shuffle=False, transformation_ctx="",
                 info="", stageThreshold=0, totalThreshold=0):
        return frame.coalesce(num_partitions, shuffle, transformation_ctx, info, stageThreshold,
                              totalThreshold)
