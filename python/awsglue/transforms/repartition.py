"""Repartition: the frame in a given number of partitions."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class Repartition(GlueTransform):
    def __call__(self, frame: DynamicFrame, num_partitions, transformation_ctx="", info="",
                 stageThreshold=0, totalThreshold=0):
        return frame.repartition(num_partitions, transformation_ctx, info, stageThreshold,
                                 totalThreshold)
