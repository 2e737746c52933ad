"""pyspark.sql.session stand-in (see awsglue/spark_api.py)."""
from awsglue.spark_api import SparkSession  # noqa: F401
