"""pyspark.sql.functions stand-in: every name imports; calling one raises
openglue_runtime.engines.embedded.spark_api.SparkApiUnavailable (see openglue_runtime/engines/embedded/spark_api.py)."""
from openglue_runtime.engines.embedded.spark_api import FUNCTION_NAMES, function

__all__ = list(FUNCTION_NAMES)
globals().update({name: function(name) for name in FUNCTION_NAMES})


def __getattr__(attr):
    if attr.startswith("__") and attr.endswith("__"):
        raise AttributeError(attr)
    return function(attr)
