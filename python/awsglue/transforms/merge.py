"""MergeDynamicFrame: staging records replace source records with the same primary keys."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class MergeDynamicFrame(GlueTransform):
    """Staging records replace source records with the same primary keys."""

    def __call__(self, source: DynamicFrame, stage: DynamicFrame, primary_keys,
                 transformation_ctx="", options=None, info="", stageThreshold=0, totalThreshold=0):
        return source.mergeDynamicFrame(stage, primary_keys, transformation_ctx, options, info,
                                        stageThreshold, totalThreshold)
