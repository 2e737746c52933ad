"""OpenGlue's pyspark stand-in (the `pyspark/` folder here) and its last-resort import hook.

Two ways in, neither of which ever hides a real pyspark:
- a job run on the embedded engine: the server puts this folder on the run's PYTHONPATH, and
  `pyspark/__init__.py` hands the import over to a real pyspark when one is installed further
  along sys.path;
- `pip install ./python`: this folder is installed as the package `openglue_standin` and a
  `.pth` file calls `install()` at interpreter start, which appends a finder to the END of
  sys.meta_path: Python's own path finder runs first, so the stand-in is found only when no
  real pyspark is importable.
"""
import importlib.machinery
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


class StandInFinder:
    """Finds the stand-in `pyspark` package, consulted after every other finder."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "pyspark":
            return None  # submodules are found through the package's own __path__
        return importlib.machinery.PathFinder.find_spec("pyspark", [_HERE])

    @classmethod
    def invalidate_caches(cls):
        pass


def install() -> None:
    """Appends the finder to sys.meta_path (once). Never raises: it runs from a .pth file."""
    try:
        if not any(f is StandInFinder for f in sys.meta_path):
            sys.meta_path.append(StandInFinder)
    except Exception:  # pragma: no cover - a broken start-up hook must not break Python
        pass
