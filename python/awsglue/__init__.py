"""OpenGlue's implementation of AWS Glue's `awsglue` package: its public modules only.

Job scripts written for AWS Glue import this package unchanged: `awsglue.context.GlueContext`,
`awsglue.dynamicframe.DynamicFrame`, `awsglue.transforms`, `awsglue.gluetypes`,
`awsglue.utils.getResolvedOptions`, `awsglue.job.Job`, `awsglue.data_source`, `awsglue.data_sink`,
`awsglue.dataframereader`, `awsglue.dataframewriter`. Each is a thin façade: the work is done by
OpenGlue's machinery in the package `openglue_runtime` (the engines, the catalog, storage and
JDBC clients, bookmark state), which never imports this one. See python/README.md.
"""
import os
import sys

# awsglue.storage_options() (CONTRACT.md)
from openglue_runtime.storage import storage_options  # noqa: F401

# Spark's Python workers run this interpreter, as on Glue, not whatever `python3` is first on
# PATH: a script run from a venv that is not activated (a pytest suite of Glue scripts) works.
# Read by the SparkContext the script creates after its imports; an explicit setting wins.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

_DYNAMICFRAME_NAMES = ("DynamicFrame", "DynamicFrameCollection", "DynamicFrameReader",
                       "DynamicFrameWriter")


def __getattr__(name):
    """`from awsglue import DynamicFrame` (as Glue's package allows; public custom transforms use
    it), loaded on first use so `import awsglue` stays light."""
    if name in _DYNAMICFRAME_NAMES:
        from awsglue import dynamicframe
        return getattr(dynamicframe, name)
    raise AttributeError("module 'awsglue' has no attribute {!r}".format(name))
