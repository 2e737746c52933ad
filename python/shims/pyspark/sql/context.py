"""pyspark.sql.context stand-in (see openglue_runtime/engines/embedded/spark_api.py)."""
from openglue_runtime.engines.embedded.spark_api import SQLContext  # noqa: F401

HiveContext = SQLContext
