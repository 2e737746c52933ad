"""pyspark.sql.dataframe stand-in (see awsglue/spark_api.py)."""
from awsglue.spark_api import DataFrame  # noqa: F401
