"""pyspark.sql stand-in (see openglue_runtime/engines/embedded/spark_api.py)."""
from openglue_runtime.engines.embedded.spark_api import (Column, DataFrame, DataFrameReader,  # noqa: F401
                                                         DataFrameWriter, GroupedData, Row,
                                                         SparkSession, SQLContext, StandIn)
from pyspark.sql import functions, types  # noqa: F401,E402
from pyspark.sql.window import Window, WindowSpec  # noqa: F401,E402

HiveContext = SQLContext


def __getattr__(attr):
    if attr.startswith("__") and attr.endswith("__"):
        raise AttributeError(attr)
    return StandIn(f"pyspark.sql.{attr}")
