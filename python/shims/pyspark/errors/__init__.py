"""pyspark.errors stand-in (see awsglue/spark_api.py)."""
from pyspark.sql.utils import AnalysisException, IllegalArgumentException, ParseException  # noqa: F401


class PySparkException(Exception):
    """Never raised on the embedded engine; a class so `except` clauses work."""
