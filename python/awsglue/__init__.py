"""OpenGlue's implementation of the `awsglue` job library.

Job scripts written for AWS Glue import this package unchanged: `awsglue.utils`
(getResolvedOptions), `awsglue.job` (Job), `awsglue.context` (GlueContext), DynamicFrame and the
transforms. OpenGlue's own modules: `awsglue.catalog` (from_catalog resolution through the Glue
API), `awsglue.storage` (where s3:// goes), `awsglue.spark_api` (Spark's API on the embedded
engine), `awsglue.engine_select` (which engine runs a script). See docs/runtime.md.
"""
from awsglue.storage import storage_options  # noqa: F401  (awsglue.storage_options(), CONTRACT.md)
