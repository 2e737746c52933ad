"""pyspark.sql.utils stand-in (see awsglue/spark_api.py)."""
from awsglue.spark_api import AnalysisException  # noqa: F401


class ParseException(AnalysisException):
    """Never raised on the embedded engine; a class so `except` clauses work."""


class IllegalArgumentException(Exception):
    """Never raised on the embedded engine; a class so `except` clauses work."""
