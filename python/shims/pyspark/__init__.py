"""OpenGlue's pyspark stand-in for the embedded engine (see awsglue/spark_api.py).

Scripts import Spark's entry points; here they are stand-ins that work until Spark itself is
used, then raise awsglue.spark_api.SparkApiUnavailable. When a real pyspark is installed further
along sys.path, importing this package loads that one instead: the stand-in never shadows it.
"""
import importlib.machinery
import importlib.util
import os
import sys


def _real_pyspark_spec():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    others = []
    for entry in sys.path:
        try:
            if os.path.abspath(entry or os.getcwd()) == here:
                continue
        except (TypeError, ValueError):
            continue
        others.append(entry)
    try:
        return importlib.machinery.PathFinder.find_spec("pyspark", others)
    except (ImportError, ValueError):
        return None


_real = _real_pyspark_spec()
if _real is not None and _real.loader is not None:
    # Hand over: the import system returns sys.modules["pyspark"] once this module ends.
    _module = importlib.util.module_from_spec(_real)
    sys.modules["pyspark"] = _module
    _real.loader.exec_module(_module)
else:
    from awsglue.spark_api import (RDD, SparkApiUnavailable, SparkConf, SparkContext,  # noqa: F401
                                   StandIn, announce_engine)

    announce_engine()

    __openglue_standin__ = True
    __version__ = "0+openglue.embedded"

    class _StandInModuleFinder:
        """Submodules of pyspark this stand-in does not have (pyspark.ml, pyspark.streaming,
        ...) import as modules whose every name is a stand-in, so the failure comes where a
        script uses Spark, not at its imports."""

        @classmethod
        def find_spec(cls, name, path=None, target=None):
            if not name.startswith("pyspark.") or sys.modules.get("pyspark") is None:
                return None
            if not getattr(sys.modules["pyspark"], "__openglue_standin__", False):
                return None
            return importlib.machinery.ModuleSpec(name, cls(), is_package=True)

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            name = module.__name__
            module.__path__ = []

            def __getattr__(attr, _name=name):
                if attr.startswith("__") and attr.endswith("__"):
                    raise AttributeError(attr)
                return StandIn(f"{_name}.{attr}")

            module.__getattr__ = __getattr__

    if not any(isinstance(f, type) and f.__name__ == "_StandInModuleFinder"
               for f in sys.meta_path):
        sys.meta_path.append(_StandInModuleFinder)

    def __getattr__(attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return StandIn(f"pyspark.{attr}")
