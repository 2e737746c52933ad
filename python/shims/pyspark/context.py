"""pyspark.context stand-in (see openglue_runtime/engines/embedded/spark_api.py)."""
from openglue_runtime.engines.embedded.spark_api import SparkContext  # noqa: F401
