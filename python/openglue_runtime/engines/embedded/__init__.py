"""The embedded engine: lazy plans over the C++/Arrow extension `openglue_runtime.engines.embedded._engine`."""
from openglue_runtime.engines.embedded.engine import EmbeddedEngine

__all__ = ["EmbeddedEngine"]
