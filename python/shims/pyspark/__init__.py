"""OpenGlue's pyspark stand-in for the embedded engine (openglue_runtime/engines/embedded/
spark_api.py).

On the embedded engine, scripts import Spark's entry points from here; they are stand-ins that
work until Spark itself is used, then raise SparkApiUnavailable, and no JVM starts even when a
real pyspark is installed. On the Spark engine (and outside job runs) a real
pyspark further along sys.path is loaded instead. In a job run with `--engine auto`, the first
import decides which (openglue_runtime.engines.spark.engine).
"""
import importlib.machinery
import importlib.util
import sys

from openglue_runtime.engines.spark import engine as _spark_engine

# In a job run this decides the engine (`auto`), says which in the run's log and, on Spark,
# prepares Spark's settings before the script can start a JVM.
_engine = _spark_engine.prepare()
# The stand-in on the embedded engine, even when a real pyspark is installed (no JVM starts);
# elsewhere a real pyspark further along sys.path takes over.
_real = None if _engine == "embedded" else _spark_engine.real_pyspark_spec()
if _real is not None:
    # Hand over: the import system returns sys.modules["pyspark"] once this module ends.
    _module = importlib.util.module_from_spec(_real)
    sys.modules["pyspark"] = _module
    _real.loader.exec_module(_module)
    _spark_engine.after_pyspark_import()
else:
    from openglue_runtime.engines.embedded.spark_api import (  # noqa: F401
        RDD, SparkApiUnavailable, SparkConf, SparkContext, StandIn, announce_engine)

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
