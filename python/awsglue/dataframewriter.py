"""`glueContext.write_data_frame`: Spark DataFrames to the catalog or to options."""


class DataFrameWriter:
    """`glueContext.write_data_frame` (Glue 4/5): from_catalog and from_options take Spark
    DataFrames (the Spark engine)."""

    def __init__(self, ctx):
        self._ctx = ctx

    def from_catalog(self, frame, database=None, table_name=None, redshift_tmp_dir="",
                     transformation_ctx="", additional_options=None, catalog_id=None, **kwargs):
        return self._ctx.write_data_frame_from_catalog(
            frame, database, table_name, redshift_tmp_dir, transformation_ctx,
            additional_options, catalog_id, **kwargs)

    def from_options(self, frame, connection_type="s3", connection_options=None, format=None,
                     format_options=None, transformation_ctx=""):
        return self._ctx.write_data_frame_from_options(
            frame, connection_type, connection_options, format, format_options,
            transformation_ctx)
