"""pyspark.context stand-in (see awsglue/spark_api.py)."""
from awsglue.spark_api import SparkContext  # noqa: F401
