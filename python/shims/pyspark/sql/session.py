"""pyspark.sql.session stand-in (see openglue_runtime/engines/embedded/spark_api.py)."""
from openglue_runtime.engines.embedded.spark_api import SparkSession  # noqa: F401
