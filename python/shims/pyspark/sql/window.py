"""pyspark.sql.window stand-in (see openglue_runtime/engines/embedded/spark_api.py)."""
from openglue_runtime.engines.embedded.spark_api import StandIn

Window = StandIn("pyspark.sql.Window")
WindowSpec = StandIn("pyspark.sql.WindowSpec")
