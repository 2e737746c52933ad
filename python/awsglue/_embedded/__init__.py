"""The embedded engine: lazy plans over the C++/Arrow extension `awsglue._engine`."""
from .engine import EmbeddedEngine

__all__ = ["EmbeddedEngine"]
