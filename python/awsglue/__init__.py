"""OpenGlue's implementation of the `awsglue` job library.

Job scripts written for AWS Glue import this package unchanged: `awsglue.context.GlueContext`,
`awsglue.dynamicframe.DynamicFrame`, `awsglue.transforms`, `awsglue.gluetypes`,
`awsglue.utils.getResolvedOptions` and `awsglue.job.Job`. Data work runs on an engine object
(`awsglue._embedded.EmbeddedEngine`, the C++/Arrow engine; Spark later) behind the frames.
OpenGlue's own modules: `awsglue.catalog` (from_catalog resolution through the Glue API),
`awsglue.storage` (where s3:// goes), `awsglue.spark_api` (Spark's API on the embedded engine),
`awsglue.engine_select` (which engine runs a script). See docs/runtime.md.
"""
from awsglue.storage import storage_options  # noqa: F401  (awsglue.storage_options(), CONTRACT.md)

_DYNAMICFRAME_NAMES = ("DynamicFrame", "DynamicFrameCollection", "DynamicFrameReader",
                       "DynamicFrameWriter")


def __getattr__(name):
    """`from awsglue import DynamicFrame` (as Glue's package allows; public custom transforms use
    it), loaded on first use so `import awsglue` stays light."""
    if name in _DYNAMICFRAME_NAMES:
        from awsglue import dynamicframe
        return getattr(dynamicframe, name)
    raise AttributeError("module 'awsglue' has no attribute {!r}".format(name))
