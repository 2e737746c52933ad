"""pyspark.sql.window stand-in (see awsglue/spark_api.py)."""
from awsglue.spark_api import StandIn

Window = StandIn("pyspark.sql.Window")
WindowSpec = StandIn("pyspark.sql.WindowSpec")
