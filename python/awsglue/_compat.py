"""Hooks into modules owned by the `runtime` helper, guarded until they are merged.

- `SparkApiUnavailable`: the error raised when a script on the embedded engine uses Spark's own
  API (from `awsglue.spark_api` when present).
- `select_and_register(transformation_ctx, info, files)`: the running Job's bookmark hooks
  (`awsglue.job.current_job()` with `select_new` / `register_source`); `bookmark_options`
  picks a source's bookmark options out of its connection/additional options.
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
    """The bookmark hooks of a storage source: `Job.select_new(ctx, files, info)` narrows the
    listing [(uri, size, mtime_ms)] to what this run reads (with bookmarks: only what is new),
    then `Job.register_source(ctx, info + files read)` records it. `info` carries what the
    source is (type, paths, format; database and table for from_catalog) and the options that
    steer the selection as Glue spells them (maxBand, maxFilesInBand, boundedFiles, boundedSize;
    recurse and exclusions, which `openglue bookmarks plan` needs to list again); None values
    are dropped. Without a transformation_ctx or a running Job, every file is read and nothing
    is recorded (as in Glue)."""
    if not transformation_ctx:
        return list(files)
    from . import job as _job
    job = _job.current_job()
    if job is None:
        return list(files)
    record = {k: v for k, v in dict(info).items() if v is not None}
    chosen = list(job.select_new(transformation_ctx, list(files), record))
    record["files"] = [[u, int(s), int(m)] for u, s, m in chosen]
    job.register_source(transformation_ctx, record)
    return [(u, int(s), int(m)) for u, s, m in chosen]


def bookmark_options(options: dict) -> dict:
    """The entries of a source's options (connection_options / additional_options) that the
    bookmark selection and `openglue bookmarks plan` use, as Glue spells them."""
    keys = ("maxBand", "maxFilesInBand", "boundedFiles", "boundedSize", "recurse", "exclusions")
    return {k: options[k] for k in keys if options.get(k) is not None}
