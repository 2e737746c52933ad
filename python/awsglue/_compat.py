"""Hooks into modules owned by the `runtime` helper, guarded until they are merged.

- `SparkApiUnavailable`: the error raised when a script on the embedded engine uses Spark's own
  API (from `awsglue.spark_api` when present).
- `select_and_register(transformation_ctx, info, files)`: the running Job's bookmark hooks
  (`awsglue.job.current_job()` with `select_new` / `register_source`).
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


def select_and_register(transformation_ctx: str, info: dict, files: list) -> list:
    """The bookmark hooks of a source with a transformation_ctx (runtime helper's Job):
    `Job.select_new(ctx, files)` narrows the listing [(uri, size, mtime_ms)] to what this run
    reads (bookmarks: only what is new), then `Job.register_source(ctx, info)` records what was
    read. Without a transformation_ctx or a running Job, every file is read and nothing is
    recorded (as in Glue)."""
    if not transformation_ctx:
        return list(files)
    try:
        from . import job as _job
    except ImportError:
        return list(files)
    current = getattr(_job, "current_job", None)
    job = current() if callable(current) else None
    if job is None:
        return list(files)
    select = getattr(job, "select_new", None)
    chosen = list(select(transformation_ctx, list(files))) if callable(select) else list(files)
    record = dict(info)
    record["files"] = [[u, int(s), int(m)] for u, s, m in chosen]
    register = getattr(job, "register_source", None)
    if callable(register):
        register(transformation_ctx, record)
    return [(u, int(s), int(m)) for u, s, m in chosen]
