"""pyspark.sql.utils stand-in (see openglue_runtime/engines/embedded/spark_api.py)."""
from openglue_runtime.engines.embedded.spark_api import AnalysisException  # noqa: F401


class ParseException(AnalysisException):
    """Never raised on the embedded engine; a class so `except` clauses work."""


class IllegalArgumentException(Exception):
    """Never raised on the embedded engine; a class so `except` clauses work."""
