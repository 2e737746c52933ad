"""pyspark.conf stand-in (see awsglue/spark_api.py)."""
from awsglue.spark_api import SparkConf  # noqa: F401
