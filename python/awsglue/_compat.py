"""Hooks into modules owned by the `runtime` helper, guarded until they are merged.

- `SparkApiUnavailable`: the error raised when a script on the embedded engine uses Spark's own
  API (from `awsglue.spark_api` when present).
- `register_source(transformation_ctx, info)`: the Job's bookmark hook (from `awsglue.job`).
"""
try:
    from .spark_api import SparkApiUnavailable  # type: ignore  # noqa: F401
except ImportError:
    class SparkApiUnavailable(RuntimeError):  # type: ignore[no-redef]
        """A Spark API was used on the embedded engine."""

        def __init__(self, what: str = "this Spark API"):
            super().__init__(
                "{} needs Apache Spark: this job runs on OpenGlue's embedded engine, which "
                "implements the Glue API (DynamicFrame, GlueContext, transforms) without Spark. Run "
                "the job with `--engine spark` (or leave `--engine auto` so scripts using Spark "
                "APIs are sent to Spark).".format(what))


def spark_unavailable(what: str) -> BaseException:
    try:
        return SparkApiUnavailable(what)
    except TypeError:
        return SparkApiUnavailable()


def register_source(transformation_ctx: str, info: dict):
    """Tell the Job what a source with a transformation_ctx read (for bookmarks)."""
    if not transformation_ctx:
        return
    try:
        from . import job as _job
    except ImportError:
        return
    hook = getattr(_job, "register_source", None)
    if hook is None:
        return
    return hook(transformation_ctx, info)
