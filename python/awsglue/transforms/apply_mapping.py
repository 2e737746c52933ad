"""ApplyMapping: select, rename and cast fields."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class ApplyMapping(GlueTransform):
    """Selects, renames and casts fields: (source, source_type, target, target_type) tuples."""

    def __call__(self, frame: DynamicFrame, mappings, case_sensitive=False, transformation_ctx="",
                 info="", stageThreshold=0, totalThreshold=0):
        return frame.apply_mapping(mappings, case_sensitive, transformation_ctx, info,
                                   stageThreshold, totalThreshold)
