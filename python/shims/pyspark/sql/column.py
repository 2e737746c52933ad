"""pyspark.sql.column stand-in (see openglue_runtime/engines/embedded/spark_api.py)."""
from openglue_runtime.engines.embedded.spark_api import Column  # noqa: F401
