"""The Job object of a Glue script: init() at the start, commit() at the end.

    job = Job(glueContext)
    job.init(args["JOB_NAME"], args)
    ...
    job.commit()

In AWS Glue, commit() is what advances job bookmarks. OpenGlue's bookmarks (issue 9) sit on the
hooks here: every source read with a `transformation_ctx` asks the running job which of its
inputs are new (`Job.select_new`) and reports what it read (`Job.register_source`); commit()
hands the recorded sources over. Until the server keeps bookmark state, commit() records the
run's sources in the run's working folder (`openglue-job.json`) and in the run's log, and every
input counts as new (Glue's default, `job-bookmark-disable`).

The sources' hooks find the job through `current_job()`: the Job that init() was last called on
in this process (Glue scripts have one).
"""
import copy
import json
import os
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from awsglue.utils import (BOOKMARK_CHOICES, BOOKMARK_DISABLE, BOOKMARK_FROM, BOOKMARK_OPTION,
                           BOOKMARK_PAUSE, BOOKMARK_TO, GlueArgumentError)

# The file commit() writes in the run's working folder (a job run's current directory).
STATE_FILE = "openglue-job.json"

_lock = threading.Lock()
_current: Optional["Job"] = None


def current_job() -> Optional["Job"]:
    """The Job whose init() was called last in this process, or None (a script without Job)."""
    with _lock:
        return _current


def _in_job_run() -> bool:
    """Whether this process is a job run started by an OpenGlue server (not a unit test)."""
    return bool(os.environ.get("OPENGLUE_JOB_RUN_ID"))


class Job:
    """A job run as seen from its script."""

    def __init__(self, glue_context=None):
        self._context = glue_context
        self.name: Optional[str] = None
        self.args: Dict[str, str] = {}
        self.committed = False
        self._sources: Dict[str, Dict[str, Any]] = {}
        self._source_lock = threading.Lock()
        self._started_ms: Optional[int] = None

    # -- Glue's API ------------------------------------------------------------------------------

    def init(self, job_name: str, args: Optional[Dict[str, str]] = None) -> None:
        """Starts the job's work: `job_name` is the job (args["JOB_NAME"]), `args` the resolved
        arguments. Validates the bookmark options found in `args` (GlueArgumentError)."""
        global _current
        if not job_name:
            raise ValueError("Job.init() needs the job's name (args['JOB_NAME'])")
        args = dict(args or {})
        option = args.get(BOOKMARK_OPTION, BOOKMARK_DISABLE)
        if option not in BOOKMARK_CHOICES:
            raise GlueArgumentError(
                f"argument --{BOOKMARK_OPTION}: invalid choice: '{option}'")
        if (BOOKMARK_FROM in args or BOOKMARK_TO in args) and option != BOOKMARK_PAUSE:
            raise GlueArgumentError(
                f"--{BOOKMARK_FROM} and --{BOOKMARK_TO} can only be used with "
                f"--{BOOKMARK_OPTION} {BOOKMARK_PAUSE}")
        self.name = str(job_name)
        self.args = args
        self.committed = False
        self._started_ms = int(time.time() * 1000)
        with _lock:
            _current = self

    def commit(self) -> None:
        """Marks the successful end of the script's work. Records the sources read on the run
        (see the module's docstring); issue 9's bookmarks advance here."""
        if self.name is None:
            raise RuntimeError("Job.commit() called before Job.init()")
        self.committed = True
        record = self._record()
        if _in_job_run():
            try:
                tmp = STATE_FILE + ".tmp"
                with open(tmp, "w", encoding="utf-8") as f:
                    json.dump(record, f, indent=1, sort_keys=True)
                os.replace(tmp, STATE_FILE)
            except OSError as e:
                print(f"[openglue] job.commit(): could not write {STATE_FILE}: {e}",
                      file=sys.stderr)
        summary = ", ".join(f"{ctx} ({_describe(info)})" for ctx, info in record["sources"].items())
        print(f"[openglue] job.commit(): job {self.name} run {record['run_id'] or '-'} committed"
              f" (bookmark option {record['bookmark_option']}); sources: {summary or 'none'}",
              flush=True)

    # -- bookmark hooks (OpenGlue) ---------------------------------------------------------------

    @property
    def bookmark_option(self) -> str:
        """The run's `--job-bookmark-option` (job-bookmark-disable when not given)."""
        return self.args.get(BOOKMARK_OPTION, BOOKMARK_DISABLE)

    def select_new(self, transformation_ctx: Optional[str],
                   files: Sequence[Tuple[str, int, int]]) -> List[Tuple[str, int, int]]:
        """The subset of `files` (uri, size, mtime_ms) a source with `transformation_ctx` should
        read in this run. Every file until bookmarks exist (issue 9 filters here when the option
        is enable or pause and the source has a transformation_ctx)."""
        return list(files)

    def register_source(self, transformation_ctx: Optional[str],
                        source_info: Dict[str, Any]) -> None:
        """Records what a source read in this run, for the bookmark commit.

        `source_info` is a JSON-able dict. For storage sources:
        `{"type": "s3", "paths": [...], "files": [[uri, size, mtime_ms], ...], "format": "csv"}`
        (from_catalog adds "database" and "table"); for JDBC sources (issue 9):
        `{"type": "jdbc", "table": .., "keys": [..], "sort_order": "asc", "low": [..],
        "high": [..], "rows": n}`. A source without a transformation_ctx takes no part in
        bookmarks (as in Glue) and is not recorded. Registering the same ctx again extends its
        record (the files are added, other keys replaced).
        """
        if not transformation_ctx:
            return
        info = copy.deepcopy(dict(source_info))
        with self._source_lock:
            previous = self._sources.get(transformation_ctx)
            if previous is not None and "files" in previous and "files" in info:
                known = {tuple(f) for f in previous["files"]}
                info["files"] = list(previous["files"]) + [
                    f for f in info["files"] if tuple(f) not in known]
            self._sources[transformation_ctx] = info

    def sources(self) -> Dict[str, Dict[str, Any]]:
        """What each transformation_ctx read in this run (a copy)."""
        with self._source_lock:
            return copy.deepcopy(self._sources)

    def _record(self) -> Dict[str, Any]:
        return {
            "job_name": self.name,
            "run_id": self.args.get("JOB_RUN_ID") or os.environ.get("OPENGLUE_JOB_RUN_ID", ""),
            "bookmark_option": self.bookmark_option,
            "started_ms": self._started_ms,
            "committed_ms": int(time.time() * 1000),
            "sources": self.sources(),
        }


def _describe(info: Dict[str, Any]) -> str:
    if "files" in info:
        files = info["files"]
        return f"{len(files)} objects, {sum(int(f[1]) for f in files)} bytes"
    if "rows" in info:
        return f"{info['rows']} rows"
    return info.get("type", "source")
