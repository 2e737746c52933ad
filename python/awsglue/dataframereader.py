"""`glueContext.create_data_frame`: Spark DataFrames from the catalog or from options."""


class DataFrameReader:
    """`glueContext.create_data_frame` (Glue 4/5): from_catalog and from_options give Spark
    DataFrames (the Spark engine)."""

    def __init__(self, ctx):
        self._ctx = ctx

    def from_catalog(self, database=None, table_name=None, redshift_tmp_dir="",
                     transformation_ctx="", push_down_predicate="", additional_options=None,
                     catalog_id=None, **kwargs):
        return self._ctx.create_data_frame_from_catalog(
            database, table_name, redshift_tmp_dir, transformation_ctx, push_down_predicate,
            additional_options, catalog_id, **kwargs)

    def from_options(self, connection_type="s3", connection_options=None, format=None,
                     format_options=None, transformation_ctx="", **kwargs):
        return self._ctx.create_data_frame_from_options(
            connection_type, connection_options, format, format_options, transformation_ctx,
            **kwargs)
