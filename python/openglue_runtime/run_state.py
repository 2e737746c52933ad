"""What the machinery knows of the running job: the Job a script init()ed, and the bookmark
hooks the sources call through it.

- `set_current_job(job)` / `current_job()`: `awsglue.job.Job.init()` registers itself here, so a
  source (an S3 or catalog listing, a JDBC query) finds the running Job without importing the
  façade. None until a script's Job is initialised (a script without Job, a unit test).
- `select_and_register(transformation_ctx, info, files)`: the running Job's bookmark hooks
  (`select_new` / `register_source`); `bookmark_options` picks a source's bookmark options out of
  its connection/additional options.
- `spark_unavailable(what)`: the error a script on the embedded engine gets when it uses Spark's
  own API (`SparkApiUnavailable`).
"""
import threading
from typing import Any, Optional

from openglue_runtime.engines.embedded.spark_api import SparkApiUnavailable  # noqa: F401

_lock = threading.Lock()
_current: Optional[Any] = None


def set_current_job(job: Optional[Any]) -> None:
    """Makes `job` (an awsglue.job.Job, or None) the process's running Job."""
    global _current
    with _lock:
        _current = job


def current_job() -> Optional[Any]:
    """The Job whose init() was called last in this process, or None (a script without Job)."""
    with _lock:
        return _current


def spark_unavailable(what: str) -> BaseException:
    return SparkApiUnavailable(what)


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
    job = current_job()
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
