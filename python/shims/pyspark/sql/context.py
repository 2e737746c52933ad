"""pyspark.sql.context stand-in (see awsglue/spark_api.py)."""
from awsglue.spark_api import SQLContext  # noqa: F401

HiveContext = SQLContext
