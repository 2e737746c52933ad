"""For python/tests: one local SparkSession (one JVM) for every test that runs
DynamicFrames on the Spark engine (openglue_runtime/engines/spark/frames.py)."""
import os
import sys

import pytest

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def spark_session():
    """The process's local SparkSession, made (again) when none is running. Its Python workers
    import awsglue from this checkout."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession
    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext._jsc is not None:
        return active
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    path = os.environ.get("PYTHONPATH", "")
    if PYTHON_DIR not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join([PYTHON_DIR] + ([path] if path else []))
    return (SparkSession.builder.master("local[2]").appName("openglue-python-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.pyspark.python", sys.executable)
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.session.timeZone", "UTC").getOrCreate())


def glue_context(kind: str):
    """A GlueContext on the embedded engine ("embedded") or with native Spark frames ("spark")."""
    from awsglue.context import GlueContext
    if kind == "spark":
        ctx = GlueContext(spark_session().sparkContext)
        assert ctx._engine.name == "spark"
        return ctx
    return GlueContext(object())
