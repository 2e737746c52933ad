"""ResolveChoice: resolve choice types."""
from awsglue.dynamicframe import DynamicFrame
from awsglue.transforms.transform import GlueTransform


class ResolveChoice(GlueTransform):
    """Resolves choice types: cast:<type>, project:<type>, make_cols, make_struct, match_catalog."""

    def __call__(self, frame: DynamicFrame, specs=None, choice="", database=None, table_name=None,
                 transformation_ctx="", info="", stageThreshold=0, totalThreshold=0,
                 catalog_id=None):
        return frame.resolveChoice(specs, choice, database, table_name, transformation_ctx, info,
                                   stageThreshold, totalThreshold, catalog_id)
