"""pyspark.sql.column stand-in (see awsglue/spark_api.py)."""
from awsglue.spark_api import Column  # noqa: F401
