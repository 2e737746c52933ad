"""pyspark.sql.types stand-in: the type objects can be built; see openglue_runtime/engines/embedded/spark_api.py."""
from openglue_runtime.engines.embedded.spark_api import TYPE_CLASSES, Row  # noqa: F401

globals().update(TYPE_CLASSES)
__all__ = sorted(TYPE_CLASSES)


def __getattr__(attr):
    from openglue_runtime.engines.embedded.spark_api import StandIn
    if attr.startswith("__") and attr.endswith("__"):
        raise AttributeError(attr)
    return StandIn(f"pyspark.sql.types.{attr}")
